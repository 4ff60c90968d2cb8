package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestLoadCursusFixture(t *testing.T) {
	s := fixtureSchemas(t)
	f, err := readFixture(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Keys(), ","); got != "TabularPreprocessing_training,XGBoostModel,XGBoostModelEval_calibration,XGBoostTraining" {
		t.Fatalf("keys = %s", got)
	}
	if f.CreatedAt != "2024-05-01T12:00:00" {
		t.Errorf("created_at = %q", f.CreatedAt)
	}
	// XGBoostModel's interface has no config section: its unknown key is
	// kept, passed through and reported; derived keys (in shared and
	// specific) are ignored without a word.
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "legacy_flag are passed through") {
		t.Errorf("warnings = %v", f.Warnings)
	}
	if m, _ := f.Get("XGBoostModel"); m.Values["legacy_flag"] != true {
		t.Errorf("legacy_flag not passed through: %+v", m.Values)
	}
	tp, _ := f.Get("TabularPreprocessing_training")
	if tp.StepType != "TabularPreprocessing" || tp.JobType != "training" || tp.Values["train_ratio"] != 0.8 ||
		tp.Values["author"] != "jane" || tp.Derived["script_path"] != "dockers/scripts/tabular_preprocessing.py" {
		t.Errorf("tabular = %+v", tp)
	}
	tr, _ := f.Get("XGBoostTraining")
	hp := tr.Values["hyperparameters"].(map[string]any)
	if _, ok := hp["__model_type__"]; ok {
		t.Error("nested __model_type__ kept")
	}
	if !reflect.DeepEqual(hp["full_field_list"], []any{"amount", "country"}) || hp["num_round"] != int64(300) {
		t.Errorf("hyperparameters = %#v", hp)
	}
	if tr.Values["framework_version"] != "1.7-1" {
		t.Errorf("framework_version = %v", tr.Values["framework_version"])
	}
	if _, ok := tr.Values["job_type"]; ok {
		t.Error("training without job_type got one")
	}
}

// The fixture follows the shared rule: re-saving the loaded configs puts
// exactly the fixture's shared fields (minus the derived ones an older
// writer put there) in shared, and specific holds the rest.
func TestSharedSpecificSplit(t *testing.T) {
	s := fixtureSchemas(t)
	raw, err := os.ReadFile("testdata/cursus_config.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Configuration struct {
			Shared   map[string]any            `json:"shared"`
			Specific map[string]map[string]any `json:"specific"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(raw, s)
	if err != nil {
		t.Fatal(err)
	}
	// execution_scoped_outputs is a field Cursus files lack: its default
	// is in every config, so it is shared.
	wantShared := []string{"execution_scoped_outputs"}
	for k := range fixture.Configuration.Shared {
		if k != "aws_region" && k != "pipeline_name" && k != "pipeline_s3_loc" {
			wantShared = append(wantShared, k)
		}
	}
	sort.Strings(wantShared)

	out, err := Marshal(f.Configs, "2024-05-01T12:00:00")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Configuration struct {
			Shared   map[string]any            `json:"shared"`
			Specific map[string]map[string]any `json:"specific"`
		} `json:"configuration"`
		Metadata struct {
			ConfigTypes  map[string]string   `json:"config_types"`
			CreatedAt    string              `json:"created_at"`
			FieldSources map[string][]string `json:"field_sources"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(doc.Configuration.Shared)); !reflect.DeepEqual(got, wantShared) {
		t.Errorf("shared = %v\nwant %v", got, wantShared)
	}
	// The rule itself, checked against every config: a shared field is in
	// every config with one value; a specific field is not.
	for field, v := range doc.Configuration.Shared {
		for _, c := range f.Configs {
			if canonical(c.Values[field]) != canonical(normalizeForCompare(v)) {
				t.Errorf("shared %s differs in %s", field, c.Key)
			}
		}
	}
	for key, spec := range doc.Configuration.Specific {
		if spec["__model_type__"] != doc.Metadata.ConfigTypes[key] {
			t.Errorf("%s: __model_type__ %v vs config_types %s", key, spec["__model_type__"], doc.Metadata.ConfigTypes[key])
		}
		for field := range spec {
			if _, dup := doc.Configuration.Shared[field]; dup {
				t.Errorf("%s.%s is in shared and specific", key, field)
			}
		}
	}
	if doc.Configuration.Specific["XGBoostTraining"]["model_output_s3"] == nil {
		t.Error("derived values belong in specific")
	}
	if got := doc.Metadata.FieldSources["job_type"]; !reflect.DeepEqual(got, []string{"TabularPreprocessing_training", "XGBoostModelEval_calibration"}) {
		t.Errorf("field_sources.job_type = %v", got)
	}
	if len(doc.Metadata.FieldSources["author"]) != 4 {
		t.Errorf("field_sources.author = %v", doc.Metadata.FieldSources["author"])
	}
	if _, ok := doc.Metadata.FieldSources["__model_type__"]; ok {
		t.Error("field_sources lists __model_type__")
	}
}

func normalizeForCompare(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

func TestMarshalRoundTripByteStable(t *testing.T) {
	s := fixtureSchemas(t)
	f, err := readFixture(s)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Marshal(f.Configs, "2025-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Marshal(f.Configs, "2025-01-02T03:04:05Z")
	if !bytes.Equal(first, again) {
		t.Fatal("Marshal is not deterministic")
	}
	f2, err := Parse(first, s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f2.Warnings, f.Warnings) {
		t.Errorf("re-saved file has warnings %v, want the original's %v", f2.Warnings, f.Warnings)
	}
	second, _ := Marshal(f2.Configs, "2025-01-02T03:04:05Z")
	if !bytes.Equal(first, second) {
		t.Errorf("round trip changed bytes:\n%s\n---\n%s", first, second)
	}
	if !bytes.HasPrefix(first, []byte("{\n  \"configuration\": {\n    \"shared\": {\n      \"author\": \"jane\",")) {
		t.Errorf("layout: %.120s", first)
	}
}

func TestMarshalEdgeCases(t *testing.T) {
	s := fixtureSchemas(t)
	cfg, probs := s.Build("XGBoostModel", validBase(), map[string]any{"model_environment": map[string]any{"Q": "a<b&c"}})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	out, err := Marshal([]Config{cfg}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"a<b&c"`)) {
		t.Errorf("HTML characters escaped: %s", out)
	}
	var doc map[string]map[string]map[string]any
	_ = json.Unmarshal(out, &doc)
	if len(doc["configuration"]["shared"]) != 0 {
		t.Errorf("a single config shares nothing: %v", doc["configuration"]["shared"])
	}
	if _, err := Marshal([]Config{cfg, cfg}, "t"); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate keys: %v", err)
	}
}

func TestParseRejectsInvalid(t *testing.T) {
	s := fixtureSchemas(t)
	raw, _ := os.ReadFile("testdata/cursus_config.json")
	bad := strings.Replace(string(raw), `"region": "NA"`, `"region": "Mars"`, 1)
	bad = strings.Replace(bad, `"train_ratio": 0.8`, `"train_ratio": "high"`, 1)
	_, err := Parse([]byte(bad), s)
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	// region is wrong in all four configs, train_ratio in one.
	if len(le.Problems) != 5 {
		t.Errorf("problems = %v", le.Problems)
	}
	nodes := map[string]bool{}
	for _, p := range le.Problems {
		nodes[p.Node] = true
	}
	if len(nodes) != 4 {
		t.Errorf("problems should name their configs: %v", le.Problems)
	}
	for name, doc := range map[string]string{
		"not json":          `{`,
		"array":             `[]`,
		"trailing":          `{} {}`,
		"empty":             `{}`,
		"specific not obj":  `{"configuration":{"specific":{"A":1}},"metadata":{"config_types":{"A":"XGBoostModelStepConfig"}}}`,
		"config_types bad":  `{"configuration":{"specific":{}},"metadata":{"config_types":{"A":3}}}`,
		"unknown class":     `{"configuration":{"shared":{},"specific":{"A":{}}},"metadata":{"config_types":{"A":"XGBoostTrainingConfg"}}}`,
		"no model type":     `{"configuration":{"specific":{"A":{}}}}`,
		"configuration arr": `{"configuration":[]}`,
	} {
		_, err := Parse([]byte(doc), s)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if name == "unknown class" && !strings.Contains(err.Error(), "XGBoostTrainingConfig") {
			t.Errorf("unknown class should suggest: %v", err)
		}
	}
	// The configuration wrapper is optional.
	f, err := Parse([]byte(`{"shared":{},"specific":{"XGBoostModel":{"__model_type__":"XGBoostModelStepConfig","author":"a","bucket":"my-bucket","role":"arn:aws:iam::123456789012:role/R","region":"EU","service_name":"s","pipeline_version":"1"}}}`), s)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := f.Get("XGBoostModel"); c.Derived["aws_region"] != "eu-west-1" {
		t.Errorf("derived = %v", c.Derived)
	}
}

// readFixture loads testdata/cursus_config.json.
func readFixture(s *Schemas) (*File, error) {
	data, err := os.ReadFile("testdata/cursus_config.json")
	if err != nil {
		return nil, err
	}
	return Parse(data, s)
}
