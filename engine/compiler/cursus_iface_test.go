package compiler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/steps"
)

// A DAG over a Cursus-format interface file (testdata/cursus/steps:
// TabularPreprocessing with Cursus' dependency names and no config section)
// compiles from the Cursus config.json: the two TabularPreprocessing nodes
// keep their job types (no duplicate step name), their passed-through
// label_name feeds LABEL_FIELD, and the DAG wires the edges the Cursus rule
// gives. The one difference from Cursus: SIGNATURE lists its source as
// DummyDataLoading_Training, which Cursus matches to no step type (-0.1,
// total 0.85); the suffix is read as the step type here (+0.1, total 1.0).
// The binding is the same.
func TestCursusInterfaceWithoutConfigSectionCompiles(t *testing.T) {
	cat, probs, err := steps.LoadCatalog("testdata/cursus/steps")
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	s, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	if sc, err := s.ForStep("TabularPreprocessing"); err != nil || !sc.Open {
		t.Fatalf("TabularPreprocessing schema is not open: %v", err)
	}
	data, err := os.ReadFile("testdata/cursus/xgboost_complete_e2e.config.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(data, s)
	if err != nil {
		t.Fatal(err)
	}
	pc, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, _ := pc.Get("xgboost_complete_e2e")
	res, err := Compile(context.Background(), Input{DAG: e.DAG(), Configs: f.Configs, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n, bs := range res.Plan.Bindings {
		for _, b := range bs {
			got = append(got, fmt.Sprintf("%s.%s <- %s.%s %.4f", n, b.Dependency, b.FromNode, b.FromOutput, b.Score))
		}
	}
	slices.Sort(got)
	want := []string{
		"ModelCalibration_calibration.evaluation_data <- XGBoostModelEval_calibration.eval_output 1.0000",
		"Package.calibration_model <- ModelCalibration_calibration.calibration_output 1.0000",
		"Package.model_input <- XGBoostTraining.model_output 1.0000",
		"Payload.model_input <- XGBoostTraining.model_output 1.0000",
		"Registration.GeneratedPayloadSamples <- Payload.payload_sample 1.0000",
		"Registration.PackagedModel <- Package.packaged_model 1.0000",
		"TabularPreprocessing_calibration.DATA <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.SIGNATURE <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.DATA <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.SIGNATURE <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	}
	if !slices.Equal(got, want) {
		t.Errorf("wiring\n got %q\nwant %q", got, want)
	}
	names := map[string]bool{}
	for _, st := range res.Steps {
		names[st.StepName] = true
	}
	if !names["TabularPreprocessing-Training"] || !names["TabularPreprocessing-Calibration"] || len(names) != len(e.DAG().Nodes) {
		t.Errorf("step names %v", names)
	}
	for _, w := range res.Warnings {
		if slices.Contains([]string{`node "TabularPreprocessing_training": required environment variable LABEL_FIELD has no value (set config field label_field)`}, w) {
			t.Errorf("label_name did not feed LABEL_FIELD: %s", w)
		}
	}
	if !containsEnv(t, res.JSON, "TabularPreprocessing-Training", "LABEL_FIELD", "label") {
		t.Error("LABEL_FIELD is not label_name's value in the definition")
	}
}

// containsEnv reports whether the definition's step sets variable to value.
func containsEnv(t *testing.T, def []byte, step, variable, value string) bool {
	t.Helper()
	var doc struct {
		Steps []struct {
			Name      string
			Arguments struct{ Environment map[string]string }
		}
	}
	if err := json.Unmarshal(def, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Steps {
		if s.Name == step {
			return s.Arguments.Environment[variable] == value
		}
	}
	return false
}

// An input whose interface takes it from a Cursus config method is reported
// as such, not as a bare missing input.
func TestConfigMethodInputIsReported(t *testing.T) {
	cat, probs, err := steps.LoadCatalog("testdata/cursus/steps")
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	s, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	d := dag.New([]string{"S3DataLoading_training"}, nil)
	cfg, cprobs := s.Build("S3DataLoading", map[string]any{"author": "jane", "bucket": "fraud-artifacts",
		"role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"},
		map[string]any{"job_type": "training", "data_source_uri": "s3://fraud-artifacts/raw/"})
	if len(cprobs) > 0 {
		t.Fatal(cprobs)
	}
	cfg.Key = "S3DataLoading_training"
	_, err = Compile(context.Background(), Input{DAG: d, Configs: []config.Config{cfg}, Catalog: cat})
	var ue *UnresolvedError
	if !errors.As(err, &ue) || len(ue.Unresolved) != 1 || !strings.Contains(ue.Unresolved[0].Reason, "config method get_data_source_uri()") {
		t.Fatalf("err = %v", err)
	}
}
