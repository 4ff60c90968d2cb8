package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func catList(t *testing.T, v any) []any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out []any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("not a list: %s", b)
	}
	return out
}

func catMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("not an object: %s", b)
	}
	return out
}

func TestCatalogListSteps(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := catOK(t, call(t, reg, "catalog.list_steps", `{}`))
	if n := int(data["count"].(float64)); n < 25 {
		t.Fatalf("count %d", n)
	}
	seen := map[string]bool{}
	for _, d := range catList(t, data["step_details"]) {
		seen[catMap(t, d)["sagemaker_step_type"].(string)] = true
	}
	for _, sm := range []string{"Processing", "Training", "CreateModel", "Transform", "Tuning", "RegisterModel"} {
		if !seen[sm] {
			t.Errorf("no %s step listed", sm)
		}
	}
	cal := catOK(t, call(t, reg, "catalog.list_steps", `{"job_type":"calibration"}`))
	if n := int(cal["count"].(float64)); n == 0 || n >= int(data["count"].(float64)) {
		t.Fatalf("job_type filter: %d", n)
	}
	res := call(t, reg, "catalog.list_steps", `{"job_type":"training","sagemaker_step_type":"CreateModel"}`)
	if d := catOK(t, res); int(d["count"].(float64)) == 0 || len(res.Warnings) == 0 {
		t.Fatalf("a job_type filter must not empty the list: %v", res.Warnings)
	}
	tr := catOK(t, call(t, reg, "catalog.list_steps", `{"sagemaker_step_type":"Training"}`))
	if int(tr["count"].(float64)) != 3 {
		t.Fatalf("training steps: %v", tr["steps"])
	}
	mustFail(t, call(t, reg, "catalog.list_steps", `{"job_type":5}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.list_steps", `{"colour":"red"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.list_steps", `{"job_type":"../x"}`), registry.CodeInvalidInput)
}

func TestCatalogSearch(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := catOK(t, call(t, reg, "catalog.search", `{"query":"xgboost"}`))
	first := catMap(t, catList(t, data["matches"])[0])
	if first["step_name"] != "XGBoostTraining" || first["match_reason"] == "" {
		t.Fatalf("first: %v", first)
	}
	cal := catOK(t, call(t, reg, "catalog.search", `{"query":"calibrat","limit":2}`))
	var names []string
	for _, m := range catList(t, cal["matches"]) {
		names = append(names, catMap(t, m)["step_name"].(string))
	}
	if strings.Join(names, ",") != "ModelCalibration,PercentileModelCalibration" {
		t.Fatalf("calibrat: %v", names)
	}
	a := call(t, reg, "catalog.search", `{"query":"model"}`).Encode()
	b := call(t, reg, "catalog.search", `{"query":"model"}`).Encode()
	strip := func(b []byte) string { return string(b[:strings.Index(string(b), `"meta"`)]) }
	if strip(a) != strip(b) {
		t.Fatal("search is not deterministic")
	}
	if d := catOK(t, call(t, reg, "catalog.search", `{"query":"zzzzqqq"}`)); d["count"].(float64) != 0 {
		t.Fatal("nonsense matched")
	}
	mustFail(t, call(t, reg, "catalog.search", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":"   "}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":42}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":"x","limit":0}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":"`+strings.Repeat("x", 100000)+`"}`), registry.CodeInvalidInput)
}

func TestCatalogStepInfoSpecResolve(t *testing.T) {
	reg, _ := newTestRegistry(t)
	info := catOK(t, call(t, reg, "catalog.step_info", `{"step_name":"XGBoostModel"}`))
	if info["config_class"] != "XGBoostModelStepConfig" || info["sagemaker_step_type"] != "CreateModel" || info["framework"] != "xgboost" {
		t.Fatalf("info: %v", info)
	}
	spec := catOK(t, call(t, reg, "catalog.step_spec", `{"step_name":"TabularPreprocessing_calibration"}`))
	out := catMap(t, catList(t, spec["outputs"])[0])
	if spec["job_type"] != "calibration" || !strings.Contains(strings.Join(catStrings(catList(t, out["aliases"])), ","), "calibration_data") {
		t.Fatalf("variant not applied: %v", spec)
	}
	res := catOK(t, call(t, reg, "catalog.resolve_step", `{"step_name":"TabularPreprocessing_training"}`))
	if res["canonical_name"] != "TabularPreprocessing" || res["job_type"] != "training" || res["variant_applied"] != true ||
		res["pipeline_step_name"] != "TabularPreprocessing-Training" {
		t.Fatalf("resolve: %v", res)
	}
	res = catOK(t, call(t, reg, "catalog.resolve_step", `{"step_name":"XGBoostTraining"}`))
	if res["job_type"] != nil || res["source"] != "canonical" {
		t.Fatalf("resolve: %v", res)
	}
	unknown := call(t, reg, "catalog.resolve_step", `{"step_name":"XGBoostTrainng"}`)
	mustFail(t, unknown, registry.CodeNotFound)
	if unknown.Remedy == nil || !strings.Contains(unknown.Remedy.FixAction, "XGBoostTraining") {
		t.Fatalf("no suggestion in remedy: %+v", unknown.Remedy)
	}
	internal := call(t, reg, "catalog.step_info", `{"step_name":"CradleDataLoading_training"}`)
	mustFail(t, internal, registry.CodeUnsupported)
	if !strings.Contains(internal.Remedy.FixAction, "DummyDataLoading") {
		t.Fatalf("remedy: %+v", internal.Remedy)
	}
	mustFail(t, call(t, reg, "catalog.step_spec", `{"step_name":"TabularPreprocessing_training","job_type":"testing"}`), registry.CodeInvalidInput)
	for _, tool := range []string{"catalog.step_info", "catalog.step_spec", "catalog.resolve_step", "catalog.config_fields", "steps.io", "steps.patterns"} {
		mustFail(t, call(t, reg, tool, `{}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{"step_name":["XGBoostTraining"]}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{"step_name":"XGBoostTraining","extra":1}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{"step_name":"../etc/passwd"}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{"step_name":"/etc/passwd"}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{"step_name":"`+strings.Repeat("A", 10000)+`"}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{"step_name":"NoSuchStepAnywhere"}`), registry.CodeNotFound)
	}
}

func catStrings(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i], _ = v.(string)
	}
	return out
}

func TestCatalogConfigFieldsAndBuilders(t *testing.T) {
	reg, _ := newTestRegistry(t)
	cf := catOK(t, call(t, reg, "catalog.config_fields", `{"step_name":"TabularPreprocessing"}`))
	names := map[string]map[string]any{}
	for _, f := range catList(t, cf["fields"]) {
		m := catMap(t, f)
		names[m["name"].(string)] = m
	}
	if names["label_field"]["source"] != "step" || names["author"] == nil || names["processing_instance_count"] == nil {
		t.Fatalf("fields: %v", cf["fields"])
	}
	b := catOK(t, call(t, reg, "catalog.list_builders", `{}`))
	if int(b["count"].(float64)) < 25 {
		t.Fatalf("builders: %v", b["count"])
	}
	tr := catOK(t, call(t, reg, "catalog.list_builders", `{"sagemaker_step_type":"Training"}`))
	first := catMap(t, catList(t, tr["builders"])[0])
	if first["builder_class"] != "LightGBMTrainingStepBuilder" || first["strategy"] != "sagemaker_step_type/Training" {
		t.Fatalf("builders: %v", tr)
	}
	mustFail(t, call(t, reg, "catalog.list_builders", `{"sagemaker_step_type":"../../x"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.list_builders", `{"sagemaker_step_type":7}`), registry.CodeInvalidInput)
}

func TestStepsTools(t *testing.T) {
	reg, _ := newTestRegistry(t)
	io := catOK(t, call(t, reg, "steps.io", `{"step_name":"XGBoostTraining"}`))
	in := catMap(t, catList(t, io["inputs"])[0])
	if in["container_path"] != "/opt/ml/input/data" || strings.Join(catStrings(catList(t, in["channels"])), ",") != "train,val,test" {
		t.Fatalf("io input: %v", in)
	}
	out := catMap(t, catList(t, io["outputs"])[0])
	if catMap(t, out["property_reference"])["Get"] != "Steps.XGBoostTraining.ModelArtifacts.S3ModelArtifacts" {
		t.Fatalf("io output: %v", out)
	}
	p := catOK(t, call(t, reg, "steps.patterns", `{"step_name":"TabularPreprocessing","job_type":"calibration"}`))
	cs := catMap(t, catMap(t, p["patterns"])["create_step"])
	if cs["handler"] != "ProcessingHandler" || p["job_type"] != "calibration" {
		t.Fatalf("patterns: %v", p)
	}
	mustFail(t, call(t, reg, "steps.io", `{"step_name":"XGBoostTraining","job_type":"a b"}`), registry.CodeInvalidInput)
}

func TestStrategiesTools(t *testing.T) {
	reg, _ := newTestRegistry(t)
	axes := catOK(t, call(t, reg, "strategies.list_axes", `{}`))
	if axes["count"].(float64) != 2 {
		t.Fatalf("axes: %v", axes)
	}
	l := catOK(t, call(t, reg, "strategies.list", `{"axis":"step_assembly"}`))
	if l["count"].(float64) != 3 {
		t.Fatalf("list: %v", l)
	}
	s := catOK(t, call(t, reg, "strategies.show", `{"name":"code"}`))
	if s["handler"] != "ProcessingHandler" {
		t.Fatalf("show: %v", s)
	}
	mustFail(t, call(t, reg, "strategies.show", `{"name":"nope"}`), registry.CodeNotFound)
	for _, sm := range []string{"Processing", "Training", "CreateModel", "Transform", "Tuning", "RegisterModel"} {
		d := catOK(t, call(t, reg, "strategies.for_step_type", `{"sagemaker_step_type":"`+sm+`"}`))
		st := catMap(t, d["strategy"])
		if st["implemented"] != true || len(catList(t, st["knobs"])) == 0 {
			t.Fatalf("%s: %v", sm, d)
		}
	}
	d := catOK(t, call(t, reg, "strategies.for_step_type", `{"sagemaker_step_type":"Processing","step_assembly":"step_args"}`))
	if d["resolved_axis"] != "step_assembly" || d["resolved_name"] != "step_args" {
		t.Fatalf("for_step_type: %v", d)
	}
	mustFail(t, call(t, reg, "strategies.for_step_type", `{"sagemaker_step_type":"Lambda"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "strategies.for_step_type", `{"sagemaker_step_type":"Processing","step_assembly":"magic"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "strategies.for_step_type", `{}`), registry.CodeInvalidInput)
	k := catOK(t, call(t, reg, "strategies.knobs", `{"axis":"sagemaker_step_type","name":"Training"}`))
	if k["count"].(float64) != 2 {
		t.Fatalf("knobs: %v", k)
	}
	mustFail(t, call(t, reg, "strategies.knobs", `{"axis":"sagemaker_step_type","name":"Base"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "strategies.knobs", `{"axis":"colour","name":"Training"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "strategies.knobs", `{"axis":"sagemaker_step_type"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "strategies.list", `{"axis":1}`), registry.CodeInvalidInput)
}

// An extra catalog directory adds a step type visible through every
// catalog tool; a broken file is reported and skipped.
func TestCatalogExtraDirectory(t *testing.T) {
	dir := t.TempDir()
	extra := filepath.Join(dir, "steps")
	if err := os.Mkdir(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := `step_type: ShapExplain
node_type: internal
registry: {sagemaker_step_type: Processing, description: Explain predictions with SHAP values}
compute: {kind: sklearn, framework_version_field: processing_framework_version}
contract:
  entry_point: shap_explain.py
  inputs: {model_input: {path: /opt/ml/processing/input/model}}
  outputs: {explanations: {path: /opt/ml/processing/output}}
spec:
  dependencies: {model_input: {type: model_artifacts, required: true}}
  outputs:
    explanations: {type: processing_output, property_path: "properties.ProcessingOutputConfig.Outputs['explanations'].S3Output.S3Uri"}
`
	os.WriteFile(filepath.Join(extra, "shap_explain.step.yaml"), []byte(plain), 0o644)
	os.WriteFile(filepath.Join(extra, "broken.step.yaml"), []byte("step_type: Broken\nspec: [1]\n"), 0o644)
	deps, err := NewDeps(Options{WorkspaceRoot: dir, StepDirs: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	if problems := deps.catalogs(t.Context()).Problems; len(problems) != 1 || problems[0].Path != "spec" || !strings.HasSuffix(problems[0].File, "broken.step.yaml") {
		t.Fatalf("problems: %v", problems)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	if d := catOK(t, call(t, reg, "catalog.search", `{"query":"shap"}`)); catMap(t, catList(t, d["matches"])[0])["step_name"] != "ShapExplain" {
		t.Fatalf("search: %v", d)
	}
	for _, tool := range []string{"catalog.step_info", "catalog.step_spec", "catalog.resolve_step", "catalog.config_fields", "steps.io", "steps.patterns"} {
		catOK(t, call(t, reg, tool, `{"step_name":"ShapExplain"}`))
	}
	if d := catOK(t, call(t, reg, "catalog.list_steps", `{}`)); !strings.Contains(strings.Join(catStrings(catList(t, d["steps"])), ","), "ShapExplain") {
		t.Fatal("not listed")
	}
}

// catOK is mustOK with the data as a client sees it (JSON round trip).
func catOK(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s (%s) %v", res.Error, res.Code, res.Meta)
	}
	return catMap(t, res.Data)
}
