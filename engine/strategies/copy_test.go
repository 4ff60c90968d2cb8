package strategies

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
)

// For every built-in step, what steps.patterns reports — the compute axis,
// the step assembly and the output knobs — passes the validator when
// copied into a new step file.
func TestPatternsCopiedIntoANewStepValidate(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	l := Default()
	for _, name := range cat.Names() {
		iface, _ := cat.Get(name)
		v := l.Describe(iface)
		data, err := os.ReadFile("../steps/catalog/" + strings.TrimPrefix(iface.Source, steps.BuiltinPrefix))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		section := func(key string) map[string]any {
			m, _ := doc[key].(map[string]any)
			if m == nil {
				m = map[string]any{}
				doc[key] = m
			}
			return m
		}
		doc["step_type"] = "CopiedStep"
		if c := v.Patterns.Compute; iface.Compute != nil {
			compute := section("compute")
			compute["kind"], compute["sdk_class"], compute["framework_version_field"] = c.Kind, c.SDKClass, c.FrameworkVersionField
			compute["lock_training_region"], compute["requires"] = c.LockTrainingRegion, c.Requires
			for k, val := range compute {
				if val == "" {
					delete(compute, k) // an unset field reads back as ""
				}
			}
		}
		patterns := section("patterns")
		if a := v.Patterns.CreateStep.StepAssembly; a != "" {
			patterns["step_assembly"] = a
		}
		patterns["include_job_type_in_path"] = v.Patterns.Outputs.IncludeJobTypeInPath
		if tok := v.Patterns.Outputs.OutputPathToken; tok != "" && !v.Patterns.Outputs.Sink {
			section("contract")["output_path_token"] = tok
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		copied, err := steps.Parse("copied_step.step.yaml", out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range steps.Validate(copied) {
			if f.Level == finding.Error {
				t.Errorf("%s: patterns copied into a new step: %s: [%s] %s", name, f.Path, f.Rule, f.Message)
			}
		}
	}
}
