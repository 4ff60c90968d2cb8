package execdoc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

func boundE2E(t *testing.T) ([]compiler.BoundNode, *steps.Catalog) {
	t.Helper()
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	s, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	d := dag.New([]string{"DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining", "Package", "Payload", "Registration"},
		[][2]string{{"DummyDataLoading_training", "TabularPreprocessing_training"}, {"TabularPreprocessing_training", "XGBoostTraining"},
			{"XGBoostTraining", "Package"}, {"XGBoostTraining", "Payload"}, {"Package", "Registration"}, {"Payload", "Registration"}})
	rep, err := config.Requirements(context.Background(), d, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, _ := config.SampleValues(rep)
	configs, probs, _ := s.BuildDAG(context.Background(), d, base, perNode)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	bound, err := compiler.Bind(context.Background(), compiler.Input{DAG: d, Configs: configs, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return bound, cat
}

func TestGenerateFillsLoadingAndRegistration(t *testing.T) {
	bound, cat := boundE2E(t)
	doc, st, warns := Generate(bound, cat, nil, len(bound))
	if len(warns) > 0 || !st.AutoTemplate {
		t.Fatalf("warns %v stats %+v", warns, st)
	}
	entries := doc[StepConfigs].(map[string]any)
	for _, n := range []string{"DummyDataLoading-Training", "TabularPreprocessing-Training", "XGBoostTraining", "Registration"} {
		if _, ok := entries[n]; !ok {
			t.Fatalf("no entry %s in %v", n, entries)
		}
	}
	if _, ok := entries["DummyDataLoading_training"]; ok {
		t.Fatal("keyed by DAG node name")
	}
	load := entries["DummyDataLoading-Training"].(map[string]any)
	if load[StepConfig].(map[string]any)["data_source"] == nil {
		t.Fatalf("data loading not filled: %v", load)
	}
	if got := load[StepType].([]any); len(got) != 2 || got[0] != TagWorkflowInput {
		t.Fatalf("data loading type %v", got)
	}
	reg := entries["Registration"].(map[string]any)[StepConfig].(map[string]any)
	if reg["model_package_group_name"] == nil || reg["model_owner"] == nil {
		t.Fatalf("registration not filled: %v", reg)
	}
	if strings.Join(st.StepsWithConfig, ",") != "DummyDataLoading-Training,Registration" {
		t.Fatalf("steps with config %v", st.StepsWithConfig)
	}
	if issues := Validate(doc, Expected(bound, cat)); len(issues) != 0 {
		t.Fatalf("generated doc invalid: %v", issues)
	}
	// A supplied document keeps other entries and gets missing steps added.
	given := map[string]any{StepConfigs: map[string]any{"XGBoostTraining": map[string]any{StepType: "TRAINING_STEP", StepConfig: map[string]any{"x": 1.0}}}}
	out, _, warns := Generate(bound, cat, given, len(bound))
	if len(warns) != 2 || out[StepConfigs].(map[string]any)["XGBoostTraining"].(map[string]any)[StepConfig].(map[string]any)["x"] != 1.0 {
		t.Fatalf("warns %v out %v", warns, out)
	}
	if len(given[StepConfigs].(map[string]any)) != 1 {
		t.Fatal("input document modified")
	}
}

func TestValidateCatchesMissingStepAndWrongType(t *testing.T) {
	bound, cat := boundE2E(t)
	exp := Expected(bound, cat)
	doc := TemplateFor(exp)
	entries := doc[StepConfigs].(map[string]any)
	delete(entries, "Package")
	entries["XGBoostTraining"].(map[string]any)[StepType] = []any{TagProcessing}
	issues := Validate(doc, exp)
	rules := map[string]string{}
	for _, i := range issues {
		rules[i.Step] = i.Rule
	}
	if rules["Package"] != "missing_step" || rules["XGBoostTraining"] != "wrong_type" || len(issues) != 2 {
		t.Fatalf("issues %+v", issues)
	}
	for _, bad := range []any{"x", map[string]any{}, map[string]any{StepConfigs: []any{}}} {
		if len(Validate(bad, nil)) != 1 {
			t.Errorf("%v accepted", bad)
		}
	}
	if len(Validate(map[string]any{StepConfigs: map[string]any{"A": map[string]any{StepType: 3}}}, nil)) != 1 {
		t.Error("numeric STEP_TYPE accepted")
	}
}

func TestTemplateAndMerge(t *testing.T) {
	tpl := Template([]string{"A", "B"})
	b, _ := json.Marshal(tpl)
	if string(b) != `{"PIPELINE_ADDITIONAL_PARAMS":{},"PIPELINE_STEP_CONFIGS":{"A":{"STEP_CONFIG":{},"STEP_TYPE":["PROCESSING_STEP"]},"B":{"STEP_CONFIG":{},"STEP_TYPE":["PROCESSING_STEP"]}}}` {
		t.Fatalf("template %s", b)
	}
	base := map[string]any{StepConfigs: map[string]any{"A": map[string]any{StepType: "X", StepConfig: map[string]any{"k": "v", "keep": "1"}}}}
	add := map[string]any{StepConfigs: map[string]any{
		"A": map[string]any{StepType: "Y", StepConfig: map[string]any{"k": "w"}},
		"C": map[string]any{StepType: "Z"}}, AdditionalParams: map[string]any{"p": "q"}}
	out, err := Merge(base, add)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(out)
	if string(b) != `{"PIPELINE_ADDITIONAL_PARAMS":{"p":"q"},"PIPELINE_STEP_CONFIGS":{"A":{"STEP_CONFIG":{"k":"w","keep":"1"},"STEP_TYPE":"Y"},"C":{"STEP_TYPE":"Z"}}}` {
		t.Fatalf("merged %s", b)
	}
	if base[StepConfigs].(map[string]any)["A"].(map[string]any)[StepConfig].(map[string]any)["k"] != "v" {
		t.Fatal("base modified")
	}
	if _, err := Merge(map[string]any{}, add); err == nil || !strings.Contains(err.Error(), "base") {
		t.Fatalf("bad base: %v", err)
	}
}
