package handlers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// shapStep is a valid processing step interface; output names its one
// output, so that two versions can be told apart.
func shapStep(stepType, output string) string {
	return fmt.Sprintf(`step_type: %s
node_type: internal
registry: {sagemaker_step_type: Processing, description: Explain predictions with SHAP values}
compute: {kind: sklearn, framework_version_field: processing_framework_version}
contract:
  entry_point: shap_explain.py
  inputs: {model_input: {path: /opt/ml/processing/input/model}}
  outputs: {%[2]s: {path: /opt/ml/processing/output}}
spec:
  dependencies: {model_input: {type: model_artifacts, required: true}}
  outputs:
    %[2]s: {type: processing_output, property_path: "properties.ProcessingOutputConfig.Outputs['%[2]s'].S3Output.S3Uri"}
`, stepType, output)
}

// stepTypesArgs is a JSON object with step_types and the other fields.
func stepTypesArgs(t *testing.T, docs []string, fields map[string]any) string {
	t.Helper()
	args := map[string]any{"step_types": docs}
	for k, v := range fields {
		args[k] = v
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newDepsRegistry(t *testing.T, opts Options) (*Deps, *registry.Registry) {
	t.Helper()
	if opts.WorkspaceRoot == "" {
		opts.WorkspaceRoot = t.TempDir()
	}
	deps, err := NewDeps(opts)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	return deps, reg
}

func outputNames(t *testing.T, spec map[string]any) []string {
	t.Helper()
	var names []string
	for _, o := range catList(t, spec["outputs"]) {
		names = append(names, catMap(t, o)["logical_name"].(string))
	}
	return names
}

// A step type sent in step_types is known to that call, through catalog,
// steps, config and DAG tools, and to no other call.
func TestStepTypesOverlayOneCall(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	docs := []string{shapStep("ShapExplain", "explanations")}
	spec := catOK(t, call(t, reg, "catalog.step_spec", stepTypesArgs(t, docs, map[string]any{"step_name": "ShapExplain"})))
	if got := outputNames(t, spec); len(got) != 1 || got[0] != "explanations" {
		t.Fatalf("outputs: %v", got)
	}
	for _, tool := range []string{"catalog.step_info", "catalog.config_fields", "catalog.resolve_step", "steps.io", "steps.patterns"} {
		catOK(t, call(t, reg, tool, stepTypesArgs(t, docs, map[string]any{"step_name": "ShapExplain"})))
	}
	catOK(t, call(t, reg, "config.field_info", stepTypesArgs(t, docs, map[string]any{"config_class": "ShapExplainConfig"})))
	dagArgs := map[string]any{"nodes": []string{"XGBoostTraining", "ShapExplain"}, "edges": [][2]string{{"XGBoostTraining", "ShapExplain"}}}
	plan := catOK(t, call(t, reg, "dag.resolve_plan", stepTypesArgs(t, docs, dagArgs)))
	if !strings.Contains(fmt.Sprint(plan["bindings"]), "model_input") {
		t.Fatalf("ShapExplain.model_input is not wired: %v", plan["bindings"])
	}
	catOK(t, call(t, reg, "validate.deps_resolve", stepTypesArgs(t, docs, dagArgs)))
	built := catOK(t, call(t, reg, "validate.builder", stepTypesArgs(t, docs, map[string]any{"step_name": "ShapExplain"})))
	if built["step_name"] != "ShapExplain" || built["overall_status"] != "PASSED" {
		t.Fatalf("validate.builder built %v: %v", built["step_name"], built)
	}
	// The step type has no script yet: the builder is still tested, and
	// the report says the script is missing.
	if integ := fmt.Sprint(catMap(t, catMap(t, built["components"])["integration_testing"])["issues"]); !strings.Contains(integ, "ShapExplain has no code yet (shap_explain.py)") {
		t.Errorf("integration_testing issues %s do not name the missing script", integ)
	}
	req := catOK(t, call(t, reg, "config.requirements", stepTypesArgs(t, docs, map[string]any{"dag": dagArgs})))
	if _, ok := catMap(t, req["config_class_map"])["ShapExplain"]; !ok {
		t.Fatalf("config.requirements does not map ShapExplain: %v", req["config_class_map"])
	}
	listed := catOK(t, call(t, reg, "catalog.list_steps", stepTypesArgs(t, docs, nil)))
	if !strings.Contains(fmt.Sprint(listed["steps"]), "ShapExplain") {
		t.Fatal("list_steps with step_types does not list ShapExplain")
	}

	// The next call sent nothing: the shared catalog never saw it.
	mustFail(t, call(t, reg, "catalog.step_spec", `{"step_name": "ShapExplain"}`), registry.CodeNotFound)
	if listed := catOK(t, call(t, reg, "catalog.list_steps", `{}`)); strings.Contains(fmt.Sprint(listed["steps"]), "ShapExplain") {
		t.Fatal("the shared catalog lists a step type sent in an earlier call")
	}
}

// Without step_types a call reads the shared catalogs themselves: no copy.
func TestStepTypesEmptyIsTheSharedCatalog(t *testing.T) {
	deps, _ := newDepsRegistry(t, Options{})
	cv, err := deps.catalogsFor(t.Context(), stepTypesArg{})
	if err != nil {
		t.Fatal(err)
	}
	if shared := deps.catalogs(); cv != shared {
		t.Fatal("an empty step_types built a new catalog view")
	}
	over, err := deps.catalogsFor(t.Context(), stepTypesArg{StepTypes: []string{shapStep("ShapExplain", "explanations")}})
	if err != nil {
		t.Fatal(err)
	}
	if over.Steps == deps.catalogs().Steps || over.Config == deps.catalogs().Config {
		t.Fatal("an overlay shares the shared catalogs themselves")
	}
	if _, err := over.Config.ForStep("ShapExplain"); err != nil {
		t.Fatalf("overlay has no config schema for its step: %v", err)
	}
	if _, err := deps.catalogs().Config.ForStep("ShapExplain"); err == nil {
		t.Fatal("the overlay changed the shared config schemas")
	}
}

// Malformed documents are rejected whole, with every failing document's
// findings; nothing of the call's step types is applied.
func TestStepTypesMalformedAreInvalidInput(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	docs := []string{shapStep("GoodStep", "out"), "step_type: Broken\nspec: [1]\n", "not: [valid"}
	res := call(t, reg, "catalog.step_spec", stepTypesArgs(t, docs, map[string]any{"step_name": "GoodStep"}))
	mustFail(t, res, registry.CodeInvalidInput)
	documents := catList(t, cfgDetails(t, res)["documents"])
	if len(documents) != 2 {
		t.Fatalf("want findings for documents 1 and 2, got %v", documents)
	}
	for i, want := range []struct {
		index float64
		rule  string
	}{{1, "type"}, {2, "yaml_syntax"}} {
		doc := catMap(t, documents[i])
		errs := catList(t, doc["errors"])
		if doc["index"] != want.index || len(errs) == 0 || catMap(t, errs[0])["rule"] != want.rule {
			t.Fatalf("document %d: %v", i, doc)
		}
	}
	if !strings.Contains(res.Error, "step_types[1]: spec [type]") || !strings.Contains(res.Error, "step_types[2]: [yaml_syntax]") {
		t.Fatalf("message names no document: %s", res.Error)
	}
	// Two documents of one step type are refused too.
	dup := []string{shapStep("GoodStep", "a"), shapStep("GoodStep", "b")}
	res = call(t, reg, "catalog.step_spec", stepTypesArgs(t, dup, map[string]any{"step_name": "GoodStep"}))
	mustFail(t, res, registry.CodeInvalidInput)
	if !strings.Contains(res.Error, "duplicate_step_type") {
		t.Fatalf("duplicate not named: %s", res.Error)
	}
}

// The caps on step_types are invalid_input naming the setting.
func TestStepTypesCaps(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{MaxStepTypes: 2, MaxStepTypeBytes: 2000})
	three := []string{shapStep("A", "o"), shapStep("B", "o"), shapStep("C", "o")}
	res := call(t, reg, "catalog.list_steps", stepTypesArgs(t, three, nil))
	mustFail(t, res, registry.CodeInvalidInput)
	if !strings.Contains(res.Error, "limits.max_step_types") {
		t.Fatalf("count cap not named: %s", res.Error)
	}
	big := []string{shapStep("A", "o") + "# " + strings.Repeat("x", 2000) + "\n"}
	res = call(t, reg, "catalog.list_steps", stepTypesArgs(t, big, nil))
	mustFail(t, res, registry.CodeInvalidInput)
	if !strings.Contains(res.Error, "limits.max_step_type_bytes") {
		t.Fatalf("size cap not named: %s", res.Error)
	}
	// validate.step_interface, which reads step_types as its documents,
	// applies the same caps.
	res = call(t, reg, "validate.step_interface", stepTypesArgs(t, three, nil))
	mustFail(t, res, registry.CodeInvalidInput)
	catOK(t, call(t, reg, "catalog.list_steps", stepTypesArgs(t, three[:2], nil)))
}

// validate.step_interface with only step_types validates those documents
// and reports their findings (a broken one fails the validation, not the
// call's arguments).
func TestValidateStepInterfaceChecksStepTypes(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	good := catOK(t, call(t, reg, "validate.step_interface", stepTypesArgs(t, []string{shapStep("ShapExplain", "out")}, nil)))
	if good["validated"] != float64(1) {
		t.Fatalf("report: %v", good)
	}
	res := call(t, reg, "validate.step_interface", stepTypesArgs(t, []string{shapStep("ShapExplain", "out"), "step_type: Broken\nspec: [1]\n"}, nil))
	mustFail(t, res, registry.CodeValidationFailed)
	// With step_name, step_types overlay the catalog the name is looked up in.
	catOK(t, call(t, reg, "validate.step_interface", stepTypesArgs(t, []string{shapStep("ShapExplain", "out")}, map[string]any{"step_name": "ShapExplain"})))
}

// Two callers sending different interfaces under one step type at the
// same time each see only their own.
func TestStepTypesConcurrentCallersSeeTheirOwn(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan string, 2*rounds)
	for _, output := range []string{"left_output", "right_output"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := stepTypesArgs(t, []string{shapStep("ConflictStep", output)}, map[string]any{"step_name": "ConflictStep"})
			for range rounds {
				res := call(t, reg, "catalog.step_spec", args)
				if !res.OK {
					errs <- res.Error
					continue
				}
				if got := fmt.Sprint(catMap(t, res.Data)["outputs"]); !strings.Contains(got, output) {
					errs <- fmt.Sprintf("caller of %s saw %s", output, got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A step directory of a running server is reloaded when it changes: a new
// file appears, a malformed one is reported by file name and reason, and
// a directory that cannot be read keeps the last good catalog.
func TestStepDirReloadsWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	stepDir := filepath.Join(dir, "steps")
	if err := os.Mkdir(stepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, reg := newDepsRegistry(t, Options{WorkspaceRoot: dir, StepDirs: []string{stepDir}, StepReloadInterval: -1})
	listed := func() map[string]any {
		return catOK(t, call(t, reg, "catalog.list_steps", `{}`))
	}
	if strings.Contains(fmt.Sprint(listed()["steps"]), "ShapExplain") {
		t.Fatal("listed before it exists")
	}
	if err := os.WriteFile(filepath.Join(stepDir, "shap_explain.step.yaml"), []byte(shapStep("ShapExplain", "explanations")), 0o644); err != nil {
		t.Fatal(err)
	}
	got := listed()
	if !strings.Contains(fmt.Sprint(got["steps"]), "ShapExplain") {
		t.Fatal("a new step file is not picked up")
	}
	status := catMap(t, catList(t, got["step_dirs"])[0])
	if status["dir"] != stepDir || status["step_count"] != float64(1) || len(catList(t, status["problems"])) != 0 {
		t.Fatalf("step_dirs: %v", status)
	}

	if err := os.WriteFile(filepath.Join(stepDir, "broken.step.yaml"), []byte("step_type: Broken\nspec: [1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, reg, "catalog.list_steps", `{}`)
	status = catMap(t, catList(t, catOK(t, res)["step_dirs"])[0])
	problems := catList(t, status["problems"])
	if len(problems) != 1 {
		t.Fatalf("problems: %v", problems)
	}
	p := catMap(t, problems[0])
	if p["file"] != filepath.Join(stepDir, "broken.step.yaml") || p["path"] != "spec" || !strings.Contains(p["message"].(string), "expected a mapping") {
		t.Fatalf("problem: %v", p)
	}
	if !strings.Contains(strings.Join(res.Warnings, " "), "1 problem(s) in step directory") {
		t.Fatalf("no warning of the problem: %v", res.Warnings)
	}
	help := catOK(t, call(t, reg, "tools.help", `{"namespace": "catalog"}`))
	if !strings.Contains(fmt.Sprint(help["step_catalog"]), "broken.step.yaml") {
		t.Fatalf("tools.help does not report the broken file: %v", help["step_catalog"])
	}

	// The directory goes away: the step types loaded before stay.
	if err := os.RemoveAll(stepDir); err != nil {
		t.Fatal(err)
	}
	got = listed()
	if !strings.Contains(fmt.Sprint(got["steps"]), "ShapExplain") || got["reload_error"] == nil {
		t.Fatalf("after a failed reload: steps %v, reload_error %v", got["steps"], got["reload_error"])
	}
	// It comes back with the file removed: the step type goes.
	if err := os.Mkdir(stepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	got = listed()
	if strings.Contains(fmt.Sprint(got["steps"]), "ShapExplain") || got["reload_error"] != nil {
		t.Fatalf("after the directory is back: steps %v, reload_error %v", got["steps"], got["reload_error"])
	}
}

// Calls running while a step directory changes each see one whole
// catalog: the step type is listed with its config schema, or not at all.
func TestStepDirReloadUnderConcurrentCalls(t *testing.T) {
	dir := t.TempDir()
	stepDir := filepath.Join(dir, "steps")
	if err := os.Mkdir(stepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, reg := newDepsRegistry(t, Options{WorkspaceRoot: dir, StepDirs: []string{stepDir}, StepReloadInterval: -1})
	file := filepath.Join(stepDir, "shap_explain.step.yaml")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res := call(t, reg, "catalog.config_fields", `{"step_name": "ShapExplain"}`)
				// Absent is "unknown step"; a step without its schema
				// would be a torn view.
				if !res.OK && (res.Code != registry.CodeNotFound || !strings.HasPrefix(res.Error, "unknown step")) {
					errs <- res.Code + ": " + res.Error
				}
			}
		}()
	}
	for i := range 20 {
		var err error
		if i%2 == 0 {
			err = os.WriteFile(file, []byte(shapStep("ShapExplain", fmt.Sprintf("out%d", i))), 0o644)
		} else {
			err = os.Remove(file)
		}
		if err != nil {
			t.Fatal(err)
		}
		catOK(t, call(t, reg, "catalog.list_steps", `{}`))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkCatalogsFor is what step_types cost a call: nothing without
// them, one parse, validation and re-index with one.
func BenchmarkCatalogsFor(b *testing.B) {
	deps, err := NewDeps(Options{WorkspaceRoot: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		in   stepTypesArg
	}{{"none", stepTypesArg{}}, {"one", stepTypesArg{StepTypes: []string{shapStep("ShapExplain", "explanations")}}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := deps.catalogsFor(b.Context(), bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The next steps of the config chain ask for the call's step_types again,
// and only when it sent some: the next call knows a step type only so.
func TestStepTypesCarryIntoTheNextStepHints(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	docs := []string{shapStep("ShapExplain", "explanations")}
	dagArg := map[string]any{"nodes": []string{"XGBoostTraining", "ShapExplain"}, "edges": [][2]string{{"XGBoostTraining", "ShapExplain"}}}
	base := map[string]any{"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole",
		"region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}
	hintsStepTypes := func(res *registry.Result) []bool {
		t.Helper()
		catOK(t, res)
		var carried []bool
		for _, n := range res.NextSteps {
			_, ok := n.ArgsHint["step_types"]
			carried = append(carried, ok)
		}
		return carried
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"config.requirements", map[string]any{"dag": dagArg}},
		{"config.merge_save", map[string]any{"dag": dagArg, "base": base}},
	} {
		with := hintsStepTypes(call(t, reg, tc.tool, stepTypesArgs(t, docs, tc.args)))
		if len(with) == 0 || slices.Contains(with, false) {
			t.Errorf("%s with step_types: next steps carry them %v, want all", tc.tool, with)
		}
		tc.args["dag"] = map[string]any{"nodes": []string{"XGBoostTraining"}, "edges": [][2]string{}}
		b, _ := json.Marshal(tc.args)
		if without := hintsStepTypes(call(t, reg, tc.tool, string(b))); slices.Contains(without, true) {
			t.Errorf("%s without step_types: next steps carry them %v, want none", tc.tool, without)
		}
	}
}
