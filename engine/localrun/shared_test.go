package localrun

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/pipelines"
)

// sharedDAG loads a shared DAG by id.
func sharedDAG(t testing.TB, id string) *dag.DAG {
	t.Helper()
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cat.List() {
		if e.ID == id {
			return e.DAG()
		}
	}
	t.Fatalf("no shared DAG %s", id)
	return nil
}

// compileReadmeWay compiles a DAG configured as the README does: the
// config template's sample values, no caller code, extra per-node values
// on top.
func compileReadmeWay(t testing.TB, d *dag.DAG, extra map[string]map[string]any, sources fs.FS) *compiler.Result {
	t.Helper()
	cat, schemas := enginetest.Catalog(t)
	rep, err := config.Requirements(context.Background(), d, schemas)
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
	configs, probs, _ := schemas.BuildDAG(context.Background(), d, base, perNode)
	if len(probs) > 0 {
		t.Fatalf("config problems: %v", probs)
	}
	res, err := compiler.Compile(context.Background(), compiler.Input{DAG: d, Configs: configs, Catalog: cat, Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// dataValues are the config values the README's config step asks for that
// depend on the data (config.requirements marks them essential): the
// built-in data's label is the column to stratify by.
var dataValues = map[string]map[string]any{
	"StratifiedSampling_training": {"strata_column": "label"},
}

// shortDAGs are the shared DAGs the test runs by default (CI, -short):
// one XGBoost end to end, one PyTorch with a model and batch transform,
// one LightGBM. LOCALRUN_ALL_DAGS=1 runs every shared DAG:
//
//	LOCALRUN_ALL_DAGS=1 go test ./engine/localrun -run TestSharedDAGsRunEndToEnd -timeout 2h
var shortDAGs = map[string]bool{"xgboost_complete_e2e": true, "pytorch_batch_inference": true, "lightgbm_simple_training": true}

// Acceptance (issue 35): every XGBoost and PyTorch shared DAG, configured
// the README's way with no caller code, runs end to end from its compiled
// definition on the built-in data: every step succeeds, an evaluation's
// metrics.json has auc_roc > 0.7, transform output rows carry the id and
// label joined back, and each registered package answers its sample
// payload. LightGBM DAGs run up to their first LightGBM step, which is
// runtime_unavailable naming lightgbm.
func TestSharedDAGsRunEndToEnd(t *testing.T) {
	needRuntime(t, "xgboost", "torch", "sklearn", "pandas")
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	all := os.Getenv("LOCALRUN_ALL_DAGS") != ""
	r := testRunner(t, Settings{})
	for _, e := range cat.List() {
		if !all && !shortDAGs[e.ID] {
			continue
		}
		t.Run(e.ID, func(t *testing.T) {
			d := e.DAG()
			extra := map[string]map[string]any{}
			hasPayload := false
			for _, n := range d.Nodes {
				if v, ok := dataValues[n]; ok {
					extra[n] = v
				}
				hasPayload = hasPayload || strings.HasPrefix(n, "Payload")
			}
			res := compileReadmeWay(t, d, extra, nil)
			objects := t.TempDir()
			rep, err := r.Run(context.Background(), Request{Definition: res.JSON, Code: CodeFromArtifacts(res.Artifacts), ObjectDir: objects})
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(e.ID, "lightgbm") {
				checkLightGBM(t, rep)
				return
			}
			if !rep.OK {
				t.Fatalf("first failure: %+v\n%s", rep.FirstFailure, logs(rep))
			}
			checkOutcomes(t, rep, objects, hasPayload)
		})
	}
}

// checkLightGBM: the steps before the first LightGBM step succeed, it is
// runtime_unavailable naming lightgbm, and the rest are skipped.
func checkLightGBM(t *testing.T, rep *Report) {
	t.Helper()
	f := rep.FirstFailure
	if rep.OK || f == nil || !strings.Contains(f.Step, "LightGBM") {
		t.Fatalf("first failure %+v, want the first LightGBM step\n%s", f, logs(rep))
	}
	seen := false
	for _, s := range rep.Steps {
		switch {
		case s.Name == f.Step:
			seen = true
			if s.Status != StatusRuntimeUnavailable || s.Missing != "lightgbm" {
				t.Errorf("step %s: %s missing %q, want runtime_unavailable naming lightgbm", s.Name, s.Status, s.Missing)
			}
		case s.Status == StatusFailed:
			t.Errorf("step %s failed: %s", s.Name, s.Error)
		case s.Status == StatusSucceeded && strings.Contains(s.Name, "LightGBM"):
			t.Errorf("LightGBM step %s succeeded", s.Name)
		}
	}
	if !seen {
		t.Fatal("the first failure is not in the report")
	}
}

// checkOutcomes looks at what the steps wrote.
func checkOutcomes(t *testing.T, rep *Report, objects string, hasPayload bool) {
	t.Helper()
	file := func(uri string) []byte {
		b, err := os.ReadFile(filepath.Join(objects, strings.TrimPrefix(uri, "s3://")))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, s := range rep.Steps {
		switch {
		case s.Status != StatusSucceeded:
			t.Errorf("step %s: %s %s", s.Name, s.Status, s.Error)
		case strings.Contains(s.Name, "ModelEval"):
			found := false
			for _, o := range s.Objects {
				if path.Base(o.URI) != "metrics.json" {
					continue
				}
				found = true
				var m map[string]any
				if err := json.Unmarshal(file(o.URI), &m); err != nil {
					t.Fatalf("%s: %v", o.URI, err)
				}
				if auc, _ := m["auc_roc"].(float64); auc <= 0.7 {
					t.Errorf("%s: auc_roc %v, want > 0.7", o.URI, m["auc_roc"])
				}
			}
			if !found {
				t.Errorf("step %s wrote no metrics.json: %v", s.Name, s.Objects)
			}
		case s.Type == "Transform":
			checkTransform(t, s, file)
		case s.Type == "RegisterModel" && hasPayload:
			if !strings.Contains(s.LogTail, "answered") {
				t.Errorf("package %s answered no sample: %q", s.Name, s.LogTail)
			}
		}
	}
}

// checkTransform: every output row starts with an id and a 0/1 label (the
// input record joined back), ids unique; a header line of the input comes
// back as a header, joined with the answer's.
func checkTransform(t *testing.T, s StepReport, file func(string) []byte) {
	t.Helper()
	rows := 0
	ids := map[string]bool{}
	for _, o := range s.Objects {
		for i, line := range strings.Split(strings.TrimSpace(string(file(o.URI))), "\n") {
			f := strings.Split(line, ",")
			if i == 0 && len(f) > 2 && f[0] == "id" && f[1] == "label" {
				continue
			}
			if len(f) < 3 || (f[1] != "0" && f[1] != "1" && f[1] != "0.0" && f[1] != "1.0") || ids[f[0]] {
				t.Fatalf("%s: row %q does not start with a new id and a label", o.URI, line)
			}
			ids[f[0]] = true
			rows++
		}
	}
	if rows == 0 {
		t.Errorf("transform %s wrote no rows", s.Name)
	}
}
