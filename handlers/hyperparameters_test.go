package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// config.field_info shows the documented hyperparameters of a training or
// tuning step's framework, and the hyperparameters field points at them.
func TestConfigFieldInfoShowsHyperparameters(t *testing.T) {
	reg, _ := configEnv(t)
	for step, want := range map[string][]string{
		"XGBoostTrainingConfig": {"xgboost", "num_round", "eta", "max_depth", "objective", "label_name"},
		"LightGBMTuning":        {"lightgbm", "num_leaves", "learning_rate", "boosting_type"},
		"PyTorchTraining":       {"pytorch", "lr", "batch_size", "max_epochs", "model_class"},
	} {
		for _, categorized := range []string{"false", "true"} {
			data := cfgOK(t, call(t, reg, "config.field_info", `{"config_class":"`+step+`","categorized":`+categorized+`}`))
			hp, ok := data["hyperparameters"].(map[string]any)
			if !ok || hp["framework"] != want[0] {
				t.Fatalf("%s: hyperparameters = %v", step, data["hyperparameters"])
			}
			byName := map[string]map[string]any{}
			for _, f := range hp["fields"].([]any) {
				m := f.(map[string]any)
				byName[m["name"].(string)] = m
			}
			for _, k := range want[1:] {
				if f := byName[k]; f == nil || f["type"] == nil || f["description"] == "" {
					t.Errorf("%s: field %s = %v", step, k, f)
				}
			}
		}
		data := cfgOK(t, call(t, reg, "config.field_info", `{"config_class":"`+step+`"}`))
		for _, f := range data["requirements"].([]any) {
			if m := f.(map[string]any); m["name"] == "hyperparameters" && !strings.Contains(m["description"].(string), "config.field_info") {
				t.Errorf("%s: hyperparameters description does not point at the schema: %v", step, m["description"])
			}
		}
	}
	eta := cfgOK(t, call(t, reg, "config.field_info", `{"config_class":"XGBoostTraining"}`))["hyperparameters"].(map[string]any)["fields"].([]any)
	for _, f := range eta {
		if m := f.(map[string]any); m["name"] == "eta" && (m["minimum"] != 0.0 || m["maximum"] != 1.0 || m["default"] != 0.3) {
			t.Errorf("eta = %v", m)
		}
	}
	if data := cfgOK(t, call(t, reg, "config.field_info", `{"config_class":"TabularPreprocessing"}`)); data["hyperparameters"] != nil {
		t.Errorf("a processing step shows hyperparameters: %v", data["hyperparameters"])
	}
}

// config.merge_save refuses a bad hyperparameter value and saves a config
// with an unknown key, warning with the nearest documented key.
func TestConfigMergeSaveChecksHyperparameters(t *testing.T) {
	reg, deps := configEnv(t)
	base, perNode := cfgSampleArgs(t, deps, []string{"TabularPreprocessing_training", "XGBoostTraining"})
	perNode["XGBoostTraining"]["hyperparameters"] = map[string]any{"label_name": "label", "eta": 3}
	args := map[string]any{"dag": json.RawMessage(twoNodeDAG), "base": base, "per_node": perNode, "created_at": "2025-01-01T00:00:00Z"}
	res := call(t, reg, "config.merge_save", cfgJSONArg(t, args))
	mustFail(t, res, registry.CodeConfigInvalid)
	if !strings.Contains(string(res.Encode()), "hyperparameters.eta") {
		t.Errorf("no eta problem: %s", res.Encode())
	}
	perNode["XGBoostTraining"]["hyperparameters"] = map[string]any{"label_name": "label", "max_dept": 4}
	res = call(t, reg, "config.merge_save", cfgJSONArg(t, args))
	mustOK(t, res)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "XGBoostTraining: hyperparameters.max_dept") ||
		!strings.Contains(res.Warnings[0], "did you mean max_depth") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}
