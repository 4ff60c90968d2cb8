package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
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
			data := answer[configFieldInfoOut](t, call(t, reg, "config.field_info", `{"config_class":"`+step+`","categorized":`+categorized+`}`))
			hp := data.Hyperparameters
			if hp == nil || hp.Framework != want[0] {
				t.Fatalf("%s: hyperparameters = %+v", step, hp)
			}
			byName := map[string]*config.Hyperparameter{}
			for _, f := range hp.Fields {
				byName[f.Name] = f
			}
			for _, k := range want[1:] {
				if f := byName[k]; f == nil || f.Type == "" || f.Description == "" {
					t.Errorf("%s: field %s = %+v", step, k, f)
				}
			}
		}
		data := answer[configFieldInfoOut](t, call(t, reg, "config.field_info", `{"config_class":"`+step+`"}`))
		if data.Requirements == nil {
			t.Fatalf("%s: no requirements", step)
		}
		for _, f := range *data.Requirements {
			if f.Name == "hyperparameters" && !strings.Contains(f.Description, "config.field_info") {
				t.Errorf("%s: hyperparameters description does not point at the schema: %v", step, f.Description)
			}
		}
	}
	xgb := answer[configFieldInfoOut](t, call(t, reg, "config.field_info", `{"config_class":"XGBoostTraining"}`)).Hyperparameters
	if xgb == nil {
		t.Fatal("XGBoostTraining shows no hyperparameters")
	}
	sawEta := false
	for _, f := range xgb.Fields {
		if f.Name != "eta" {
			continue
		}
		sawEta = true
		if f.Minimum == nil || *f.Minimum != 0 || f.Maximum == nil || *f.Maximum != 1 || f.Default != 0.3 {
			t.Errorf("eta = %+v", f)
		}
	}
	if !sawEta {
		t.Error("no eta among XGBoostTraining's hyperparameters")
	}
	if data := answer[configFieldInfoOut](t, call(t, reg, "config.field_info", `{"config_class":"TabularPreprocessing"}`)); data.Hyperparameters != nil {
		t.Errorf("a processing step shows hyperparameters: %+v", data.Hyperparameters)
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
