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
	data := answer[listStepsOut](t, call(t, reg, "catalog.list_steps", `{}`))
	if data.Count < 25 || data.Count != len(data.Steps) || len(data.StepDetails) != data.Count {
		t.Fatalf("count %d, %d steps, %d details", data.Count, len(data.Steps), len(data.StepDetails))
	}
	seen := map[string]bool{}
	for _, d := range data.StepDetails {
		seen[d.SageMakerStepType] = true
	}
	for _, sm := range []string{"Processing", "Training", "CreateModel", "Transform", "Tuning", "RegisterModel"} {
		if !seen[sm] {
			t.Errorf("no %s step listed", sm)
		}
	}
	cal := answer[listStepsOut](t, call(t, reg, "catalog.list_steps", `{"job_type":"calibration"}`))
	if n := cal.Count; n == 0 || n >= data.Count {
		t.Fatalf("job_type filter: %d", n)
	}
	res := call(t, reg, "catalog.list_steps", `{"job_type":"training","sagemaker_step_type":"CreateModel"}`)
	if d := answer[listStepsOut](t, res); d.Count == 0 || len(res.Warnings) == 0 {
		t.Fatalf("a job_type filter must not empty the list: %v", res.Warnings)
	}
	tr := answer[listStepsOut](t, call(t, reg, "catalog.list_steps", `{"sagemaker_step_type":"Training"}`))
	if tr.Count != 3 {
		t.Fatalf("training steps: %v", tr.Steps)
	}
	mustFail(t, call(t, reg, "catalog.list_steps", `{"job_type":5}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.list_steps", `{"colour":"red"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.list_steps", `{"job_type":"../x"}`), registry.CodeInvalidInput)
}

func TestCatalogSearch(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[searchOut](t, call(t, reg, "catalog.search", `{"query":"xgboost"}`))
	if len(data.Matches) == 0 {
		t.Fatal("xgboost matched nothing")
	}
	if first := data.Matches[0]; first.StepName != "XGBoostTraining" || first.MatchReason == "" {
		t.Fatalf("first: %+v", first)
	}
	cal := answer[searchOut](t, call(t, reg, "catalog.search", `{"query":"calibrat","limit":2}`))
	var names []string
	for _, m := range cal.Matches {
		names = append(names, m.StepName)
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
	if d := answer[searchOut](t, call(t, reg, "catalog.search", `{"query":"zzzzqqq"}`)); d.Count != 0 || len(d.Matches) != 0 {
		t.Fatalf("nonsense matched: %+v", d)
	}
	mustFail(t, call(t, reg, "catalog.search", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":"   "}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":42}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":"x","limit":0}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "catalog.search", `{"query":"`+strings.Repeat("x", 100000)+`"}`), registry.CodeInvalidInput)
}

func TestCatalogStepInfoSpecResolve(t *testing.T) {
	reg, _ := newTestRegistry(t)
	info := answer[stepInfoOut](t, call(t, reg, "catalog.step_info", `{"step_name":"XGBoostModel"}`))
	if info.ConfigClass != "XGBoostModelStepConfig" || info.SageMakerStepType != "CreateModel" || info.Framework == nil || *info.Framework != "xgboost" {
		t.Fatalf("info: %+v", info)
	}
	spec := answer[stepSpecOut](t, call(t, reg, "catalog.step_spec", `{"step_name":"TabularPreprocessing_calibration"}`))
	if len(spec.Outputs) == 0 || spec.JobType == nil || *spec.JobType != "calibration" ||
		!strings.Contains(strings.Join(spec.Outputs[0].Aliases, ","), "calibration_data") {
		t.Fatalf("variant not applied: %+v", spec)
	}
	res := answer[resolveStepOut](t, call(t, reg, "catalog.resolve_step", `{"step_name":"TabularPreprocessing_training"}`))
	if res.CanonicalName != "TabularPreprocessing" || res.JobType == nil || *res.JobType != "training" || !res.VariantApplied ||
		res.PipelineStepName != "TabularPreprocessing-Training" {
		t.Fatalf("resolve: %+v", res)
	}
	res = answer[resolveStepOut](t, call(t, reg, "catalog.resolve_step", `{"step_name":"XGBoostTraining"}`))
	if res.JobType != nil || res.Source != "canonical" {
		t.Fatalf("resolve: %+v", res)
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
	cf := answer[configFieldsOut](t, call(t, reg, "catalog.config_fields", `{"step_name":"TabularPreprocessing"}`))
	names := map[string]configField{}
	for _, f := range cf.Fields {
		names[f.Name] = f
	}
	_, author := names["author"]
	_, count := names["processing_instance_count"]
	if names["label_field"].Source != "step" || !author || !count {
		t.Fatalf("fields: %+v", cf.Fields)
	}
	b := answer[listBuildersOut](t, call(t, reg, "catalog.list_builders", `{}`))
	if b.Count < 25 || len(b.Builders) != b.Count {
		t.Fatalf("builders: %d, %d rows", b.Count, len(b.Builders))
	}
	tr := answer[listBuildersOut](t, call(t, reg, "catalog.list_builders", `{"sagemaker_step_type":"Training"}`))
	if len(tr.Builders) == 0 || tr.Builders[0].BuilderClass != "LightGBMTrainingStepBuilder" || tr.Builders[0].Strategy != "sagemaker_step_type/Training" {
		t.Fatalf("builders: %+v", tr)
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
	axes := answer[listAxesOut](t, call(t, reg, "strategies.list_axes", `{}`))
	if axes.Count != 2 || len(axes.Axes) != 2 {
		t.Fatalf("axes: %+v", axes)
	}
	l := answer[strategiesListOut](t, call(t, reg, "strategies.list", `{"axis":"step_assembly"}`))
	if l.Count != 3 || len(l.Strategies) != 3 {
		t.Fatalf("list: %+v", l)
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
	k := answer[knobsOut](t, call(t, reg, "strategies.knobs", `{"axis":"sagemaker_step_type","name":"Training"}`))
	if k.Count != 2 || len(k.Knobs) != 2 {
		t.Fatalf("knobs: %+v", k)
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
