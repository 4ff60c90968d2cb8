package localrun

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

func TestExampleProjectRuns(t *testing.T) {
	needRuntime(t)
	res := compileFS(t, os.DirFS("../.."), "examples/xgboost-tabular/dag.json", "examples/xgboost-tabular/config.json")
	data, _ := os.ReadFile("../../examples/xgboost-tabular/data/tabular.csv")
	r := testRunner(t, Settings{})
	rep, err := r.Run(context.Background(), Request{Definition: res.JSON, Code: CodeFromArtifacts(res.Artifacts),
		SampleData: map[string][]byte{"tabular.csv": data}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(rep, "", " ")
	t.Logf("%s", b)
}
