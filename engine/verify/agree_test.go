package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// preflightCovers fails t unless every finding validate.alignment reports
// for step is among author.preflight_step's, and returns the alignment
// findings' rules.
func preflightCovers(t *testing.T, s *Suite, step string, search ScriptSearch) map[string]bool {
	t.Helper()
	ctx := context.Background()
	al, err := s.Alignment(ctx, []string{step}, search, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := s.Preflight(ctx, PreflightRequest{StepName: step, Search: search})
	if err != nil {
		t.Fatal(err)
	}
	have := map[validate.Finding]bool{}
	for _, g := range pre.Gates {
		for _, f := range g.Findings {
			have[f] = true
		}
	}
	rules := map[string]bool{}
	for _, r := range al.Results {
		for _, f := range r.Findings {
			rules[f.Rule] = true
			if !have[f] {
				t.Errorf("%s: validate.alignment reports %s [%s] %s: %s; author.preflight_step does not", step, f.Level, f.Rule, f.Location, f.Message)
			}
		}
		if failed := r.Status == validate.StatusFailed; failed == pre.Constructible {
			t.Errorf("%s: alignment status %s but preflight constructible=%t", step, r.Status, pre.Constructible)
		}
	}
	return rules
}

// author.preflight_step reports every finding validate.alignment does, on
// every built-in step, with and without the example project's scripts.
func TestPreflightCoversAlignmentOnBuiltinSteps(t *testing.T) {
	c, sc := fixtures(t)
	root, err := workspace.New("../../examples/xgboost-tabular")
	if err != nil {
		t.Fatal(err)
	}
	s := &Suite{Steps: c, Config: sc, Root: root}
	for _, search := range []ScriptSearch{{SourceDir: "scripts"}, {SourceDir: "data"}} {
		for _, n := range c.Names() {
			preflightCovers(t, s, n, search)
		}
	}
}

// probeStep is a Processing step whose script (probeScript) passes every
// alignment check; each case below breaks one.
const probeStep = `step_type: ProbeStep
node_type: internal
registry:
  sagemaker_step_type: Processing
  description: a step for the alignment agreement test
compute:
  kind: sklearn
  framework_version_field: processing_framework_version
patterns:
  step_assembly: code
contract:
  entry_point: probe_step.py
  inputs:
    input_data: {path: /opt/ml/processing/input/data, required: true}
  outputs:
    processed_data: {path: /opt/ml/processing/output}
  env_vars:
    required: [LABEL_FIELD]
  job_arguments:
    - {flag: --job_type, source: job_type}
spec:
  dependencies:
    input_data:
      type: processing_output
      required: true
      compatible_sources: [DummyDataLoading]
      semantic_keywords: [data, input, raw, dataset, source, tabular]
  outputs:
    processed_data:
      type: processing_output
      property_path: "properties.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"
config:
  extends: processing
  fields:
    label_field: {type: string, tier: essential, description: the label column}
    job_type: {type: string, tier: essential, description: the job type}
`

const probeScript = `import argparse


def main(input_paths, output_paths, environ_vars, job_args):
    data = input_paths["input_data"]
    out = output_paths["processed_data"]
    label = environ_vars["LABEL_FIELD"]
    return data, out, label, job_args.job_type


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type")
    main({}, {}, {}, parser.parse_args())
`

// author.preflight_step reports every finding validate.alignment does on a
// step with each problem the alignment checks report, one step file per
// problem kind.
func TestPreflightCoversAlignmentProblems(t *testing.T) {
	replace := func(old, new string) func(string) string {
		return func(s string) string { return strings.Replace(s, old, new, 1) }
	}
	keep := func(s string) string { return s }
	cases := []struct {
		rule         string
		step, script func(string) string
	}{
		{"job_argument_source_missing", replace("source: job_type}", "source: no_such_field}"), keep},
		{"config_field_missing", replace("framework_version_field: processing_framework_version", "framework_version_field: no_such_field"), keep},
		{"missing_compute", replace("compute:\n  kind: sklearn\n  framework_version_field: processing_framework_version\n", ""), keep},
		{"handler_unbound", replace("step_assembly: code", "step_assembly: delegation"), keep},
		{"unsupported_step_type", replace("  description: a step", "  requires: secure_ai_sandbox_workflow_python_sdk\n  description: a step"), keep},
		{"compatible_source_case", replace("[DummyDataLoading]", "[DummyDataLoading, tabularPreprocessing]"), keep},
		{"dependency_resolution", replace("type: processing_output\n      required: true\n      compatible_sources: [DummyDataLoading]\n      semantic_keywords: [data, input, raw, dataset, source, tabular]",
			"type: hyperparameters\n      required: true\n      compatible_sources: []\n      semantic_keywords: [zzz]"), keep},
		{"env_var_unsourced", replace("label_field: {type: string, tier: essential, description: the label column}\n", ""), keep},
		{"script_not_found", replace("entry_point: probe_step.py", "entry_point: elsewhere.py"), keep},
		{"script_syntax_error", keep, replace("def main(", "def main((")},
		{"missing_main_function", keep, replace("def main(", "def other(")},
		{"invalid_main_signature", keep, replace("environ_vars, job_args):", "environ_vars):")},
		{"undeclared_input_path", keep, replace(`input_paths["input_data"]`, `input_paths["other_input"]`)},
		{"undeclared_output_path", keep, replace(`output_paths["processed_data"]`, `output_paths["processed_data"], output_paths["other_output"]`)},
		{"unwritten_output_path", keep, replace(`out = output_paths["processed_data"]`, `out = None`)},
		{"unread_input_path", keep, replace(`data = input_paths["input_data"]`, `data = None`)},
		{"undeclared_env_var", keep, replace(`label = environ_vars["LABEL_FIELD"]`, `label = environ_vars["LABEL_FIELD"], environ_vars["OTHER_VAR"]`)},
		{"unread_required_env_var", keep, replace(`label = environ_vars["LABEL_FIELD"]`, `label = None`)},
		{"undeclared_job_arg", keep, replace("job_args.job_type", "job_args.job_type, job_args.other_flag")},
		{"unparsed_declared_arg", keep, replace(`    parser.add_argument("--job_type")`+"\n", "")},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			dir := t.TempDir()
			stepDir, scripts := filepath.Join(dir, "steps"), filepath.Join(dir, "scripts")
			for _, d := range []string{stepDir, scripts} {
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			write(t, filepath.Join(stepDir, "probe_step.step.yaml"), tc.step(probeStep))
			write(t, filepath.Join(scripts, "probe_step.py"), tc.script(probeScript))
			c, probs, err := steps.LoadCatalog(stepDir)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Get("ProbeStep"); !ok {
				t.Fatalf("the probe step did not load: %v", probs)
			}
			sc, err := config.LoadSchemas(c)
			if err != nil {
				t.Fatal(err)
			}
			root, err := workspace.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := &Suite{Steps: c, Config: sc, Root: root}
			if rules := preflightCovers(t, s, "ProbeStep", ScriptSearch{SourceDir: "scripts"}); !rules[tc.rule] {
				t.Errorf("the case does not provoke %s; alignment reported %v", tc.rule, rules)
			}
		})
	}
}

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
