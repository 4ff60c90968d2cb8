package compiler

import (
	"context"
	"strings"
	"testing"
)

// An undocumented hyperparameter key reaches the compile and validate
// warnings, naming the node and the nearest documented key.
func TestCompileWarnsOnUnknownHyperparameter(t *testing.T) {
	in := sampleInputWith(t, e2eDAG(), map[string]map[string]any{
		"XGBoostTraining": {"hyperparameters": map[string]any{"label_name": "label", "num_rouns": 100}},
	})
	want := `node "XGBoostTraining": hyperparameters.num_rouns is not a documented xgboost hyperparameter (did you mean num_round`
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), want) {
		t.Errorf("compile warnings %q lack %q", res.Warnings, want)
	}
	v := Validate(context.Background(), in)
	if !v.IsValid || !strings.Contains(strings.Join(v.Warnings, "\n"), want) {
		t.Errorf("validate: valid %v, warnings %q lack %q", v.IsValid, v.Warnings, want)
	}
}
