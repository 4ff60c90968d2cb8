package localrun

import (
	"context"
	"testing"
)

// BenchmarkLocalRunXGBoostCompleteE2E runs xgboost_complete_e2e from its
// compiled definition on the built-in data and reports the wall time of
// the run and its ratio to the sum of the jobs' own run times (the
// emulation's overhead: inputs laid out, outputs collected, archives
// packed, models loaded). Run it with
//
//	go test ./engine/localrun -run '^$' -bench LocalRun -benchtime 1x
func BenchmarkLocalRunXGBoostCompleteE2E(b *testing.B) {
	needRuntime(b, "xgboost", "sklearn", "pandas")
	res := compileReadmeWay(b, sharedDAG(b, "xgboost_complete_e2e"), nil, nil)
	r := testRunner(b, Settings{})
	code := CodeFromArtifacts(res.Artifacts)
	var wall, scripts float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := r.Run(context.Background(), Request{Definition: res.JSON, Code: code})
		if err != nil {
			b.Fatal(err)
		}
		wall += rep.DurationSeconds
		scripts += rep.ScriptSeconds
	}
	b.ReportMetric(wall/float64(b.N), "wall-s/run")
	b.ReportMetric(scripts/float64(b.N), "script-s/run")
	if scripts > 0 {
		b.ReportMetric(wall/scripts, "wall/scripts")
	}
}
