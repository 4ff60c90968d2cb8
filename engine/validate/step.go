package validate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
)

// ScoreFunc scores how well a provider output satisfies a dependency, in
// [0, 1] with 0.5 the wiring threshold; engine/deps.Score supplies it. Kept as a function so
// this package does not depend on the resolver's internals.
type ScoreFunc func(dep steps.Dependency, depName string, out steps.Output, outName, providerStepType string) float64

// Dependency thresholds (the reference's RELAXED level, its default).
const (
	scorePass       = 0.6
	scoreWarn       = 0.4
	scoreResolution = 0.5 // min(0.5, pass): what the resolver accepts
)

// StepCheck is everything alignment needs to know about one step.
type StepCheck struct {
	Interface *steps.Interface
	// ScriptFile names the script (a workspace-relative path); Script is
	// its source. Both empty when no script was found.
	ScriptFile string
	Script     []byte
	// ScriptSearched lists where the script was looked for.
	ScriptSearched []string
	// ConfigFields maps each config field of the step to its default
	// (nil when none). A nil map means the schema is unknown and the
	// config checks are skipped.
	ConfigFields map[string]any
	// Providers are the step types whose outputs may feed this step (the
	// catalog); the step itself is skipped. Nil skips the dependency check.
	Providers []*steps.Interface
	Score     ScoreFunc
	// Replacement names the public step to use instead of an
	// Amazon-internal kind (steps.InternalReplacement).
	Replacement func(stepType string) (string, bool)
}

// StepReport is the alignment result of one step.
type StepReport struct {
	StepName          string         `json:"step_name"`
	SageMakerStepType string         `json:"sagemaker_step_type"`
	JobType           string         `json:"job_type,omitempty"`
	Ruleset           Ruleset        `json:"ruleset"`
	Script            string         `json:"script,omitempty"`
	Status            string         `json:"status"` // PASSED | FAILED | EXCLUDED
	Counts            map[string]int `json:"counts"`
	Findings          []Finding      `json:"findings"`
	// Analysis is the script analysis when a script was analysed.
	Analysis *ScriptAnalysis `json:"-"`
}

// Report statuses.
const (
	StatusPassed   = "PASSED"
	StatusFailed   = "FAILED"
	StatusExcluded = "EXCLUDED"
)

// CheckStep runs every check of the step's ruleset. The error is ctx's,
// when it ends before the script is analysed.
func CheckStep(ctx context.Context, c StepCheck) (StepReport, error) {
	iface := c.Interface
	rs := RulesetFor(iface.Registry.SageMakerStepType)
	r := StepReport{StepName: iface.StepType, SageMakerStepType: iface.Registry.SageMakerStepType, JobType: iface.JobType,
		Ruleset: rs, Script: c.ScriptFile, Findings: []Finding{}, Counts: map[string]int{}}
	if rs.Excluded {
		r.Status = StatusExcluded
		return r, nil
	}
	for _, cat := range rs.Categories {
		switch cat {
		case CatScriptContract:
			fs, err := c.scriptFindings(ctx, &r)
			if err != nil {
				return StepReport{}, err
			}
			r.Findings = append(r.Findings, fs...)
		case CatConfigContract:
			r.Findings = append(r.Findings, c.configFindings()...)
		case CatSpecDependency:
			r.Findings = append(r.Findings, c.dependencyFindings()...)
		case CatBuilderConfig:
			r.Findings = append(r.Findings, c.builderFindings()...)
		}
	}
	SortFindings(r.Findings)
	r.Status = StatusPassed
	for _, f := range r.Findings {
		r.Counts[string(f.Level)]++
		if f.Blocking() {
			r.Status = StatusFailed
		}
	}
	return r, nil
}

func (c StepCheck) scriptFindings(ctx context.Context, r *StepReport) ([]Finding, error) {
	iface := c.Interface
	if iface.Registry.Requires == sdkDelegated {
		return []Finding{{Level: finding.Info, Rule: "script_check_skipped", Category: CatScriptContract, Location: "registry.requires",
			Message: "the step's script lives in an external SDK; there is nothing to check", Fix: "none needed"}}, nil
	}
	if iface.Contract.EntryPoint == "" && c.ScriptFile == "" {
		return []Finding{{Level: finding.Info, Rule: "script_check_skipped", Category: CatScriptContract, Location: "contract.entry_point",
			Message: "the contract names no entry point", Fix: "none needed"}}, nil
	}
	if c.ScriptFile == "" {
		where := ""
		if len(c.ScriptSearched) > 0 {
			where = " (looked in " + strings.Join(c.ScriptSearched, ", ") + ")"
		}
		return []Finding{{Level: finding.Info, Rule: "script_not_found", Category: CatScriptContract, Location: "contract.entry_point",
			Message: fmt.Sprintf("script %s was not found%s; script checks skipped", iface.Contract.EntryPoint, where),
			Fix:     "pass the script path (script_path) or the directory holding it (source_dir)"}}, nil
	}
	fs, a, err := CheckScriptSource(ctx, iface, c.ScriptFile, c.Script)
	r.Analysis = a
	return fs, err
}

func (c StepCheck) configFindings() []Finding {
	iface := c.Interface
	if c.ConfigFields == nil {
		return []Finding{{Level: finding.Info, Rule: "config_check_skipped", Category: CatConfigContract, Location: "config",
			Message: "no config schema is known for this step; config checks skipped", Fix: "load the step through the catalog so its config schema is known"}}
	}
	var out []Finding
	has := func(f string) bool { _, ok := c.ConfigFields[f]; return ok }
	optional := map[string]bool{}
	for _, k := range iface.Contract.EnvVars.Optional.Keys() {
		optional[k] = true
	}
	for _, n := range iface.Contract.EnvVars.Required {
		if has(strings.ToLower(n)) || has("hyperparameters") {
			continue
		}
		out = append(out, Finding{Level: finding.Info, Rule: "env_var_unsourced", Category: CatConfigContract, Location: "contract.env_vars.required",
			Message: fmt.Sprintf("required environment variable %s has no config field %s to take its value from", n, strings.ToLower(n)),
			Fix:     fmt.Sprintf("declare config field %s, or set it through the config's env overrides", strings.ToLower(n))})
	}
	ep := iface.Contract.EntryPoint
	for _, field := range []string{"processing_entry_point", "training_entry_point"} {
		def, ok := c.ConfigFields[field]
		if !ok || ep == "" {
			continue
		}
		if s, isStr := def.(string); isStr && s != "" && s != ep {
			out = append(out, Finding{Level: finding.Warning, Rule: "entry_point_mismatch", Category: CatConfigContract, Location: "config.fields." + field,
				Message: fmt.Sprintf("config %s defaults to %q but contract.entry_point is %q; the compiled step runs the config's script", field, s, ep),
				Fix:     fmt.Sprintf("make config.fields.%s default to %q", field, ep)})
		}
	}
	return out
}

func (c StepCheck) builderFindings() []Finding {
	iface := c.Interface
	sm := iface.Registry.SageMakerStepType
	var out []Finding
	switch sm {
	case steps.SMCradleDataLoading, steps.SMRedshiftDataLoading, steps.SMMimsModelRegistrationProcessing:
		out = append(out, c.unsupported("registry.sagemaker_step_type", sm+" is an Amazon-internal step kind and is not compiled"))
		return out
	case steps.SMBase, steps.SMLambda, steps.SMUtility:
		return []Finding{{Level: finding.Info, Rule: "builder_check_skipped", Category: CatBuilderConfig, Location: "registry.sagemaker_step_type",
			Message: sm + " steps bind no builder", Fix: "none needed"}}
	}
	if iface.Registry.Requires == sdkDelegated {
		out = append(out, c.unsupported("registry.requires", "the step is built by an Amazon-internal SDK and is not compiled"))
		return out
	}
	if iface.Patterns.StepAssembly == "delegation" {
		out = append(out, Finding{Level: finding.Error, Rule: "handler_unbound", Category: CatBuilderConfig, Location: "patterns.step_assembly",
			Message: "step_assembly delegation hands the step to an external SDK; no builder binds it",
			Fix:     "use step_assembly code or step_args"})
	}
	// A RegisterModel step only records a model package: it runs nothing,
	// so it needs no compute section.
	if sm != steps.SMRegisterModel && (iface.Compute == nil || iface.Compute.Kind == "") {
		out = append(out, Finding{Level: finding.Error, Rule: "missing_compute", Category: CatBuilderConfig, Location: "compute.kind",
			Message: sm + " steps need a compute section naming how SageMaker runs them",
			Fix:     "add compute.kind (sklearn, xgboost, framework, script, estimator, model, transformer or byo_container)"})
	}
	if c.ConfigFields == nil {
		return out
	}
	has := func(f string) bool { _, ok := c.ConfigFields[f]; return ok }
	if cp := iface.Compute; cp != nil {
		for _, ref := range []struct{ key, field string }{
			{"framework_version_field", cp.FrameworkVersionField}, {"py_version_field", cp.PyVersionField},
			{"image_uri_field", cp.ImageURIField}, {"subnets_field", cp.SubnetsField},
			{"security_group_ids_field", cp.SecurityGroupIDsField}, {"enable_network_isolation_field", cp.EnableNetworkIsolationField},
		} {
			if ref.field != "" && !has(ref.field) {
				out = append(out, Finding{Level: finding.Error, Rule: "config_field_missing", Category: CatBuilderConfig, Location: "compute." + ref.key,
					Message: fmt.Sprintf("compute.%s names config field %q, which the step's config does not have", ref.key, ref.field),
					Fix:     fmt.Sprintf("declare %s under config.fields, or point compute.%s at an existing field", ref.field, ref.key)})
			}
		}
	}
	for _, logical := range iface.Contract.InputSourceOverrides.Keys() {
		field, _ := iface.Contract.InputSourceOverrides.Get(logical)
		if !has(field) {
			out = append(out, Finding{Level: finding.Error, Rule: "config_field_missing", Category: CatBuilderConfig, Location: "contract.input_source_overrides." + logical,
				Message: fmt.Sprintf("input %q is taken from config field %q, which the step's config does not have", logical, field),
				Fix:     fmt.Sprintf("declare %s under config.fields", field)})
		}
	}
	for i, ja := range iface.Contract.JobArguments {
		if ja.Source != "" && !has(ja.Source) {
			out = append(out, Finding{Level: finding.Warning, Rule: "job_argument_source_missing", Category: CatBuilderConfig, Location: fmt.Sprintf("contract.job_arguments[%d].source", i),
				Message: fmt.Sprintf("flag %s takes its value from config field %q, which the step's config does not have", ja.Flag, ja.Source),
				Fix:     fmt.Sprintf("declare %s under config.fields, or change the source", ja.Source)})
		}
	}
	return out
}

func (c StepCheck) unsupported(loc, why string) Finding {
	fix := "use a public step type instead"
	if c.Replacement != nil {
		if rep, ok := c.Replacement(c.Interface.StepType); ok {
			fix = "use " + rep + " instead"
		}
	}
	return Finding{Level: finding.Error, Rule: "unsupported_step_type", Category: CatBuilderConfig, Location: loc, Message: why, Fix: fix}
}

func (c StepCheck) dependencyFindings() []Finding {
	iface := c.Interface
	if c.Providers == nil || c.Score == nil {
		return []Finding{{Level: finding.Info, Rule: "dependency_check_skipped", Category: CatSpecDependency, Location: "spec.dependencies",
			Message: "no catalog was given to score dependencies against", Fix: "none needed"}}
	}
	known := map[string]bool{}
	lower := map[string]string{}
	for _, p := range c.Providers {
		known[p.StepType] = true
		lower[strings.ToLower(p.StepType)] = p.StepType
	}
	var out []Finding
	for _, depName := range iface.Spec.Dependencies.Keys() {
		dep, _ := iface.Spec.Dependencies.Get(depName)
		loc := "spec.dependencies." + depName
		for _, src := range dep.CompatibleSources {
			if known[src] {
				continue
			}
			if alias, ok := steps.LegacyAlias(src); ok && known[alias] {
				continue
			}
			if exact, ok := lower[strings.ToLower(src)]; ok {
				out = append(out, Finding{Level: finding.Warning, Rule: "compatible_source_case", Category: CatSpecDependency, Location: loc + ".compatible_sources",
					Message: fmt.Sprintf("%q looks like a case typo of %q; compatible sources are matched exactly", src, exact),
					Fix:     fmt.Sprintf("write %q", exact)})
			}
		}
		type cand struct {
			from  string
			score float64
		}
		var cands []cand
		for _, p := range c.Providers {
			if p.StepType == iface.StepType {
				continue
			}
			for _, outName := range p.Spec.Outputs.Keys() {
				o, _ := p.Spec.Outputs.Get(outName)
				if s := c.Score(dep, depName, o, outName, p.StepType); s > 0 {
					cands = append(cands, cand{p.StepType + "." + outName, s})
				}
			}
		}
		sort.SliceStable(cands, func(a, b int) bool {
			if cands[a].score != cands[b].score {
				return cands[a].score > cands[b].score
			}
			return cands[a].from < cands[b].from
		})
		best := 0.0
		if len(cands) > 0 {
			best = cands[0].score
		}
		alts := []string{}
		for i := 0; i < len(cands) && i < 3; i++ {
			alts = append(alts, fmt.Sprintf("%s (%.3f)", cands[i].from, cands[i].score))
		}
		switch {
		case best >= scorePass:
			continue
		case best >= scoreResolution:
			out = append(out, Finding{Level: finding.Info, Rule: "dependency_compatibility", Category: CatSpecDependency, Location: loc,
				Message: fmt.Sprintf("best provider %s resolves but scores below %.1f", alts[0], scorePass),
				Fix:     "add the provider to compatible_sources or share semantic keywords / an alias"})
		case !dep.IsRequired():
			out = append(out, Finding{Level: finding.Info, Rule: "dependency_resolution", Category: CatSpecDependency, Location: loc,
				Message: fmt.Sprintf("optional dependency %q has no provider scoring ≥ %.1f (best: %s)", depName, scoreResolution, strings.Join(alts, ", ")),
				Fix:     "none needed unless the input should be wired automatically"})
		case best >= scoreWarn:
			out = append(out, Finding{Level: finding.Warning, Rule: "dependency_compatibility", Category: CatSpecDependency, Location: loc,
				Message: fmt.Sprintf("required dependency %q only matches below the resolution threshold %.1f: %s", depName, scoreResolution, strings.Join(alts, ", ")),
				Fix:     "list the intended provider in compatible_sources and align the type / semantic keywords"})
		default:
			msg := fmt.Sprintf("required dependency %q (type %s) has no provider in the catalog", depName, orDefault(dep.Type, steps.TypeProcessingOutput))
			if len(alts) > 0 {
				msg += "; closest: " + strings.Join(alts, ", ")
			}
			out = append(out, Finding{Level: finding.Error, Rule: "dependency_resolution", Category: CatSpecDependency, Location: loc, Message: msg,
				Fix: "add a step whose spec output matches this dependency's type, or fix compatible_sources"})
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
