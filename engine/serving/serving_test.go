package serving

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests run the real interpreter Debian ships with its ML packages
// (CI installs python3-xgboost, python3-torch, python3-pandas); they skip
// where a package or the sandbox is missing.
const testPython = "/usr/bin/python3"

const (
	xgbImage   = "246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-xgboost:1.7-1"
	torchImage = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference:2.3.0-cpu-py311"
	skImage    = "246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"
)

func needModules(t testing.TB, modules ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs python; skipped in -short")
	}
	if err := exec.Command(testPython, "-c", "import "+strings.Join(modules, ", ")).Run(); err != nil {
		t.Skipf("%s cannot import %s: %v", testPython, strings.Join(modules, ", "), err)
	}
}

func newRuntime(t testing.TB, lim Limits) *Runtime {
	t.Helper()
	r := &Runtime{Python: testPython, Limits: lim}
	if err := r.Available(); err != nil {
		t.Skipf("models cannot be served here: %v", err)
	}
	return r
}

// runPy runs a Python script in a fresh directory and returns the files
// it wrote there.
func runPy(t testing.TB, script string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(testPython, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	files := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// tarGz packs files as SageMaker's model.tar.gz (paths relative, no
// leading directory).
func tarGz(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[n])
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// trainXGB trains a tiny binary booster on 3 features and returns it in
// the binary format (xgboost-model), as JSON (model.json), and its
// predictions for testRows.
func trainXGB(t testing.TB) (files map[string][]byte, want []float64) {
	t.Helper()
	needModules(t, "numpy", "xgboost")
	files = runPy(t, `
import json, numpy as np, xgboost as xgb
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
b = xgb.train({"objective": "binary:logistic", "max_depth": 2, "nthread": 1}, xgb.DMatrix(X, label=y), 8)
b.save_model("xgboost-model")
b.save_model("model.json")
rows = np.array([[1.0, 0.5, -1.0], [-2.0, -1.0, 0.3], [0.2, 0.1, 0.0]])
json.dump(b.predict(xgb.DMatrix(rows)).tolist(), open("want.json", "w"))
`)
	if err := json.Unmarshal(files["want.json"], &want); err != nil {
		t.Fatal(err)
	}
	return files, want
}

const testRows = "1.0,0.5,-1.0\n-2.0,-1.0,0.3\n0.2,0.1,0.0"

func floats(t *testing.T, s string) []float64 {
	t.Helper()
	var out []float64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' }) {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

func sameFloats(t *testing.T, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-5 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func wantKind(t *testing.T, err error, kind Kind, field string, contains ...string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != kind || (field != "" && e.Field != field) {
		t.Fatalf("err = %v; want kind %s field %q", err, kind, field)
	}
	for _, c := range contains {
		if !strings.Contains(e.Message, c) {
			t.Errorf("message %q lacks %q", e.Message, c)
		}
	}
	return e
}

// TestXGBoostAlgorithmMode: with no SAGEMAKER_PROGRAM the XGBoost image
// loads the booster file from the model directory and scores CSV rows
// with no header; JSON answers carry predictions[].score.
func TestXGBoostAlgorithmMode(t *testing.T) {
	files, want := trainXGB(t)
	r := newRuntime(t, Limits{})
	ctx := context.Background()
	s, err := r.Load(ctx, Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"xgboost-model": files["xgboost-model"]})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Mode != "algorithm" {
		t.Errorf("mode = %q", s.Mode)
	}
	resp, err := s.Invoke(ctx, []byte(testRows), "text/csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, floats(t, string(resp.Body)), want)
	resp, err = s.Invoke(ctx, []byte("1.0,0.5,-1.0"), "text/csv", "application/json")
	if err != nil {
		t.Fatal(err)
	}
	var js struct{ Predictions []struct{ Score float64 } }
	if err := json.Unmarshal(resp.Body, &js); err != nil || len(js.Predictions) != 1 || math.Abs(js.Predictions[0].Score-want[0]) > 1e-5 {
		t.Fatalf("json answer %s: %v", resp.Body, err)
	}
	// A header row reaches the model as data: a payload error, and the
	// server goes on answering.
	_, err = s.Invoke(ctx, []byte("f1,f2,f3\n"+testRows), "text/csv", "text/csv")
	wantKind(t, err, KindPayload, "", "could not convert string to float")
	if _, err := s.Invoke(ctx, []byte(testRows), "text/csv", "application/x-unknown"); kindOf(err) != KindContentType {
		t.Fatalf("unsupported accept: %v", err)
	}
	if _, err := s.Invoke(ctx, []byte(testRows), "text/csv", ""); err != nil {
		t.Fatalf("after errors: %v", err)
	}
}

// TestXGBoostAlgorithmModeLoadErrors: what the algorithm container cannot
// load is a model_load error naming the file.
func TestXGBoostAlgorithmModeLoadErrors(t *testing.T) {
	files, _ := trainXGB(t)
	r := newRuntime(t, Limits{})
	ctx := context.Background()
	// No model file at all (only code/): nothing to load.
	_, err := r.Load(ctx, Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"code/inference.py": []byte("")})})
	wantKind(t, err, KindModelLoad, "", "no file at the top of /opt/ml/model", "code")
	// A second file beside the booster: the container loads every file
	// (ensemble), and a text file is no booster.
	_, err = r.Load(ctx, Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{
		"xgboost-model": files["xgboost-model"], "feature_columns.txt": []byte("f1\nf2\nf3\n")})})
	wantKind(t, err, KindModelLoad, "", "feature_columns.txt cannot be loaded")
	// ... unless ensembles are off and the booster sorts first.
	s, err := r.Load(ctx, Model{Image: xgbImage, Environment: map[string]string{"SAGEMAKER_INFERENCE_ENSEMBLE": "false"},
		ModelData: tarGz(t, map[string][]byte{"a-model": files["xgboost-model"], "z.txt": []byte("x")})})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = r.Load(ctx, Model{Image: xgbImage, ModelData: []byte("not a tarball")})
	wantKind(t, err, KindArchive, "ModelDataUrl")
}

const xgbUserModule = `
import json, os
import xgboost as xgb

def model_fn(model_dir):
    b = xgb.Booster()
    b.load_model(os.path.join(model_dir, "model.json"))
    return b

def output_fn(prediction, accept):
    return json.dumps({"from": "user output_fn", "scores": prediction.tolist()}), "application/json"
`

// TestXGBoostScriptMode: SAGEMAKER_PROGRAM with an S3 submit directory
// runs the user's model_fn (here loading a JSON booster the algorithm
// mode would not look for under that name) with the default input_fn and
// predict_fn; a program the tarball lacks is missing_code naming the
// variable.
func TestXGBoostScriptMode(t *testing.T) {
	files, want := trainXGB(t)
	r := newRuntime(t, Limits{})
	ctx := context.Background()
	src := tarGz(t, map[string][]byte{"inference.py": []byte(xgbUserModule)})
	fetched := ""
	m := Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"model.json": files["model.json"]}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "s3://b/src/sourcedir.tar.gz"},
		Fetch: func(_ context.Context, uri string) ([]byte, error) {
			fetched = uri
			return src, nil
		}}
	s, err := r.Load(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fetched != "s3://b/src/sourcedir.tar.gz" || s.Mode != "script" || s.Module != "inference" {
		t.Errorf("fetched %q, mode %q, module %q", fetched, s.Mode, s.Module)
	}
	resp, err := s.Invoke(ctx, []byte(testRows), "text/csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		From   string
		Scores []float64
	}
	if err := json.Unmarshal(resp.Body, &got); err != nil || got.From != "user output_fn" || resp.ContentType != "application/json" {
		t.Fatalf("answer %s (%s): %v", resp.Body, resp.ContentType, err)
	}
	sameFloats(t, got.Scores, want)

	// The wrong program name.
	m.Environment = map[string]string{"SAGEMAKER_PROGRAM": "serve.py", "SAGEMAKER_SUBMIT_DIRECTORY": "s3://b/src/sourcedir.tar.gz"}
	_, err = r.Load(ctx, m)
	wantKind(t, err, KindMissingCode, "Environment.SAGEMAKER_PROGRAM", "serve.py", "inference.py")
	// No submit directory: /opt/ml/code is empty.
	m.Environment = map[string]string{"SAGEMAKER_PROGRAM": "inference.py"}
	_, err = r.Load(ctx, m)
	wantKind(t, err, KindMissingCode, "Environment.SAGEMAKER_SUBMIT_DIRECTORY", "unset", "holds: nothing")
	// A submit directory inside the repacked model archive.
	m.Environment = map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code"}
	m.ModelData = tarGz(t, map[string][]byte{"model.json": files["model.json"], "code/inference.py": []byte(xgbUserModule)})
	m.Fetch = nil
	s2, err := r.Load(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	// A module with no model_fn: the XGBoost image has no default one.
	m.ModelData = tarGz(t, map[string][]byte{"model.json": files["model.json"], "code/inference.py": []byte("x = 1\n")})
	_, err = r.Load(ctx, m)
	wantKind(t, err, KindModelLoad, "", "model_fn")
}

func trainTorch(t *testing.T) (files map[string][]byte, want []float64) {
	t.Helper()
	needModules(t, "numpy", "torch")
	files = runPy(t, `
import json, torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Sigmoid())
torch.save(net.state_dict(), "model.pth")
torch.jit.script(net).save("model.pt")
x = torch.tensor([[1.0, 0.5, -1.0], [-2.0, -1.0, 0.3], [0.2, 0.1, 0.0]])
with torch.no_grad():
    json.dump(net(x).squeeze(1).tolist(), open("want.json", "w"))
`)
	if err := json.Unmarshal(files["want.json"], &want); err != nil {
		t.Fatal(err)
	}
	return files, want
}

const torchInference = `
import os
import numpy as np
import torch

def model_fn(model_dir):
    net = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Sigmoid())
    net.load_state_dict(torch.load(os.path.join(model_dir, "model.pth")))
    return net

def input_fn(body, content_type):
    return torch.tensor(np.genfromtxt(body.splitlines(), delimiter=","), dtype=torch.float32).reshape(-1, 3)

def predict_fn(x, model):
    with torch.no_grad():
        return model(x).squeeze(1)
`

// TestPyTorchCodeInsideTheArchive: the PyTorch image imports
// code/inference.py from model.tar.gz (default output_fn answering CSV);
// without it, it falls back to the default handler, which wants a
// TorchScript model.pt, and the failure names the missing file.
func TestPyTorchCodeInsideTheArchive(t *testing.T) {
	files, want := trainTorch(t)
	r := newRuntime(t, Limits{})
	ctx := context.Background()
	s, err := r.Load(ctx, Model{Image: torchImage, ModelData: tarGz(t, map[string][]byte{
		"model.pth": files["model.pth"], "code/inference.py": []byte(torchInference)}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := s.Invoke(ctx, []byte(testRows), "text/csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, floats(t, string(resp.Body)), want)

	// The same model with the code only in a source tarball (what the
	// SDK's PyTorchModel points SAGEMAKER_SUBMIT_DIRECTORY at before it
	// repacks): the container never reads it.
	_, err = r.Load(ctx, Model{Image: torchImage, ModelData: tarGz(t, map[string][]byte{"model.pth": files["model.pth"]}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "s3://b/src/sourcedir.tar.gz"}})
	e := wantKind(t, err, KindMissingCode, "ModelDataUrl", "code/inference.py", "SAGEMAKER_SUBMIT_DIRECTORY", "TorchScript", "Please ensure model is saved using torchscript")
	if e.Log == "" {
		t.Error("no log")
	}
	// No model file the default handler knows.
	_, err = r.Load(ctx, Model{Image: torchImage, ModelData: tarGz(t, map[string][]byte{"weights.bin": files["model.pth"]})})
	wantKind(t, err, KindMissingCode, "ModelDataUrl", "code/inference.py", "Exactly one .pth or .pt file is required")

	// A TorchScript model.pt is what the default handler serves: JSON in,
	// JSON out (the toolkit's default accept), through its default
	// input_fn, predict_fn and output_fn.
	s2, err := r.Load(ctx, Model{Image: torchImage, ModelData: tarGz(t, map[string][]byte{"model.pt": files["model.pt"]})})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Mode != "default" {
		t.Errorf("mode %q", s2.Mode)
	}
	resp, err = s2.Invoke(ctx, []byte("[[1.0,0.5,-1.0],[-2.0,-1.0,0.3],[0.2,0.1,0.0]]"), "application/json", "")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	if err := json.Unmarshal(resp.Body, &rows); err != nil || len(rows) != 3 || resp.ContentType != "application/json" {
		t.Fatalf("answer %s (%s): %v", resp.Body, resp.ContentType, err)
	}
	sameFloats(t, []float64{rows[0][0], rows[1][0], rows[2][0]}, want)
	_, err = s2.Invoke(ctx, []byte("x"), "application/x-unknown", "")
	wantKind(t, err, KindContentType, "", "application/x-unknown")
}

// TestTransformJoinsIDAndLabel: a CSV with id and label columns; the
// input filter drops them before the model, the join brings the input
// back, the output filter keeps id, label and the score.
func TestTransformJoinsIDAndLabel(t *testing.T) {
	files, want := trainXGB(t)
	r := newRuntime(t, Limits{})
	ctx := context.Background()
	model := Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"xgboost-model": files["xgboost-model"]})}
	input := "101,1,1.0,0.5,-1.0\n102,0,-2.0,-1.0,0.3\n103,1,0.2,0.1,0.0\n"
	tj := TransformJob{
		Inputs:      []Object{{Key: "part-0.csv", Data: []byte(input)}, {Key: "sub/part-1.csv", Data: []byte("104,0,1.0,0.5,-1.0")}},
		ContentType: "text/csv", SplitType: "Line", Accept: "text/csv", AssembleWith: "Line", BatchStrategy: "MultiRecord",
		DataProcessing: DataProcessing{InputFilter: "$[2:]", JoinSource: "Input", OutputFilter: "$[0,1,-1]"},
	}
	res, err := r.Transform(ctx, model, tj)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 2 || res.Outputs[0].Key != "part-0.csv.out" || res.Outputs[1].Key != "sub/part-1.csv.out" || res.Records != 4 || res.Requests != 2 {
		t.Fatalf("result %+v", res)
	}
	lines := strings.Split(strings.TrimSuffix(string(res.Outputs[0].Data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q", res.Outputs[0].Data)
	}
	for i, l := range lines {
		f := strings.Split(l, ",")
		if len(f) != 3 || f[0] != strconv.Itoa(101+i) || f[1] != strings.Split(strings.Split(input, "\n")[i], ",")[1] {
			t.Fatalf("line %d = %q", i, l)
		}
		sameFloats(t, floats(t, f[2]), want[i:i+1])
	}
	if got := strings.Split(strings.TrimSpace(string(res.Outputs[1].Data)), ","); len(got) != 3 || got[0] != "104" {
		t.Fatalf("second output %q", res.Outputs[1].Data)
	}

	// SingleRecord sends one request per record and gives the same rows.
	tj.BatchStrategy = "SingleRecord"
	single, err := r.Transform(ctx, model, tj)
	if err != nil || single.Requests != 4 || !bytes.Equal(single.Outputs[0].Data, res.Outputs[0].Data) {
		t.Fatalf("single record: %+v, %v", single, err)
	}

	// DataProcessing dropped: id and label reach the model as features.
	tj.DataProcessing = DataProcessing{}
	_, err = r.Transform(ctx, model, tj)
	wantKind(t, err, KindPayload, "DataProcessing.InputFilter", "part-0.csv", "records 1..1", "Number of columns does not match", "no InputFilter")

	// A filter past the record's columns.
	tj.DataProcessing = DataProcessing{InputFilter: "$[2:]", JoinSource: "Input", OutputFilter: "$[0,9]"}
	_, err = r.Transform(ctx, model, tj)
	wantKind(t, err, KindDataProcessing, "DataProcessing.OutputFilter", "index 9")
}

const failingModule = `
import time
import xgboost as xgb

def model_fn(model_dir):
    return "model"

def input_fn(body, content_type):
    if body.startswith("sleep"):
        time.sleep(600)
    return body

def predict_fn(data, model):
    raise ValueError("predict_fn refuses " + data)

def output_fn(prediction, accept):
    return "never"
`

// TestHandlerErrorsAndTimeout: a handler that raises is a handler error
// and the server keeps answering; one that hangs past the limit is a
// timeout and breaks the server.
func TestHandlerErrorsAndTimeout(t *testing.T) {
	needModules(t, "numpy", "xgboost")
	// Generous against a loaded machine; the hang is far longer.
	r := newRuntime(t, Limits{InvokeTimeout: 15 * time.Second})
	ctx := context.Background()
	s, err := r.Load(ctx, Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"code/inference.py": []byte(failingModule)}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 2; i++ {
		_, err = s.Invoke(ctx, []byte("1,2"), "text/csv", "text/csv")
		e := wantKind(t, err, KindHandler, "", "ValueError", "predict_fn refuses 1,2")
		// The traceback names the container's paths, not the server's.
		if !strings.Contains(e.Log, "Traceback") || !strings.Contains(e.Log, `"/opt/ml/code/inference.py"`) || strings.Contains(e.Log, "cursus-serve-") {
			t.Errorf("log %q", e.Log)
		}
	}
	start := time.Now()
	_, err = s.Invoke(ctx, []byte("sleep"), "text/csv", "text/csv")
	wantKind(t, err, KindTimeout, "")
	if d := time.Since(start); d > 300*time.Second {
		t.Errorf("timeout took %s", d)
	}
	_, err = s.Invoke(ctx, []byte("1,2"), "text/csv", "text/csv")
	wantKind(t, err, KindTimeout, "")
}

// TestCancelStopsTheServer: a cancelled context ends a request at once.
func TestCancelStopsTheServer(t *testing.T) {
	needModules(t, "numpy", "xgboost")
	r := newRuntime(t, Limits{})
	s, err := r.Load(context.Background(), Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"code/inference.py": []byte(failingModule)}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	if _, err := s.Invoke(ctx, []byte("sleep"), "text/csv", "text/csv"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestSKLearnNeedsAProgram: the scikit-learn image serves only user code.
func TestSKLearnNeedsAProgram(t *testing.T) {
	r := &Runtime{Python: testPython}
	_, err := r.Load(context.Background(), Model{Image: skImage})
	wantKind(t, err, KindNoProgram, "Environment.SAGEMAKER_PROGRAM")
}

// TestModelCodeIsConfined: model code runs in the script sandbox: it
// cannot read a file of the server's outside its own directory, nor
// write there.
func TestModelCodeIsConfined(t *testing.T) {
	needModules(t, "numpy", "xgboost")
	r := newRuntime(t, Limits{})
	if r.sandboxErr != nil {
		t.Skipf("no sandbox here: %v", r.sandboxErr)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("server secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "planted.txt")
	module := `
def model_fn(model_dir):
    try:
        open(` + strconv.Quote(outside) + `, "w").write("x")
        return "WROTE"
    except OSError:
        pass
    try:
        return open(` + strconv.Quote(secret) + `).read()
    except OSError as e:
        return "denied: " + type(e).__name__

def transform_fn(model, body, content_type, accept):
    return model
`
	s, err := r.Load(context.Background(), Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"code/inference.py": []byte(module)}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := s.Invoke(context.Background(), []byte("x"), "text/csv", "text/csv")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "denied: PermissionError" {
		t.Fatalf("model code got %q", resp.Body)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("model code wrote outside its directory")
	}
}

// TestRequirementsNotInstalled: a requirements.txt naming a package that
// is not installed (LightGBM here) makes the model unavailable, named.
func TestRequirementsNotInstalled(t *testing.T) {
	needModules(t, "numpy", "torch")
	if exec.Command(testPython, "-c", "import lightgbm").Run() == nil {
		t.Skip("lightgbm is installed here")
	}
	r := newRuntime(t, Limits{})
	_, err := r.Load(context.Background(), Model{Image: torchImage, ModelData: tarGz(t, map[string][]byte{
		"code/inference.py": []byte("import lightgbm\n"), "code/requirements.txt": []byte("# deps\nlightgbm>=4.0\n")})})
	wantKind(t, err, KindRuntimeUnavailable, "", "lightgbm>=4.0")
	// Without the requirements file, the import itself names it.
	_, err = r.Load(context.Background(), Model{Image: torchImage, ModelData: tarGz(t, map[string][]byte{
		"code/inference.py": []byte("import lightgbm\n")})})
	wantKind(t, err, KindRuntimeUnavailable, "", "lightgbm")
}

// BenchmarkXGBoostLoad is what one serving process costs to start (the
// interpreter, numpy and xgboost imports, the booster load): what a
// process per request would pay every time.
func BenchmarkXGBoostLoad(b *testing.B) {
	files, _ := trainXGB(b)
	r := newRuntime(b, Limits{})
	model := Model{Image: xgbImage, ModelData: tarGz(b, map[string][]byte{"xgboost-model": files["xgboost-model"]})}
	for b.Loop() {
		s, err := r.Load(context.Background(), model)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkXGBoostInvoke is one request of three CSV rows to a loaded
// model.
func BenchmarkXGBoostInvoke(b *testing.B) {
	files, _ := trainXGB(b)
	r := newRuntime(b, Limits{})
	s, err := r.Load(context.Background(), Model{Image: xgbImage, ModelData: tarGz(b, map[string][]byte{"xgboost-model": files["xgboost-model"]})})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		if _, err := s.Invoke(context.Background(), []byte(testRows), "text/csv", "text/csv"); err != nil {
			b.Fatal(err)
		}
	}
}

const sklearnModule = `
import os
import joblib

def model_fn(model_dir):
    # A container path written out, as scripts often do: it reaches the
    # unpacked archive.
    with open("/opt/ml/model/model.joblib", "rb") as f:
        return joblib.load(f)
`

// TestSKLearnScriptMode: the scikit-learn image imports the program from
// the submit directory; its default input_fn reads CSV as float32 and
// predict_fn calls model.predict; JSON answers by default.
func TestSKLearnScriptMode(t *testing.T) {
	needModules(t, "numpy", "sklearn", "joblib")
	files := runPy(t, `
import json, joblib, numpy as np
from sklearn.linear_model import LogisticRegression
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
m = LogisticRegression().fit(X, y)
joblib.dump(m, "model.joblib")
json.dump(m.predict(np.array([[1.0, 0.5, -1.0], [-2.0, -1.0, 0.3], [0.2, 0.1, 0.0]], dtype=np.float32)).tolist(), open("want.json", "w"))
`)
	var want []float64
	if err := json.Unmarshal(files["want.json"], &want); err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Limits{})
	s, err := r.Load(context.Background(), Model{Image: skImage, ModelData: tarGz(t, map[string][]byte{"model.joblib": files["model.joblib"]}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "serve.py", "SAGEMAKER_SUBMIT_DIRECTORY": "s3://b/sk.tar.gz"},
		Fetch: func(context.Context, string) ([]byte, error) {
			return tarGz(t, map[string][]byte{"serve.py": []byte(sklearnModule)}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := s.Invoke(context.Background(), []byte(testRows), "text/csv", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	if err := json.Unmarshal(resp.Body, &got); err != nil || resp.ContentType != "application/json" {
		t.Fatalf("answer %s (%s): %v", resp.Body, resp.ContentType, err)
	}
	sameFloats(t, got, want)
}

const boundedModule = `
def model_fn(model_dir):
    return None

def transform_fn(model, body, content_type, accept):
    if body == "alloc":
        block = bytearray(6 << 30)
        return "allocated %d" % len(block)
    return "x" * int(body)
`

// TestLimitsBoundTheModel: memory past the address-space limit fails the
// request (the server goes on), an answer past the response limit stops
// the server, a request past the request limit is refused before it is
// sent.
func TestLimitsBoundTheModel(t *testing.T) {
	needModules(t, "numpy", "xgboost")
	r := newRuntime(t, Limits{MaxMemoryBytes: 4 << 30, MaxResponseBytes: 1 << 20, MaxRequestBytes: 1 << 10})
	if r.sandboxErr != nil {
		t.Skipf("no sandbox here (rlimits come with it): %v", r.sandboxErr)
	}
	ctx := context.Background()
	s, err := r.Load(ctx, Model{Image: xgbImage, ModelData: tarGz(t, map[string][]byte{"code/inference.py": []byte(boundedModule)}),
		Environment: map[string]string{"SAGEMAKER_PROGRAM": "inference.py", "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Invoke(ctx, []byte("alloc"), "text/csv", "text/csv")
	wantKind(t, err, KindHandler, "", "MemoryError")
	if resp, err := s.Invoke(ctx, []byte("10"), "text/csv", "text/csv"); err != nil || string(resp.Body) != "xxxxxxxxxx" {
		t.Fatalf("after the memory error: %v", err)
	}
	_, err = s.Invoke(ctx, bytes.Repeat([]byte("1"), 2<<10), "text/csv", "text/csv")
	wantKind(t, err, KindLimit, "", "request body")
	_, err = s.Invoke(ctx, []byte(strconv.Itoa(2<<20)), "text/csv", "text/csv")
	wantKind(t, err, KindLimit, "", "exceeded the 1048576-byte limit")
	_, err = s.Invoke(ctx, []byte("10"), "text/csv", "text/csv")
	wantKind(t, err, KindLimit, "")
}

// kindOf is the Kind of err, "" when err is no *Error.
func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
