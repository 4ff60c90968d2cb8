package verify

import (
	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
)

// Info is what the validation use-cases check and how scripts run, read
// from the engine's own tables.
type Info struct {
	Validation    ValidationInfo    `json:"validation"`
	ScriptTesting ScriptTestingInfo `json:"script_testing"`
}

// ValidationInfo describes the alignment checks and the builder test.
type ValidationInfo struct {
	Levels               map[finding.Level]string    `json:"levels"`
	Categories           map[string]string           `json:"categories"`
	Rulesets             map[string]validate.Ruleset `json:"rulesets"` // per SageMaker step type
	ScriptRules          map[string]string           `json:"script_rules"`
	DependencyThresholds map[string]float64          `json:"dependency_thresholds"`
	BuilderTestWeights   map[string]float64          `json:"builder_test_weights"`
}

// ScriptTestingInfo describes RunScripts.
type ScriptTestingInfo struct {
	Runtime string `json:"runtime"`
	// Available is true, or why the interpreter cannot be used.
	Available     any                 `json:"available"`
	DefaultLimits map[string]int64    `json:"default_limits"`
	Isolation     map[string][]string `json:"isolation"`
	Entry         string              `json:"entry"`
}

// Describe reports the checks and the script runner's state.
func (s *Suite) Describe() Info {
	rulesets := map[string]validate.Ruleset{}
	for _, t := range steps.SageMakerStepTypes {
		rulesets[t] = validate.RulesetFor(t)
	}
	var available any = true
	if err := s.Runner.Available(); err != nil {
		available = err.Error()
	}
	lim := scriptrun.DefaultLimits()
	return Info{
		Validation: ValidationInfo{Levels: validate.LevelMeanings, Categories: validate.CategoryMeanings, Rulesets: rulesets,
			ScriptRules: validate.ScriptRuleLevels, DependencyThresholds: validate.DependencyThresholds(), BuilderTestWeights: BuilderWeights},
		ScriptTesting: ScriptTestingInfo{Runtime: s.Runner.Runtime(), Available: available,
			DefaultLimits: map[string]int64{"timeout_seconds": int64(lim.Timeout.Seconds()),
				"max_output_bytes": int64(lim.MaxOutputBytes), "max_input_bytes": lim.MaxInputBytes},
			Isolation: s.Runner.Isolation(), Entry: scriptrun.EntryConvention},
	}
}
