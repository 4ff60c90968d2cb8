package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
)

// prepInterface and goodScript are the toy step and the script that
// satisfies it exactly.
const (
	prepInterface = enginetest.ToyPrepInterface
	goodScript    = enginetest.ToyPrepScript
)

func mustInterface(t testing.TB, src string) *steps.Interface { return enginetest.Interface(t, src) }

func findRule(fs []Finding, rule string) (Finding, bool) {
	for _, f := range fs {
		if f.Rule == rule {
			return f, true
		}
	}
	return Finding{}, false
}

func TestCheckScriptCleanScriptHasNoBlockingFindings(t *testing.T) {
	iface := mustInterface(t, prepInterface)
	fs, a := checkSource(t, iface, "scripts/toy_preprocessing.py", goodScript)
	if a == nil {
		t.Fatal("no analysis")
	}
	if len(fs) != 0 {
		t.Errorf("clean script got findings: %+v", fs)
	}
}

// One test per rule: mutate the good script and expect exactly that rule
// at the right level and location.
func TestCheckScriptRules(t *testing.T) {
	iface := mustInterface(t, prepInterface)
	cases := []struct {
		name     string
		script   string
		rule     string
		level    finding.Level
		location string
	}{
		{"env var the contract lacks",
			strings.Replace(goodScript, `    out = output_paths`, "    debug = os.environ.get(\"DEBUG_MODE\")\n    out = output_paths", 1),
			"undeclared_env_var", finding.Warning, "scripts/toy_preprocessing.py:10"},
		{"output the script never writes",
			strings.Replace(goodScript, `    out = output_paths["processed_data"]`, `    out = None`, 1),
			"unwritten_output_path", finding.Error, "contract.outputs.processed_data"},
		{"syntax error",
			strings.Replace(goodScript, `    label = environ_vars["LABEL_FIELD"]`, `    label = environ_vars["LABEL_FIELD"`, 1),
			"script_syntax_error", finding.Critical, "scripts/toy_preprocessing.py:8"},
		{"no main",
			strings.Replace(strings.Replace(goodScript, "def main(", "def run(", 1), "    main(\n", "    run(\n", 1),
			"missing_main_function", finding.Critical, "scripts/toy_preprocessing.py"},
		{"wrong main signature",
			strings.Replace(goodScript, "def main(input_paths, output_paths, environ_vars, job_args):", "def main(input_paths, output_paths):", 1),
			"invalid_main_signature", finding.Error, "scripts/toy_preprocessing.py:5"},
		{"undeclared input",
			strings.Replace(goodScript, `    sig = input_paths.get("signature")`, "    sig = input_paths.get(\"signature\")\n    extra = input_paths[\"lookup_table\"]", 1),
			"undeclared_input_path", finding.Error, "scripts/toy_preprocessing.py:8"},
		{"undeclared output",
			strings.Replace(goodScript, `    out = output_paths["processed_data"]`, "    out = output_paths[\"processed_data\"]\n    rep = output_paths[\"report\"]", 1),
			"undeclared_output_path", finding.Error, "scripts/toy_preprocessing.py:11"},
		{"undeclared job arg",
			strings.Replace(goodScript, `{"job_type": job_args.job_type}`, `{"job_type": job_args.job_type, "seed": job_args.seed}`, 1),
			"undeclared_job_arg", finding.Warning, "scripts/toy_preprocessing.py:11"},
		{"declared flag not parsed",
			strings.Replace(goodScript, `parser.add_argument("--job_type", required=True)`, `parser.add_argument("--mode")`, 1),
			"unparsed_declared_arg", finding.Error, "contract.job_arguments[0]"},
		{"required env var never read",
			strings.Replace(goodScript, `    label = environ_vars["LABEL_FIELD"]`, `    label = "label"`, 1),
			"unread_required_env_var", finding.Error, "contract.env_vars.required"},
		{"required input never read",
			strings.Replace(goodScript, `    src = input_paths["input_data"]`, `    src = None`, 1),
			"unread_input_path", finding.Warning, "contract.inputs.input_data"},
		{"undeclared container path",
			strings.Replace(goodScript, `    out = output_paths`, "    cache = \"/opt/ml/processing/cache\"\n    out = output_paths", 1),
			"undeclared_container_path", finding.Warning, "scripts/toy_preprocessing.py:10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, _ := checkSource(t, iface, "scripts/toy_preprocessing.py", c.script)
			f, ok := findRule(fs, c.rule)
			if !ok {
				t.Fatalf("rule %s not reported; got %+v", c.rule, fs)
			}
			if f.Level != c.level || f.Location != c.location || f.Category != CatScriptContract || f.Fix == "" || f.Message == "" {
				t.Errorf("got %+v, want level %s at %s with a fix", f, c.level, c.location)
			}
			if c.rule != "script_syntax_error" && len(fs) != 1 {
				t.Errorf("expected only %s, got %+v", c.rule, fs)
			}
		})
	}
}

func TestDynamicArgparseDowngrades(t *testing.T) {
	iface := mustInterface(t, prepInterface)
	src := strings.Replace(goodScript, `parser.add_argument("--job_type", required=True)`, `parser.add_argument(FLAG_NAME)`, 1)
	fs, _ := checkSource(t, iface, "s.py", src)
	f, ok := findRule(fs, "unparsed_declared_arg")
	if !ok || f.Level != finding.Warning {
		t.Errorf("want warning-level unparsed_declared_arg, got %+v", fs)
	}
}

func TestNonProcessingSkipsReverseArgCheck(t *testing.T) {
	iface := mustInterface(t, strings.Replace(prepInterface, "sagemaker_step_type: Processing", "sagemaker_step_type: Training", 1))
	src := strings.Replace(goodScript, `parser.add_argument("--job_type", required=True)`, `parser.add_argument("--mode")`, 1)
	fs, _ := checkSource(t, iface, "s.py", src)
	if _, ok := findRule(fs, "unparsed_declared_arg"); ok {
		t.Errorf("Training step got the Processing-only argparse check: %+v", fs)
	}
	if f, ok := findRule(fs, "reverse_arg_check_skipped_non_processing"); !ok || f.Level != finding.Info {
		t.Errorf("want the info finding, got %+v", fs)
	}
}

func TestCheckStepRulesets(t *testing.T) {
	iface := mustInterface(t, prepInterface)
	source := mustInterface(t, `
step_type: ToySource
node_type: source
registry: {sagemaker_step_type: Processing, description: src}
compute: {kind: sklearn, framework_version_field: framework_version}
contract:
  entry_point: toy_source.py
  outputs:
    data_output: {path: /opt/ml/processing/output/data}
spec:
  outputs:
    data_output:
      type: processing_output
      property_path: "properties.ProcessingOutputConfig.Outputs['data_output'].S3Output.S3Uri"
      aliases: [input_data]
`)
	score := func(dep steps.Dependency, depName string, out steps.Output, outName, provider string) float64 {
		for _, s := range dep.CompatibleSources {
			if s == provider {
				return 0.9
			}
		}
		return 0.1
	}
	fields := map[string]any{"framework_version": "1.2-1", "job_type": "training", "label_field": nil, "processing_entry_point": "toy_preprocessing.py"}
	rep := checkStep(t, StepCheck{Interface: iface, ScriptFile: "s.py", Script: []byte(goodScript), ConfigFields: fields,
		Providers: []*steps.Interface{iface, source}, Score: score})
	if rep.Status != StatusPassed || rep.Ruleset.Name != "script_based" {
		t.Fatalf("report = %+v", rep)
	}

	// Config ↔ contract: a compute field the config lacks, a job arg
	// source the config lacks, an entry point that disagrees.
	bad := map[string]any{"processing_entry_point": "other.py"}
	rep = checkStep(t, StepCheck{Interface: iface, ScriptFile: "s.py", Script: []byte(goodScript), ConfigFields: bad})
	for rule, level := range map[string]finding.Level{"config_field_missing": finding.Error, "job_argument_source_missing": finding.Warning,
		"entry_point_mismatch": finding.Warning, "env_var_unsourced": finding.Info, "dependency_check_skipped": finding.Info} {
		if f, ok := findRule(rep.Findings, rule); !ok || f.Level != level {
			t.Errorf("rule %s: got %+v (ok=%v), want level %s", rule, f, ok, level)
		}
	}
	if rep.Status != StatusFailed {
		t.Errorf("status = %s, want FAILED", rep.Status)
	}

	// A required dependency nothing provides.
	lonely := func(steps.Dependency, string, steps.Output, string, string) float64 { return 0.1 }
	rep = checkStep(t, StepCheck{Interface: iface, ConfigFields: fields, Providers: []*steps.Interface{source}, Score: lonely})
	if f, ok := findRule(rep.Findings, "dependency_resolution"); !ok || f.Level != finding.Error || f.Location != "spec.dependencies.input_data" {
		t.Errorf("want error dependency_resolution on input_data, got %+v", rep.Findings)
	}
	if f, ok := findRule(rep.Findings, "script_not_found"); !ok || f.Level != finding.Info {
		t.Errorf("missing script should be an info finding, got %+v", rep.Findings)
	}

	// Amazon-internal kinds are unsupported with the replacement named.
	cradle := mustInterface(t, `
step_type: CradleDataLoading
node_type: source
registry: {sagemaker_step_type: CradleDataLoading, description: internal, requires: secure_ai_sandbox_workflow_python_sdk}
contract: {entry_point: null}
spec:
  outputs:
    DATA: {type: processing_output, property_path: properties.DATA}
`)
	rep = checkStep(t, StepCheck{Interface: cradle, Replacement: func(string) (string, bool) { return "DummyDataLoading", true }})
	if f, ok := findRule(rep.Findings, "unsupported_step_type"); !ok || !strings.Contains(f.Fix, "DummyDataLoading") {
		t.Errorf("want unsupported_step_type naming the replacement, got %+v", rep.Findings)
	}
	if RulesetFor(steps.SMBase).Excluded != true || checkStep(t, StepCheck{Interface: &steps.Interface{StepType: "B", Registry: steps.Registry{SageMakerStepType: "Base"}}}).Status != StatusExcluded {
		t.Errorf("Base should be excluded")
	}
}

func checkSource(t *testing.T, iface *steps.Interface, file, src string) ([]Finding, *ScriptAnalysis) {
	t.Helper()
	fs, a, err := CheckScriptSource(context.Background(), iface, file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return fs, a
}

func checkStep(t *testing.T, c StepCheck) StepReport {
	t.Helper()
	r, err := CheckStep(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestScriptRuleLevelsDescribeTheRules: validate.info's list of script
// rules names exactly the rules the checks emit (the table's, and the two
// of a source that does not analyse).
func TestScriptRuleLevelsDescribeTheRules(t *testing.T) {
	emitted := map[string]bool{"script_syntax_error": true, "script_unreadable": true}
	for _, r := range scriptRules {
		for _, rule := range r.rules {
			emitted[rule] = true
		}
	}
	for rule := range emitted {
		if _, ok := ScriptRuleLevels[rule]; !ok {
			t.Errorf("rule %s is emitted but ScriptRuleLevels does not describe it", rule)
		}
	}
	for rule := range ScriptRuleLevels {
		if !emitted[rule] {
			t.Errorf("ScriptRuleLevels describes %s, which no check emits", rule)
		}
	}
}
