package compiler

import (
	"context"
	"sync"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
	"github.com/cursus-dev/cursus/engine/steps"
)

var (
	catOnce sync.Once
	cat     *steps.Catalog
	schemas *config.Schemas
	catErr  error
)

func fixtures(t testing.TB) (*steps.Catalog, *config.Schemas) {
	t.Helper()
	catOnce.Do(func() {
		cat, _, catErr = steps.LoadCatalog()
		if catErr == nil {
			schemas, catErr = config.LoadSchemas(cat)
		}
	})
	if catErr != nil {
		t.Fatal(catErr)
	}
	return cat, schemas
}

// sampleInput builds configs for d from the config requirements and their
// sample values, as a user filling every essential field would.
func sampleInput(t testing.TB, d *dag.DAG) Input {
	t.Helper()
	return sampleInputWith(t, d, nil)
}

// sampleInputWith is sampleInput with extra per-node values.
func sampleInputWith(t testing.TB, d *dag.DAG, extra map[string]map[string]any) Input {
	t.Helper()
	c, s := fixtures(t)
	rep, err := config.Requirements(context.Background(), d, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := config.SampleValues(rep)
	if len(missing) > 0 {
		t.Fatalf("no sample values for %v", missing)
	}
	for node, vals := range extra {
		if perNode[node] == nil {
			perNode[node] = map[string]any{}
		}
		for k, v := range vals {
			perNode[node][k] = v
		}
	}
	configs, probs, _ := s.BuildDAG(context.Background(), d, base, perNode)
	if len(probs) > 0 {
		t.Fatalf("config problems: %v", probs)
	}
	return Input{DAG: d, Configs: configs, Catalog: c}
}

func e2eDAG() *dag.DAG {
	return dag.New(
		[]string{"DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining",
			"DummyDataLoading_calibration", "TabularPreprocessing_calibration", "XGBoostModelEval_calibration",
			"ModelCalibration_calibration", "Package", "Payload", "Registration"},
		[][2]string{
			{"DummyDataLoading_training", "TabularPreprocessing_training"},
			{"TabularPreprocessing_training", "XGBoostTraining"},
			{"DummyDataLoading_calibration", "TabularPreprocessing_calibration"},
			{"XGBoostTraining", "XGBoostModelEval_calibration"},
			{"TabularPreprocessing_calibration", "XGBoostModelEval_calibration"},
			{"XGBoostModelEval_calibration", "ModelCalibration_calibration"},
			{"XGBoostTraining", "Package"},
			{"ModelCalibration_calibration", "Package"},
			{"XGBoostTraining", "Payload"},
			{"Package", "Registration"},
			{"Payload", "Registration"},
		})
}

func TestCompileE2E(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	t.Logf("%s", res.JSON)
}
