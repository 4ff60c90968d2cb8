package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

const exampleDir = "../examples/xgboost-tabular"

// copyExample copies examples/xgboost-tabular into <root>/ex.
func copyExample(t *testing.T, root string) {
	t.Helper()
	if err := os.CopyFS(filepath.Join(root, "ex"), os.DirFS(exampleDir)); err != nil {
		t.Fatalf("copy the example project: %v", err)
	}
}

// exampleDAG reads the example's dag.json: every node and edge, so the tests
// follow the shipped DAG rather than a list of their own.
func exampleDAG(t *testing.T) (nodes []string, edges [][2]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(exampleDir, "dag.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		DAG struct {
			Nodes []string    `json:"nodes"`
			Edges [][2]string `json:"edges"`
		} `json:"dag"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("dag.json: %v", err)
	}
	if len(f.DAG.Nodes) == 0 {
		t.Fatal("dag.json has no nodes")
	}
	return f.DAG.Nodes, f.DAG.Edges
}

// needPython3 skips when no interpreter exists, except in CI, where one is
// provisioned and its absence is a failure rather than a silent pass.
func needPython3(t *testing.T) {
	t.Helper()
	err := scriptrun.NewRunner(1).Available()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("python3 is required in CI: %v", err)
	}
	t.Skipf("python3 unavailable (set CI to make this a failure): %v", err)
}

func exampleCatalog(t *testing.T) *steps.Catalog {
	t.Helper()
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestExampleProjectPassesAlignment(t *testing.T) {
	reg, root := newTestRegistry(t)
	copyExample(t, root)
	nodes, _ := exampleDAG(t)
	args, _ := json.Marshal(map[string]any{"target_scripts": nodes, "source_dir": "ex/scripts"})
	data := answer[alignmentOut](t, call(t, reg, "validate.alignment", string(args)))
	if n := data.CriticalIssueCount; n != 0 {
		t.Errorf("%d critical/error findings: %+v", n, data.CriticalIssues)
	}
	reports := data.Results
	if len(reports) != len(nodes) {
		t.Fatalf("%d reports for %d DAG nodes", len(reports), len(nodes))
	}
	cat := exampleCatalog(t)
	for i, rep := range reports {
		res, err := cat.Resolve(nodes[i])
		if err != nil {
			t.Fatal(err)
		}
		iface, _ := cat.Get(res.StepType)
		for _, f := range rep.Findings {
			if f.Blocking() {
				t.Errorf("%s: %s finding %+v", nodes[i], f.Level, f)
			}
		}
		if iface.Contract.EntryPoint == "" {
			continue
		}
		// A step with a script must have been checked against the example's
		// script, not passed for want of one.
		if want := "ex/scripts/" + iface.Contract.EntryPoint; rep.Script != want || rep.Status != validate.StatusPassed {
			t.Errorf("%s: status %v, script %v; want %s checked and passed", nodes[i], rep.Status, rep.Script, want)
		}
	}
}

func TestExampleProjectRunsEndToEnd(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	copyExample(t, root)
	nodes, edges := exampleDAG(t)
	cat := exampleCatalog(t)
	// The only data the caller supplies is the CSV each loader reads; every
	// other input comes from an upstream node or, for the training step's
	// hyperparameters, from config.json as compile ships them.
	samples := map[string]any{}
	for _, n := range nodes {
		if res, _ := cat.Resolve(n); res.StepType == "DummyDataLoading" {
			samples[n] = map[string]string{"data_source": "ex/data/tabular.csv"}
		}
	}
	if len(samples) != 2 {
		t.Fatalf("expected two data loaders in the example DAG, found %v", samples)
	}
	args, _ := json.Marshal(map[string]any{"dag_file": "ex/dag.json", "config_path": "ex/config.json",
		"source_dir": "ex/scripts", "sample_inputs": samples})
	res := call(t, reg, "validate.run_scripts", string(args))
	data := answer[verify.RunScriptsReport](t, res)
	if !data.PipelineSuccess {
		t.Fatalf("example run failed: %s", res.Encode())
	}
	results, skipped, order := data.ScriptResults, data.SkippedNodes, data.ExecutionOrder
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	for _, e := range edges {
		a, okA := pos[e[0]]
		b, okB := pos[e[1]]
		if okA && okB && a >= b {
			t.Errorf("%s ran after its consumer %s: %v", e[0], e[1], order)
		}
	}
	for _, n := range nodes {
		r, _ := cat.Resolve(n)
		iface, _, err := cat.ForJobType(r.StepType, r.JobType)
		if err != nil {
			t.Fatal(err)
		}
		declared := iface.Contract.Outputs.Keys()
		got, ran := results[n]
		if !ran {
			// Only a step with no script and nothing to produce may be skipped.
			if _, ok := skipped[n]; !ok || iface.Contract.EntryPoint != "" || len(declared) != 0 {
				t.Errorf("%s neither ran nor was skipped as script-less (skipped: %v)", n, skipped)
			}
			continue
		}
		if !got.Success {
			t.Errorf("%s failed: %v", n, got.ErrorMessage)
		}
		produced := map[string]bool{}
		for _, o := range got.Outputs {
			if o.Produced && o.Bytes > 0 {
				produced[o.Name] = true
			}
		}
		for _, name := range declared {
			if !produced[name] {
				t.Errorf("%s did not produce contract output %s (outputs: %+v)", n, name, got.Outputs)
			}
		}
		if len(declared) == 0 {
			t.Errorf("%s ran but its contract declares no outputs to check", n)
		}
	}
	if ran := len(results) + len(skipped); ran != len(nodes) {
		t.Errorf("%d nodes accounted for, DAG has %d", ran, len(nodes))
	}
	// No hyperparameters sample was given: training ran on config.json's.
	train, ok := results["XGBoostTraining"]
	if !ok || !slices.Contains(train.OutputFiles, "model_output/model.json") {
		t.Errorf("training output files: %v (ran %v)", train.OutputFiles, ok)
	}
}

// TestRunScriptsWiresEachInputFromItsProducer pins the wiring on a node with
// two parents: the evaluation's processed_data must come from the
// preprocessing step, not from the training step's evaluation output that
// is scanned first.
func TestRunScriptsWiresEachInputFromItsProducer(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	copyExample(t, root)
	args := `{"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining", "DummyDataLoading_calibration", "TabularPreprocessing_calibration", "XGBoostModelEval_calibration"],
		"edges": [["DummyDataLoading_training", "TabularPreprocessing_training"], ["TabularPreprocessing_training", "XGBoostTraining"],
			["DummyDataLoading_calibration", "TabularPreprocessing_calibration"],
			["XGBoostTraining", "XGBoostModelEval_calibration"], ["TabularPreprocessing_calibration", "XGBoostModelEval_calibration"]],
		"config_path": "ex/config.json", "source_dir": "ex/scripts",
		"sample_inputs": {"DummyDataLoading_training": {"data_source": "ex/data/tabular.csv"}, "DummyDataLoading_calibration": {"data_source": "ex/data/tabular.csv"}}}`
	res := call(t, reg, "validate.run_scripts", args)
	eval, ok := answer[verify.RunScriptsReport](t, res).ScriptResults["XGBoostModelEval_calibration"]
	if !ok || !eval.Success {
		t.Fatalf("evaluation failed (wrong input wiring?, ran %v): %v\n%v", ok, eval.ErrorMessage, eval.Stderr)
	}
}

func TestRunScriptsRejectsAnUnknownSampleInputBeforeRunning(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	copyExample(t, root)
	res := call(t, reg, "validate.run_scripts", `{"nodes": ["DummyDataLoading_training"], "source_dir": "ex/scripts",
		"sample_inputs": {"DummyDataLoading_training": {"no_such_input": "ex/data/tabular.csv"}}}`)
	mustFail(t, res, "invalid_input")
	for _, args := range []string{
		`{}`, // neither nodes nor dag_file
		`{"dag_file": "ex/dag.json", "nodes": ["DummyDataLoading_training"]}`,
		`{"dag_file": "../dag.json"}`,
		`{"dag_file": "ex/config.json"}`, // not a DAG
	} {
		mustFail(t, call(t, reg, "validate.run_scripts", args), "invalid_input")
	}
	mustFail(t, call(t, reg, "validate.run_scripts", `{"dag_file": "ex/missing.json"}`), "not_found")
}

// Without a config, a /opt/ml/code input comes from the same relative file
// next to the script (as the source directory would ship it), but never
// through a symlink leading out of the workspace.
func TestRunScriptsShipsCodeDirInputsFromTheSourceDir(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	script := `import json, os


def main(input_paths, output_paths, environ_vars, job_args):
    p = input_paths["hyperparameters_s3_uri"]
    hp = json.load(open(p)) if os.path.exists(p) else {"eta": "absent"}
    for k in ("model_output", "evaluation_output"):
        os.makedirs(output_paths[k], exist_ok=True)
        open(os.path.join(output_paths[k], "hp.json"), "w").write(json.dumps(hp))
    print("ETA", hp["eta"])
`
	writeWS(t, root, "a/xgboost_training.py", script)
	writeWS(t, root, "a/hyperparams/hyperparameters.json", `{"eta": 0.5}`)
	writeWS(t, root, "b/xgboost_training.py", script)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "hyperparameters.json"), []byte(`{"eta": "leaked"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "b", "hyperparams")); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"a": "ETA 0.5", "b": "ETA absent"} {
		res := call(t, reg, "validate.run_scripts", `{"nodes": ["XGBoostTraining"], "source_dir": "`+dir+`"}`)
		r, ok := answer[verify.RunScriptsReport](t, res).ScriptResults["XGBoostTraining"]
		if !ok || !r.Success || !strings.Contains(r.Stdout, want) {
			t.Errorf("source_dir %s: want %q, got %v / %v (ran %v)", dir, want, r.Stdout, r.ErrorMessage, ok)
		}
	}
}

func TestRunScriptsWarnsAboutSamplesForScriptlessNodes(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	copyExample(t, root)
	res := call(t, reg, "validate.run_scripts", `{"nodes": ["Registration"], "source_dir": "ex/scripts",
		"sample_inputs": {"Registration": {"PackagedModel": "ex/data/tabular.csv"}}}`)
	if !res.OK || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "sample_inputs.Registration was not used") }) {
		t.Errorf("no warning about the unused sample: %s", res.Encode())
	}
}

// A sample input over the workspace's read cap, or a named pipe, is
// invalid_input naming the file by its workspace path and, for size, the
// cap; the pipe is refused without waiting on it.
func TestRunScriptsRefusesOversizedAndIrregularSamples(t *testing.T) {
	needPython3(t)
	reg, dir := filesEnv(t, Options{MaxFileBytes: 64}, nil)
	writeWS(t, dir, "a/tabular_preprocessing.py", "def main(*args):\n    pass\n")
	writeWS(t, dir, "data/big.csv", strings.Repeat("x,y\n", 20))
	if err := syscall.Mkfifo(filepath.Join(dir, "data", "pipe.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(sample string) *registry.Result {
		return callWithin(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"], "source_dir": "a",
			"sample_inputs": {"TabularPreprocessing_training": {"input_data": "`+sample+`"}}}`)
	}
	for sample, want := range map[string]string{
		"data/big.csv":  "data/big.csv is larger than the 64-byte per-file limit",
		"data/pipe.csv": "data/pipe.csv is a named pipe",
		"data":          "data/big.csv is larger than the 64-byte per-file limit", // walked in name order
	} {
		res := run(sample)
		if res.OK || res.Code != registry.CodeInvalidInput || !strings.Contains(res.Error, want) || strings.Contains(res.Error, dir) {
			t.Errorf("sample %s: got ok=%v code=%s %q; want invalid_input saying %q without the server path", sample, res.OK, res.Code, res.Error, want)
		}
	}
}
