package config_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// cursusSchemas are the built-in step types with TabularPreprocessing
// replaced by, and ModelWikiGenerator added as, Cursus-layout interface
// files without config sections (testdata/cursus_steps).
func cursusSchemas(t *testing.T) *config.Schemas {
	t.Helper()
	cat, probs, err := steps.LoadCatalog("testdata/cursus_steps")
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	s, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func loadCursusLayout(t *testing.T, s *config.Schemas) *config.File {
	t.Helper()
	data, err := os.ReadFile("testdata/cursus_layout.config.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(data, s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func warnedAbout(f *config.File, key string, words ...string) bool {
	for _, w := range f.Warnings {
		if !strings.HasPrefix(w, "configuration.specific."+key+":") {
			continue
		}
		all := true
		for _, word := range words {
			all = all && strings.Contains(w, word)
		}
		if all {
			return true
		}
	}
	return false
}

// A config.json written the way Cursus writes it loads: every config but the
// one whose class no step type declares.
func TestCursusLayoutLoads(t *testing.T) {
	s := cursusSchemas(t)
	f := loadCursusLayout(t, s)
	want := "DummyDataLoading_training,MissingValueImputation_training,ModelWikiGenerator,TabularPreprocessing_calibration,TabularPreprocessing_training,XGBoostTraining"
	if got := strings.Join(f.Keys(), ","); got != want {
		t.Fatalf("keys = %s, want %s", got, want)
	}
	if len(f.Unloaded) != 1 || f.Unloaded[0].Key != "BedrockProcessing_training" || f.Unloaded[0].Class != "BedrockProcessingConfig" ||
		!strings.Contains(f.Unloaded[0].Message, "BedrockProcessingConfig") {
		t.Errorf("unloaded = %+v", f.Unloaded)
	}
	if !warnedAbout(f, "BedrockProcessing_training", "not loaded", "BedrockProcessingConfig") {
		t.Errorf("no warning names the unknown class: %v", f.Warnings)
	}
}

// A step type without a config section keeps its job type (so two
// TabularPreprocessing configs get two step names) and every value, and
// says which values it passed through unchecked; Cursus' derived values are
// dropped.
func TestOpenStepTypeKeepsValuesAndJobType(t *testing.T) {
	s := cursusSchemas(t)
	sc, err := s.ForStep("TabularPreprocessing")
	if err != nil || !sc.Open {
		t.Fatalf("TabularPreprocessing schema: open %v, %v", sc != nil && sc.Open, err)
	}
	f := loadCursusLayout(t, s)
	train, _ := f.Get("TabularPreprocessing_training")
	calib, _ := f.Get("TabularPreprocessing_calibration")
	if train.JobType != "training" || calib.JobType != "calibration" {
		t.Fatalf("job types %q %q", train.JobType, calib.JobType)
	}
	if a, b := steps.PipelineStepName(train.StepType, train.JobType), steps.PipelineStepName(calib.StepType, calib.JobType); a == b {
		t.Errorf("both compile to step %s", a)
	}
	if train.Values["label_name"] != "is_fraud" || train.Values["project_root_folder"] != "fraud_model" || train.Values["output_format"] != "CSV" {
		t.Errorf("values not passed through: %v", train.Values)
	}
	if _, ok := train.Values["effective_instance_type"]; ok {
		t.Error("a derived value Cursus wrote was kept")
	}
	if !warnedAbout(f, "TabularPreprocessing_training", "passed through unchecked", "label_name", "train_ratio") {
		t.Errorf("no pass-through warning: %v", f.Warnings)
	}
	wiki, _ := f.Get("ModelWikiGenerator")
	if wiki.Values["model_name"] != "fraud-v1" || wiki.JobType != "" {
		t.Errorf("ModelWikiGenerator = %+v", wiki)
	}

	// Fields the base chain knows are still validated.
	_, probs := s.Build("TabularPreprocessing", map[string]any{"author": "jane", "bucket": "fraud-artifacts",
		"role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"},
		map[string]any{"processing_instance_count": "two", "job_type": "Training!"})
	kinds := map[string]string{}
	for _, p := range probs {
		kinds[p.Field] = p.Kind
	}
	if kinds["processing_instance_count"] != config.KindType || kinds["job_type"] != config.KindPattern || len(probs) != 2 {
		t.Errorf("problems = %v", probs)
	}
}

// Cursus' spellings load as the built-in fields with a warning each: the
// label_name alias, an enum in another case, an absolute source directory.
// Training configs need no hyperparameters; Cursus-only fields of declared
// step types are ignored with a warning.
func TestCursusSpellingsLoadWithWarnings(t *testing.T) {
	s := cursusSchemas(t)
	f := loadCursusLayout(t, s)
	mvi, _ := f.Get("MissingValueImputation_training")
	if mvi.Values["label_field"] != "is_fraud" || !warnedAbout(f, "MissingValueImputation_training", "label_name is read as label_field") {
		t.Errorf("label_name alias: %v / %v", mvi.Values["label_field"], f.Warnings)
	}
	if mvi.Values["default_numerical_strategy"] != "median" || !warnedAbout(f, "MissingValueImputation_training", "MEDIAN read as median") {
		t.Errorf("enum case: %v", mvi.Values["default_numerical_strategy"])
	}
	if mvi.Values["processing_source_dir"] != "/home/jane/fraud_model/dockers/scripts" ||
		!warnedAbout(f, "MissingValueImputation_training", "processing_source_dir", "absolute local path") {
		t.Errorf("absolute path: %v", mvi.Values["processing_source_dir"])
	}
	load, _ := f.Get("DummyDataLoading_training")
	if load.Values["output_format"] != "Parquet" {
		t.Errorf("PARQUET read as %v", load.Values["output_format"])
	}
	tr, _ := f.Get("XGBoostTraining")
	if _, ok := tr.Values["hyperparameters"]; ok {
		t.Errorf("hyperparameters invented: %v", tr.Values["hyperparameters"])
	}
	if !warnedAbout(f, "XGBoostTraining", "use_precomputed_imputation", "ignored") {
		t.Errorf("Cursus-only field not reported: %v", f.Warnings)
	}

	// An absolute entry point stays an error: it names a file inside the
	// source directory in Cursus too.
	_, probs := s.Build("MissingValueImputation", map[string]any{"author": "jane", "bucket": "fraud-artifacts",
		"role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"},
		map[string]any{"label_field": "y", "processing_entry_point": "/abs/impute.py"})
	if len(probs) != 1 || probs[0].Field != "processing_entry_point" {
		t.Errorf("absolute entry point: %v", probs)
	}
}

// A file whose every class is unknown still fails, naming each.
func TestAllClassesUnknownFails(t *testing.T) {
	s := cursusSchemas(t)
	doc := `{"configuration": {"shared": {}, "specific": {"A_training": {"__model_type__": "AConfig"}}},
	         "metadata": {"config_types": {"A_training": "AConfig"}}}`
	_, err := config.Parse([]byte(doc), s)
	if err == nil || !strings.Contains(err.Error(), "AConfig") {
		t.Errorf("err = %v", err)
	}
}

// Building a DAG's configs: a node of an open step type takes its job type
// from the node name and keeps its own values. (A base value no declared
// schema knows stays a problem there: it is more often a typo.)
func TestBuildDAGWithOpenStepType(t *testing.T) {
	s := cursusSchemas(t)
	d := dag.New([]string{"TabularPreprocessing_training", "TabularPreprocessing_calibration"}, nil)
	base := map[string]any{"author": "jane", "bucket": "fraud-artifacts", "role": "arn:aws:iam::123456789012:role/SageMakerRole",
		"region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}
	label := map[string]any{"label_name": "is_fraud"}
	configs, probs, err := s.BuildDAG(context.Background(), d, base,
		map[string]map[string]any{"TabularPreprocessing_training": label, "TabularPreprocessing_calibration": label})
	if err != nil || len(probs) > 0 {
		t.Fatalf("%v %v", err, probs)
	}
	for _, c := range configs {
		if c.Values["label_name"] != "is_fraud" || c.JobType == "" || !strings.HasSuffix(c.Key, "_"+c.JobType) {
			t.Errorf("%s: job type %q, values %v", c.Key, c.JobType, c.Values)
		}
	}
}
