package config

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// ParseForCheck leaves a config with invalid values out, listed with its
// problems, and loads the others; Parse refuses the same document; both
// refuse a document that is not a config.json.
func TestParseForCheckKeepsInvalidConfigsAsFindings(t *testing.T) {
	s := builtinSchemas(t)
	raw, err := os.ReadFile("../../examples/xgboost-tabular/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["configuration"].(map[string]any)["specific"].(map[string]any)["XGBoostTraining"].(map[string]any)["training_instance_count"] = "many"
	bad, _ := json.Marshal(doc)

	var le *LoadError
	if _, err := Parse(bad, s); !errors.As(err, &le) || len(le.Problems) != 1 {
		t.Fatalf("Parse: %v", err)
	}
	f, err := ParseForCheck(bad, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Unloaded) != 1 || f.Unloaded[0].Key != "XGBoostTraining" || len(f.Unloaded[0].Problems) != 1 ||
		f.Unloaded[0].Problems[0].Field != "training_instance_count" {
		t.Fatalf("unloaded: %+v", f.Unloaded)
	}
	if _, ok := f.Get("XGBoostTraining"); ok {
		t.Error("the invalid config was loaded")
	}
	if _, ok := f.Get("Package"); !ok || len(f.Configs) != 8 {
		t.Errorf("the valid configs were not all loaded: %d", len(f.Configs))
	}
	if f, err := ParseForCheck([]byte(`{}`), s); err != nil || len(f.Configs) != 0 {
		t.Errorf("an empty document: %v %v", f, err)
	}
	if _, err := ParseForCheck([]byte(`{"configuration": []}`), s); err == nil {
		t.Error("a document that is not a config.json loaded")
	}
}
