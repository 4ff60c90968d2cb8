package config

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
)

// hpBuild builds stepType's config from sample essentials with hp as its
// hyperparameters.
func hpBuild(t *testing.T, s *Schemas, stepType string, hp map[string]any) (Config, []Problem) {
	t.Helper()
	d := dag.New([]string{stepType}, nil)
	rep, err := Requirements(context.Background(), d, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := SampleValues(rep)
	if len(missing) > 0 {
		t.Fatalf("%s: no sample for %v", stepType, missing)
	}
	spec := perNode[stepType]
	spec["hyperparameters"] = hp
	return s.Build(stepType, base, spec)
}

func hasProblem(probs []Problem, field, kind string) bool {
	for _, p := range probs {
		if p.Field == field && p.Kind == kind {
			return true
		}
	}
	return false
}

// Each framework's schema rejects a wrong type and an out-of-range value
// of a documented key, and warns on a misspelt key with the nearest one.
func TestHyperparameterSchemasPerFramework(t *testing.T) {
	s := builtinSchemas(t)
	cases := []struct {
		steps             []string
		framework         string
		badType, badRange map[string]any
		typeKey, rangeKey string
		typo, nearest     string
		enum              map[string]any
		enumKey           string
	}{
		{steps: []string{"XGBoostTraining", "XGBoostTuning"}, framework: "xgboost",
			badType: map[string]any{"max_depth": "deep"}, typeKey: "max_depth",
			badRange: map[string]any{"eta": 1.5}, rangeKey: "eta",
			typo: "num_roud", nearest: "num_round",
			enum: map[string]any{"objective": "binary:logstic"}, enumKey: "objective"},
		{steps: []string{"LightGBMTraining", "LightGBMTuning"}, framework: "lightgbm",
			badType: map[string]any{"num_leaves": "many"}, typeKey: "num_leaves",
			badRange: map[string]any{"learning_rate": int64(0)}, rangeKey: "learning_rate",
			typo: "num_leafs", nearest: "num_leaves",
			enum: map[string]any{"boosting_type": "gbtree"}, enumKey: "boosting_type"},
		{steps: []string{"PyTorchTraining", "PyTorchTuning"}, framework: "pytorch",
			badType: map[string]any{"batch_size": 3.5}, typeKey: "batch_size",
			badRange: map[string]any{"max_epochs": int64(0)}, rangeKey: "max_epochs",
			typo: "max_epoch", nearest: "max_epochs",
			enum: map[string]any{"optimizer": "adagrad"}, enumKey: "optimizer"},
	}
	for _, c := range cases {
		for _, step := range c.steps {
			sc, err := s.ForStep(step)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Hyperparameters == nil || sc.Hyperparameters.Framework != c.framework {
				t.Fatalf("%s: hyperparameter schema %+v, want %s", step, sc.Hyperparameters, c.framework)
			}
			for _, bad := range []struct {
				hp   map[string]any
				key  string
				kind string
			}{{c.badType, c.typeKey, KindType}, {c.badRange, c.rangeKey, KindRange}, {c.enum, c.enumKey, KindEnum}} {
				_, probs := hpBuild(t, s, step, bad.hp)
				if !hasProblem(probs, "hyperparameters."+bad.key, bad.kind) {
					t.Errorf("%s: %v gave %v, want a %s problem", step, bad.hp, probs, bad.kind)
				}
			}
			cfg, probs := hpBuild(t, s, step, map[string]any{c.typo: int64(10), "label_name": "y"})
			if len(probs) > 0 {
				t.Errorf("%s: an unknown key is no error, got %v", step, probs)
			}
			if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "hyperparameters."+c.typo) ||
				!strings.Contains(cfg.Warnings[0], "did you mean "+c.nearest) {
				t.Errorf("%s: warnings %q, want one naming %s and suggesting %s", step, cfg.Warnings, c.typo, c.nearest)
			}
			if v := cfg.Values["hyperparameters"].(map[string]any)[c.typo]; v != int64(10) {
				t.Errorf("%s: the unknown key was not kept as given: %v", step, v)
			}
		}
	}
}

// Hyperparameters stay optional: a training step's hyperparameters may
// live in <source_dir>/hyperparams/ instead, and no documented key is
// required.
func TestHyperparametersNotMoreRequired(t *testing.T) {
	s := builtinSchemas(t)
	for _, step := range []string{"XGBoostTraining", "LightGBMTraining", "PyTorchTraining"} {
		sc, _ := s.ForStep(step)
		before := sc.index["hyperparameters"].Required()
		cfg, probs := hpBuild(t, s, step, map[string]any{})
		if len(probs) > 0 || len(cfg.Warnings) > 0 {
			t.Errorf("%s: empty hyperparameters gave %v %v", step, probs, cfg.Warnings)
		}
		cfg, probs = hpBuild(t, s, step, map[string]any{"eta": nil, "lr": nil, "num_leaves": nil})
		if len(probs) > 0 {
			t.Errorf("%s: null values gave %v", step, probs)
		}
		if sc.index["hyperparameters"].Required() != before {
			t.Errorf("%s: requiredness changed", step)
		}
	}
}

// A tuning step's ranges are checked against the framework schema: bounds
// outside a key's range and numeric ranges over a non-numeric key are
// problems, a range over an unknown key a warning with a suggestion.
func TestTuningRangesCheckedAgainstHyperparameters(t *testing.T) {
	s := builtinSchemas(t)
	build := func(step string, ss map[string]any) (Config, []Problem) {
		d := dag.New([]string{step}, nil)
		rep, _ := Requirements(context.Background(), d, s)
		base, perNode, _ := SampleValues(rep)
		perNode[step]["search_space"] = ss
		return s.Build(step, base, perNode[step])
	}
	rng := func(kind string, r map[string]any) map[string]any { return map[string]any{kind: []any{r}} }
	cfg, probs := build("XGBoostTuning", rng("continuous", map[string]any{"name": "eta", "min": 0.01, "max": 2.0}))
	if !hasProblem(probs, "search_space.continuous[0].max", KindRange) {
		t.Errorf("eta up to 2: %v", probs)
	}
	_, probs = build("LightGBMTuning", rng("continuous", map[string]any{"name": "learning_rate", "min": 0, "max": 0.3}))
	if !hasProblem(probs, "search_space.continuous[0].min", KindRange) {
		t.Errorf("learning_rate from 0: %v", probs)
	}
	_, probs = build("XGBoostTuning", rng("integer", map[string]any{"name": "objective", "min": 1, "max": 3}))
	if !hasProblem(probs, "search_space.integer[0]", KindType) {
		t.Errorf("integer range over objective: %v", probs)
	}
	_, probs = build("PyTorchTuning", rng("categorical", map[string]any{"name": "optimizer", "values": []any{"Adam", "Lion"}}))
	if !hasProblem(probs, "search_space.categorical[0].values[1]", KindEnum) {
		t.Errorf("optimizer Lion: %v", probs)
	}
	cfg, probs = build("PyTorchTuning", rng("continuous", map[string]any{"name": "learning_rat", "min": 0.001, "max": 0.1}))
	if len(probs) > 0 || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "search_space.continuous[0].name") {
		t.Errorf("unknown range name: problems %v, warnings %q", probs, cfg.Warnings)
	}
	cfg, probs = build("XGBoostTuning", rng("integer", map[string]any{"name": "max_dpth", "min": 3, "max": 9}))
	if len(probs) > 0 || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "did you mean max_depth") {
		t.Errorf("misspelt range name: problems %v, warnings %q", probs, cfg.Warnings)
	}
	cfg, probs = build("XGBoostTuning", rng("integer", map[string]any{"name": "max_depth", "min": 3, "max": 9}))
	if len(probs) > 0 || len(cfg.Warnings) > 0 {
		t.Errorf("a good range: problems %v, warnings %q", probs, cfg.Warnings)
	}
}

// The example project's config loads with no hyperparameter finding, and
// a load reports an unknown key as a warning and a bad value as a problem.
func TestExampleConfigHyperparameters(t *testing.T) {
	s := builtinSchemas(t)
	raw, err := os.ReadFile("../../examples/xgboost-tabular/config.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(raw, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range f.Warnings {
		if strings.Contains(w, "hyperparameters") {
			t.Errorf("example: %s", w)
		}
	}
	typo := strings.Replace(string(raw), `"num_round": 50`, `"num_rounds": 50`, 1)
	if f, err = Parse([]byte(typo), s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(f.Warnings, "\n"), "configuration.specific.XGBoostTraining: hyperparameters.num_rounds is not a documented xgboost hyperparameter (did you mean num_round") {
		t.Errorf("warnings %q", f.Warnings)
	}
	bad := strings.Replace(string(raw), `"max_depth": 4`, `"max_depth": -4`, 1)
	_, err = Parse([]byte(bad), s)
	le, ok := err.(*LoadError)
	if !ok || !hasProblem(le.Problems, "hyperparameters.max_depth", KindRange) {
		t.Errorf("max_depth -4: %v", err)
	}
}

// Every built-in shared DAG's generated config carries hyperparameters
// (and tuning ranges) its framework schema accepts without a finding.
func TestSharedDAGsHyperparametersAccepted(t *testing.T) {
	s := builtinSchemas(t)
	cat, lprobs, err := pipelines.Load()
	if err != nil || len(lprobs) > 0 {
		t.Fatalf("pipelines: %v %v", err, lprobs)
	}
	checked := 0
	for _, e := range cat.List() {
		d := e.DAG()
		rep, err := Requirements(context.Background(), d, s)
		if err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		base, perNode, _ := SampleValues(rep)
		configs, probs, err := s.BuildDAG(context.Background(), d, base, perNode)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			if strings.HasPrefix(p.Field, "hyperparameters") || strings.HasPrefix(p.Field, "search_space") {
				t.Errorf("%s: %s", e.ID, p)
			}
		}
		for _, c := range configs {
			sc, _ := s.ForStep(c.StepType)
			if sc.Hyperparameters == nil {
				continue
			}
			checked++
			if len(c.Warnings) > 0 {
				t.Errorf("%s: %s: %q", e.ID, c.Key, c.Warnings)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no shared DAG has a step with a hyperparameter schema")
	}
}
