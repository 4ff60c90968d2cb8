package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// An argument accepted only for Cursus scripts is accepted, and the answer
// says it was not used.
func TestCursusOnlyArgumentsWarn(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	for _, c := range []struct{ tool, args, arg string }{
		{"compile.validate", `{` + exampleArgs + `, "role": "SageMakerRole"}`, "role"},
		{"compile.preview", `{` + exampleArgs + `, "role": "SageMakerRole"}`, "role"},
		{"compile.with_report", `{` + exampleArgs + `, "role": "SageMakerRole"}`, "role"},
		{"compile.single_node", `{` + exampleArgs + `, "target_node": "XGBoostTraining", "manual_inputs": {"input_path": "s3://my-bucket/run/out/"}, "role": "SageMakerRole"}`, "role"},
		{"execdoc.generate", `{` + exampleArgs + `, "role": "SageMakerRole"}`, "role"},
		{"execdoc.generate", `{` + exampleArgs + `, "project_root": "/home/me/project"}`, "project_root"},
		{"execdoc.generate", `{` + exampleArgs + `, "anchor_file": "/home/me/project/x.py"}`, "anchor_file"},
		{"validate.builder", `{"step_name": "XGBoostTraining", "enable_scoring": false, "workspace_dirs": ["src"]}`, "workspace_dirs"},
		{"validate.deps_resolve", `{"step_names": ["TabularPreprocessing_training", "XGBoostTraining"], "workspace_dirs": ["src"]}`, "workspace_dirs"},
	} {
		res := call(t, reg, c.tool, c.args)
		if !res.OK {
			t.Errorf("%s with %s: %s", c.tool, c.arg, res.Encode())
			continue
		}
		if !hasWarning(res, "'"+c.arg+"' is accepted for Cursus compatibility and not used") {
			t.Errorf("%s: no warning that %s is unused: %v", c.tool, c.arg, res.Warnings)
		}
		// Without the argument there is no such warning.
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		delete(args, c.arg)
		plain, _ := json.Marshal(args)
		if res := call(t, reg, c.tool, string(plain)); hasWarning(res, "'"+c.arg+"'") {
			t.Errorf("%s without %s still warns: %v", c.tool, c.arg, res.Warnings)
		}
	}
}

func hasWarning(res *registry.Result, part string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// compile.validate answers a config.json with invalid values and a DAG
// with an Amazon-internal node with findings, not a failure: every
// problem of every node is reported, none hides another.
func TestCompileValidateReportsConfigProblemsAsFindings(t *testing.T) {
	reg, root := exampleRegistry(t, "")
	var cfg map[string]any
	readJSON(t, filepath.Join(root, "examples/xgboost-tabular/config.json"), &cfg)
	specific := cfg["configuration"].(map[string]any)["specific"].(map[string]any)
	specific["XGBoostTraining"].(map[string]any)["training_instance_count"] = "many"
	specific["Payload"].(map[string]any)["expected_tps"] = "lots"
	var dagDoc map[string]any
	readJSON(t, filepath.Join(root, "examples/xgboost-tabular/dag.json"), &dagDoc)
	inner := dagDoc["dag"].(map[string]any)
	inner["nodes"] = append(inner["nodes"].([]any), "CradleDataLoading_testing")
	args, _ := json.Marshal(map[string]any{"config": cfg, "dag": dagDoc})

	res := call(t, reg, "compile.validate", string(args))
	data := answer[compiler.ValidationResult](t, res)
	if data.IsValid {
		t.Fatalf("is_valid: %v", data.IsValid)
	}
	for node, want := range map[string]string{
		"XGBoostTraining":           "training_instance_count",
		"Payload":                   "expected_tps",
		"CradleDataLoading_testing": "DummyDataLoading",
	} {
		if list := data.ConfigErrors[node]; len(list) == 0 || !strings.Contains(list[0], want) {
			t.Errorf("config_errors[%s] = %v, want a finding naming %s", node, list, want)
		}
	}
	if got := data.UnresolvableBuilders; len(got) != 1 || !strings.HasPrefix(got[0], "CradleDataLoading_testing") {
		t.Errorf("unresolvable_builders: %v", got)
	}
	if got := data.MissingConfigs; len(got) != 0 {
		t.Errorf("a config with invalid values is not missing: %v", got)
	}
	// The same document still fails a compile, which must not use it.
	mustFail(t, call(t, reg, "compile.with_report", string(args)), registry.CodeConfigInvalid)
	// A document that is not a config.json is still refused.
	mustFail(t, call(t, reg, "compile.validate", `{"config": {"configuration": []}, "dag": {"nodes": ["XGBoostTraining"]}}`), registry.CodeInvalidInput)
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// edxUploading is a Cursus interface file (no config section) of an
// Amazon-internal step kind whose SageMaker type is public.
const edxUploading = `step_type: EdxUploading
node_type: sink
registry: {sagemaker_step_type: Processing, description: Upload model outputs to EDX}
compute: {kind: sklearn, framework_version_field: processing_framework_version}
contract:
  entry_point: edx_uploading.py
  inputs: {input_data: {path: /opt/ml/processing/input/data}}
spec:
  dependencies: {input_data: {type: processing_output, required: true}}
`

// catalog.list_builders agrees with compile: a step type compile refuses
// is not listed as implemented, and every step type listed as
// implemented builds in a minimal pipeline (the builder test compiles
// it with synthesized configs and wired providers).
func TestListBuildersAgreesWithCompile(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	withEdx := stepTypesArgs(t, []string{edxUploading}, nil)
	res := call(t, reg, "catalog.list_builders", withEdx)
	data := answer[listBuildersOut](t, res)
	implemented, sawEdx := 0, false
	for _, b := range data.Builders {
		name := b.StepName
		if name == "EdxUploading" {
			sawEdx = true
			if b.Implemented {
				t.Errorf("EdxUploading is listed as implemented: %+v", b)
			}
			continue
		}
		if !b.Implemented {
			continue
		}
		implemented++
		rep := answer[verify.BuilderReport](t, call(t, reg, "validate.builder", `{"step_name": "`+name+`", "enable_scoring": false}`))
		for _, c := range []string{"integration_testing", "step_creation"} {
			if comp := rep.Components[c]; comp == nil || comp.Status != "COMPLETED" {
				t.Errorf("%s is listed as implemented but its %s is %+v", name, c, comp)
			}
		}
	}
	if !sawEdx || implemented < 20 {
		t.Fatalf("EdxUploading listed: %v; implemented builders: %d", sawEdx, implemented)
	}
	if !hasWarning(res, "EdxUploading") {
		t.Errorf("no warning names EdxUploading: %v", res.Warnings)
	}
	// And compile does refuse it.
	v := answer[compiler.ValidationResult](t, call(t, reg, "compile.validate", stepTypesArgs(t, []string{edxUploading}, map[string]any{
		"config_file": "examples/xgboost-tabular/config.json",
		"dag":         map[string]any{"nodes": []string{"XGBoostTraining", "EdxUploading"}, "edges": [][2]string{{"XGBoostTraining", "EdxUploading"}}},
	})))
	if got := v.UnresolvableBuilders; len(got) != 1 || !strings.HasPrefix(got[0], "EdxUploading") {
		t.Errorf("compile.validate unresolvable_builders: %v", got)
	}
}

// A shared DAG without edges answers "edges": [] from the tools that
// return its edges, never null.
func TestSharedDAGWithoutEdgesAnswersEmptyList(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "xgboost"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "xgboost", "solo.dag.json"), []byte(`{"dag": {"nodes": ["XGBoostTraining"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, reg := newDepsRegistry(t, Options{PipelineDirs: []string{dir}})
	for _, tool := range []string{"pipeline_catalog.load_dag", "pipeline_catalog.get_dag"} {
		res := call(t, reg, tool, `{"dag_id": "xgboost_solo"}`)
		if !res.OK {
			t.Fatalf("%s: %s", tool, res.Encode())
		}
		if !strings.Contains(string(res.Encode()), `"edges":[]`) {
			t.Errorf("%s: edges is not []: %s", tool, res.Encode())
		}
		for _, n := range res.NextSteps {
			if hint, _ := json.Marshal(n.ArgsHint); strings.Contains(string(hint), "null") {
				t.Errorf("%s: next step %s has a null in its args hint: %s", tool, n.Tool, hint)
			}
		}
	}
}
