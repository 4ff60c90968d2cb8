package compiler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// cursusProject is a project in the Cursus layout: scripts under
// dockers/scripts with the hyperparameters beside them, not in config.json.
const cursusProject = "testdata/cursus/project"

// cursusSourceDir is the source_dir every config of the test files names.
const cursusSourceDir = "dockers/scripts"

// cursusStepNames are the SageMaker step names Cursus gives the configs of
// a config.json, by save key (engine-core-spec §2.2): the step type of the
// config class, plus "-" and the job type written in the file with Python's
// str.capitalize. One deliberate difference: Cursus' Registration is the
// Amazon-internal registration processing step, named "Registration-<region>";
// the built-in Registration is a public RegisterModel step and keeps the
// plain name.
func cursusStepNames(t *testing.T, data []byte, s *config.Schemas) map[string]string {
	t.Helper()
	var doc struct {
		Configuration struct {
			Shared   map[string]any            `json:"shared"`
			Specific map[string]map[string]any `json:"specific"`
		} `json:"configuration"`
		Metadata struct {
			ConfigTypes map[string]string `json:"config_types"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for key, class := range doc.Metadata.ConfigTypes {
		sc, err := s.ForConfigClass(class)
		if err != nil {
			continue
		}
		name := sc.StepType
		jt, ok := doc.Configuration.Specific[key]["job_type"].(string)
		if !ok {
			jt, _ = doc.Configuration.Shared["job_type"].(string)
		}
		if jt != "" {
			name += "-" + strings.ToUpper(jt[:1]) + strings.ToLower(jt[1:])
		}
		names[key] = name
	}
	return names
}

// Acceptance (issue 20): every built-in shared DAG compiles from a
// config.json in the Cursus layout (testdata/cursus/<dag id>.config.json:
// hyperparameters outside config.json, job_type in the specific sections,
// Cursus field spellings, fields no .step.yaml declares, derived values
// written in), with the step names Cursus gives.
// UPDATE_CURSUS_TESTDATA=true rewrites the files from the sample configs.
func TestSharedDAGsCompileFromCursusConfig(t *testing.T) {
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, s := fixtures(t)
	for _, e := range cat.List() {
		t.Run(e.ID, func(t *testing.T) {
			file := filepath.Join("testdata", "cursus", e.ID+".config.json")
			if os.Getenv("UPDATE_CURSUS_TESTDATA") == "true" {
				data, err := cursusConfigJSON(cursusSampleConfigs(t, e.DAG(), s), s)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (UPDATE_CURSUS_TESTDATA=true writes it)", err)
			}
			if bytes.Contains(data, []byte(`"hyperparameters":`)) {
				t.Fatal("a Cursus config.json keeps hyperparameters beside the scripts, not in the file")
			}
			f, err := config.Parse(data, s)
			if err != nil {
				t.Fatal(err)
			}
			in := Input{DAG: e.DAG(), Configs: f.Configs, Unloaded: f.Unloaded, Catalog: c, Sources: os.DirFS(cursusProject)}
			res, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			sagemakertest.MustValidate(t, res.JSON)
			cursusNames := cursusStepNames(t, data, s)
			var got, want []string
			for _, st := range res.Steps {
				got = append(got, st.StepName)
				want = append(want, cursusNames[st.ConfigKey])
			}
			if !slices.Equal(got, want) {
				t.Errorf("step names %v, want %v", got, want)
			}
			if e.ID == "xgboost_complete_e2e" {
				literal := []string{"DummyDataLoading-Training", "DummyDataLoading-Calibration", "TabularPreprocessing-Training",
					"TabularPreprocessing-Calibration", "XGBoostTraining", "XGBoostModelEval-Calibration", "Payload",
					"ModelCalibration-Calibration", "Package", "Registration"}
				if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(literal))) {
					t.Errorf("step names %v, want %v", got, literal)
				}
			}
			if len(res.Steps) != len(e.DAG().Nodes) {
				t.Errorf("%d steps for %d nodes", len(res.Steps), len(e.DAG().Nodes))
			}
			checkHyperparamsShipped(t, res)
		})
	}
}

// checkHyperparamsShipped: each training or tuning step packs its source
// directory, and with it the hyperparameters the script reads beside it.
func checkHyperparamsShipped(t *testing.T, res *Result) {
	t.Helper()
	trainers := map[string]bool{}
	for _, st := range res.Steps {
		if st.Handler == HandlerTraining || st.Handler == HandlerTuning {
			trainers[st.StepName] = true
		}
	}
	for _, a := range res.Artifacts {
		if a.Kind != KindSourceDir || !slices.ContainsFunc(a.Steps, func(s string) bool { return trainers[s] }) {
			continue
		}
		if strings.HasPrefix(a.Local, BuiltinPrefix) {
			t.Errorf("source dir of %v is built-in code (%s), not the project's", a.Steps, a.Local)
			continue
		}
		if files := tarNames(t, a.Data); !slices.Contains(files, "hyperparams/hyperparameters_NA.json") {
			t.Errorf("source dir of %v ships %v, without hyperparams/hyperparameters_NA.json", a.Steps, files)
		}
		for _, st := range a.Steps {
			delete(trainers, st)
		}
	}
	for st := range trainers {
		t.Errorf("no source dir shipped for %s", st)
	}
}

// cursusSampleConfigs are the sample configs of d with the scripts under
// cursusSourceDir, as a Cursus project keeps them.
func cursusSampleConfigs(t *testing.T, d *dag.DAG, s *config.Schemas) []config.Config {
	t.Helper()
	rep, err := config.Requirements(context.Background(), d, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, _ := config.SampleValues(rep)
	base["source_dir"] = cursusSourceDir
	configs, probs, err := s.BuildDAG(context.Background(), d, base, perNode)
	if err != nil || len(probs) > 0 {
		t.Fatalf("sample configs: %v %v", err, probs)
	}
	return configs
}

// A node whose config class is unknown fails alone, naming the class; the
// file still loads and the other nodes bind.
func TestUnknownConfigClassFailsOnlyItsNode(t *testing.T) {
	c, s := fixtures(t)
	data, err := os.ReadFile("testdata/cursus/xgboost_complete_e2e.config.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	const key = "ModelCalibration_calibration"
	doc["metadata"].(map[string]any)["config_types"].(map[string]any)[key] = "LegacyCalibrationConfig"
	doc["configuration"].(map[string]any)["specific"].(map[string]any)[key].(map[string]any)["__model_type__"] = "LegacyCalibrationConfig"
	data, _ = json.Marshal(doc)
	f, err := config.Parse(data, s)
	if err != nil {
		t.Fatalf("the file failed as a whole: %v", err)
	}
	cat, _, _ := pipelines.Load()
	e, _ := cat.Get("xgboost_complete_e2e")
	_, err = Compile(context.Background(), Input{DAG: e.DAG(), Configs: f.Configs, Unloaded: f.Unloaded, Catalog: c})
	re, ok := err.(*ResolutionError)
	if !ok || len(re.Failures) != 1 || re.Failures[0].Node != key || !strings.Contains(re.Failures[0].Message, "LegacyCalibrationConfig") {
		t.Fatalf("err = %v", err)
	}
}

// cursusLabelName are the step types whose Cursus config class calls the
// label column label_name where the built-in step says label_field.
var cursusLabelName = map[string]bool{"TabularPreprocessing": true}

// cursusConfigJSON writes configs the way Cursus' merge_and_save_configs
// does (engine-aux §2.2–2.3), with what a Cursus project has and the
// built-in steps do not: hyperparameters left out (they live in
// <source_dir>/hyperparams/), label_field spelled label_name, allowed values
// upper-cased, the Cursus base fields current_date and project_root_folder,
// and the training flag use_precomputed_imputation.
func cursusConfigJSON(configs []config.Config, s *config.Schemas) ([]byte, error) {
	type entry struct {
		key, class string
		values     map[string]any // essential and system fields
		derived    map[string]any
	}
	var entries []entry
	for _, c := range configs {
		sc, err := s.ForStep(c.StepType)
		if err != nil {
			return nil, err
		}
		vals := map[string]any{"current_date": "2026-01-15", "project_root_folder": "fraud_model"}
		for k, v := range c.Values {
			switch f, _ := sc.Field(k); {
			case k == "hyperparameters":
				continue
			case k == "label_field" && cursusLabelName[c.StepType]:
				k = "label_name"
			case f != nil && len(f.Allowed) > 0:
				if str, ok := v.(string); ok {
					v = strings.ToUpper(str)
				}
			}
			vals[k] = v
		}
		if sc.HasLayer(config.LayerTraining) {
			vals["use_precomputed_imputation"] = false
		}
		key := c.StepType
		if c.JobType != "" {
			key += "_" + c.JobType
		}
		entries = append(entries, entry{key: key, class: c.ConfigClass, values: vals, derived: c.Derived})
	}
	canonical := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	shared := map[string]any{}
	if len(entries) >= 2 {
		for name, v := range entries[0].values {
			same := true
			for _, e := range entries[1:] {
				w, ok := e.values[name]
				same = same && ok && canonical(w) == canonical(v)
			}
			if same {
				shared[name] = v
			}
		}
	}
	specific := map[string]any{}
	types := map[string]string{}
	sources := map[string][]string{}
	for _, e := range entries {
		m := map[string]any{"__model_type__": e.class}
		for k, v := range e.values {
			sources[k] = append(sources[k], e.key)
			if _, ok := shared[k]; !ok {
				m[k] = v
			}
		}
		for k, v := range e.derived {
			sources[k] = append(sources[k], e.key)
			m[k] = v
		}
		specific[e.key] = m
		types[e.key] = e.class
	}
	for _, k := range slices.Collect(maps.Keys(sources)) {
		slices.Sort(sources[k])
	}
	doc := map[string]any{
		"configuration": map[string]any{"shared": shared, "specific": specific},
		"metadata":      map[string]any{"config_types": types, "created_at": "2026-01-15T10:00:00.000000", "field_sources": sources},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), nil
}

// A training step without hyperparameters in its config or beside its
// script is compiled with a warning saying so.
func TestTrainingWithoutHyperparametersWarns(t *testing.T) {
	c, s := fixtures(t)
	data, err := os.ReadFile("testdata/cursus/xgboost_simple_training.config.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(data, s)
	if err != nil {
		t.Fatal(err)
	}
	cat, _, _ := pipelines.Load()
	e, _ := cat.Get("xgboost_simple_training")
	const want = "no hyperparameters: the config has none and dockers/scripts has no hyperparams/ folder"
	for name, sources := range map[string]fstest.MapFS{
		"beside the script": {"dockers/scripts/xgboost_training.py": {Data: []byte("#\n")}, "dockers/scripts/hyperparams/hyperparameters_NA.json": {Data: []byte("{}")}},
		"nowhere":           {"dockers/scripts/xgboost_training.py": {Data: []byte("#\n")}},
	} {
		res, err := Compile(context.Background(), Input{DAG: e.DAG(), Configs: f.Configs, Catalog: c, Sources: sources})
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, want) })
		if warned != (name == "nowhere") {
			t.Errorf("hyperparameters %s: warned %v (%v)", name, warned, res.Warnings)
		}
	}
}

// An absolute local source_dir (Cursus accepts one) loads with a warning
// and compiles; the scripts it names are not in the workspace, so the
// built-in code of each step type runs in their place, which the compile
// says, rather than failing on the path.
func TestAbsoluteSourceDirFallsBackToBuiltinCode(t *testing.T) {
	c, s := fixtures(t)
	data, err := os.ReadFile("testdata/cursus/xgboost_simple_training.config.json")
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(`"source_dir": "dockers/scripts"`), []byte(`"source_dir": "/home/jane/fraud_model/dockers/scripts"`))
	f, err := config.Parse(data, s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(f.Warnings, func(w string) bool { return strings.Contains(w, "source_dir is the absolute local path") }) {
		t.Errorf("no warning for the absolute source_dir: %v", f.Warnings)
	}
	cat, _, _ := pipelines.Load()
	e, _ := cat.Get("xgboost_simple_training")
	res, err := Compile(context.Background(), Input{DAG: e.DAG(), Configs: f.Configs, Catalog: c, Sources: os.DirFS(cursusProject)})
	if err != nil {
		t.Fatal(err)
	}
	builtin := 0
	for _, a := range res.Artifacts {
		if strings.HasPrefix(a.Local, "/home/jane/") {
			t.Errorf("artifact %s names the unreadable absolute path", a.Local)
		}
		if strings.HasPrefix(a.Local, BuiltinPrefix) {
			builtin++
		}
	}
	if builtin == 0 {
		t.Errorf("no built-in code stands in for the scripts under the absolute source_dir: %+v", res.Artifacts)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "/home/jane/fraud_model/dockers/scripts/") && strings.Contains(w, "the built-in code of")
	}) {
		t.Errorf("no warning that built-in code replaces the absolute source_dir's scripts: %v", res.Warnings)
	}
}
