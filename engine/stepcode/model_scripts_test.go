package stepcode_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/sampledata"
	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
)

// python is Debian's interpreter, where CI installs pandas, scikit-learn,
// xgboost and torch (another python3 may come first on PATH).
const python = "/usr/bin/python3"

// needPython skips the test unless the interpreter imports every module.
func needPython(t *testing.T, modules ...string) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("%s not installed", python)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, python, "-c", "import "+strings.Join(modules, ", ")).CombinedOutput(); err != nil {
		t.Skipf("%s cannot import %s: %s", python, strings.Join(modules, ", "), lastLine(out))
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// chain is a sequence of built-in scripts run on the sample data by
// testdata/chain_runner.py in one interpreter (each step imports its own
// folder afresh), with every container path mapped to a folder under root.
type chain struct {
	t     *testing.T
	root  string
	steps []map[string]any
}

func newChain(t *testing.T) *chain {
	c := &chain{t: t, root: t.TempDir()}
	c.write("raw/tabular.csv", string(sampledata.Tabular()))
	c.main("tabular_preprocessing", map[string]string{"input_data": "raw"}, map[string]string{"processed_data": "data"},
		map[string]string{"LABEL_FIELD": sampledata.LabelField}, "training")
	return c
}

func (c *chain) path(rel string) string { return filepath.Join(c.root, filepath.FromSlash(rel)) }

func (c *chain) write(rel, text string) string {
	c.t.Helper()
	p := c.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// code copies the built-in folder dir to <root>/code/<dir> and returns it.
func (c *chain) code(dir string) string {
	c.t.Helper()
	dst := c.path("code/" + dir)
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	sub, err := fs.Sub(stepcode.FS, dir)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.CopyFS(dst, sub); err != nil {
		c.t.Fatalf("copy %s: %v", dir, err)
	}
	return dst
}

func (c *chain) add(name string, step map[string]any) {
	step["name"] = name
	step["log"] = c.path("logs/" + name + ".log")
	c.steps = append(c.steps, step)
}

func (c *chain) abs(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = c.path(v)
	}
	return out
}

// main adds a call of the folder dir's <dir>.py main(), as validate.run_scripts
// makes it, with a --job_type when jobType is set.
func (c *chain) main(dir string, inputs, outputs, env map[string]string, jobType string) {
	args := map[string]any{}
	if jobType != "" {
		args["job_type"] = jobType
	}
	if env == nil {
		env = map[string]string{}
	}
	c.add(dir, map[string]any{"kind": "main", "dir": c.code(dir), "module": dir, "inputs": c.abs(inputs),
		"outputs": c.abs(outputs), "env": env, "args": args})
}

// train adds a training script run in script mode: the source folder with
// hyperparams/hyperparameters.json, channels and model folder from SM_*,
// tuned values as --key value flags; then the model folder packed into
// model/model.tar.gz as SageMaker does.
func (c *chain) train(dir string, hyperparameters map[string]any, flags ...string) {
	c.t.Helper()
	src := c.code(dir)
	hp, _ := json.Marshal(hyperparameters)
	c.write("code/"+dir+"/hyperparams/hyperparameters.json", string(hp))
	env := map[string]string{"SM_MODEL_DIR": c.path("job/model"), "SM_OUTPUT_DATA_DIR": c.path("job/output"),
		"SM_INPUT_CONFIG_DIR": c.path("job/config"), "SM_INPUT_DIR": c.path("job/input")}
	for _, s := range []string{"train", "val", "test"} {
		env["SM_CHANNEL_"+strings.ToUpper(s)] = c.path("data/" + s)
	}
	c.add(dir, map[string]any{"kind": "script", "script": filepath.Join(src, dir+".py"), "argv": flags, "env": env})
	c.add("pack_model", map[string]any{"kind": "pack", "dir": c.path("job/model"), "archive": c.path("model/model.tar.gz")})
}

// exec runs the chain; a failed step fails the test with its log.
func (c *chain) exec() {
	c.t.Helper()
	plan, _ := json.Marshal(c.steps)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/chain_runner.py", c.write("plan.json", string(plan)))
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("chain: %v\n%s", err, out)
	}
}

func (c *chain) log(name string) string {
	c.t.Helper()
	b, err := os.ReadFile(c.path("logs/" + name + ".log"))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

func (c *chain) readJSON(rel string) map[string]any {
	c.t.Helper()
	b, err := os.ReadFile(c.path(rel))
	if err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("%s: %v", rel, err)
	}
	return m
}

// untar returns the regular files of a .tar.gz by name.
func untar(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			out[strings.TrimPrefix(h.Name, "./")] = b
		}
	}
}

// tuningMetric is the objective a tuning job parses from the training log
// with the tuning step's default metric definition (the last match).
func tuningMetric(t *testing.T, tuningType, log string) float64 {
	t.Helper()
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	iface, ok := cat.Get(tuningType)
	if !ok {
		t.Fatalf("no %s in the catalog", tuningType)
	}
	f, _ := iface.Config.Fields.Get("metric_definitions")
	defs, _ := f.Default.([]any)
	if len(defs) == 0 {
		t.Fatalf("%s has no default metric definition", tuningType)
	}
	def, _ := defs[0].(map[string]any)
	re := regexp.MustCompile(def["Regex"].(string))
	m := re.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		t.Fatalf("the training log has no line matching %s's metric regex %s:\n%s", tuningType, re, log)
	}
	v, err := strconv.ParseFloat(m[len(m)-1][1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// evaluate adds <framework>_model_eval on the test split.
func (c *chain) evaluate(framework string) {
	c.main(framework+"_model_eval", map[string]string{"model_input": "model", "processed_data": "data"},
		map[string]string{"eval_output": "eval/predictions", "metrics_output": "eval/metrics"},
		map[string]string{"ID_NAME": "id", "LABEL_NAME": "label", "OUTPUT_FORMAT": "csv"}, "test")
}

// checkEval checks the eval's metrics (AUC > 0.7 on the whole test split)
// and its predictions' columns.
func (c *chain) checkEval() {
	c.t.Helper()
	metrics := c.readJSON("eval/metrics/metrics.json")
	if auc, _ := metrics["auc_roc"].(float64); auc <= 0.7 {
		c.t.Errorf("eval AUC = %v, want > 0.7 (metrics %v)", metrics["auc_roc"], metrics)
	}
	if n, _ := metrics["count"].(float64); n < 200 {
		c.t.Errorf("eval scored %v labelled rows, want the whole test split (225)", metrics["count"])
	}
	b, err := os.ReadFile(c.path("eval/predictions/eval_predictions.csv"))
	if err != nil {
		c.t.Fatal(err)
	}
	if header := strings.SplitN(string(b), "\n", 2)[0]; header != "id,label,prob_class_0,prob_class_1" {
		c.t.Errorf("eval predictions header = %q", header)
	}
}

// packageAndServe adds the calibration of the eval predictions, the package
// of the model with it, the payload, and the package answering the payload
// through its own code/inference.py.
func (c *chain) packageAndServe() {
	c.main("model_calibration", map[string]string{"evaluation_data": "eval/predictions"},
		map[string]string{"calibration_output": "calib/calibration", "metrics_output": "calib/metrics", "calibrated_data": "calib/data"},
		map[string]string{"LABEL_FIELD": "label", "CALIBRATION_METHOD": "isotonic", "SCORE_FIELD": "prob_class_1"}, "calibration")
	c.main("package", map[string]string{"model_input": "model", "inference_scripts_input": "none", "calibration_model": "calib/calibration"},
		map[string]string{"packaged_model": "package"}, nil, "")
	c.main("payload", map[string]string{"model_input": "model", "custom_payload_input": "none"}, map[string]string{"payload_sample": "payload"},
		map[string]string{"CONTENT_TYPES": "text/csv,application/json", "DEFAULT_NUMERIC_VALUE": "0.5",
			"DEFAULT_TEXT_VALUE": "DEFAULT_TEXT", "SPECIAL_FIELD_VALUES": ""}, "")
	// A transform's records as the preprocessing wrote them: a header line,
	// then rows with the id dropped by an input filter $[1:].
	data, _ := os.ReadFile(c.path("raw/tabular.csv"))
	var rows []string
	for _, line := range strings.SplitN(string(data), "\n", 4)[:3] {
		rows = append(rows, line[strings.Index(line, ",")+1:])
	}
	c.add("serve", map[string]any{"kind": "serve", "archive": c.path("package/model.tar.gz"),
		"payload": c.path("payload/payload.tar.gz"), "responses": c.path("responses.json"),
		"requests": []map[string]string{{"file": "transform_batch", "content_type": "text/csv", "body": strings.Join(rows, "\n") + "\n"}}})
}

// checkServed checks the package's files and its answers to the payload.
func (c *chain) checkServed(modelFile string) {
	c.t.Helper()
	files := untar(c.t, c.path("package/model.tar.gz"))
	for _, want := range []string{modelFile, "code/inference.py", "code/tabular_features.py", "calibration/calibration.json", "hyperparameters.json"} {
		if _, ok := files[want]; !ok {
			c.t.Errorf("package model.tar.gz lacks %s", want)
		}
	}
	var meta struct {
		InputFields []string `json:"input_field_list"`
	}
	if err := json.Unmarshal(untar(c.t, c.path("payload/payload.tar.gz"))["metadata.json"], &meta); err != nil {
		c.t.Fatalf("payload metadata.json: %v", err)
	}
	if got, want := strings.Join(meta.InputFields, ","), "num_1,num_2,num_3,num_4,num_5,num_6,cat_1,cat_2,cat_3"; got != want {
		c.t.Errorf("payload input fields = %s, want the sample data's features %s", got, want)
	}
	responses := c.readJSON("responses.json")
	batch, _ := responses["transform_batch"].(string)
	if lines := strings.Split(strings.TrimSpace(batch), "\n"); len(lines) != 3 || lines[0] != "prob_class_1" {
		c.t.Errorf("a header line and two records answered %q, want the score column's name, then two scores", batch)
	}
	delete(responses, "transform_batch")
	if len(responses) != 2 {
		c.t.Errorf("served %d payload samples, want one per content type: %v", len(responses), responses)
	}
	for file, r := range responses {
		body, _ := r.(string)
		if strings.HasSuffix(file, ".json") {
			var resp struct{ Predictions []float64 }
			if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Predictions) != 1 {
				c.t.Errorf("%s answered %q, want {\"predictions\": [<score>]}", file, body)
			}
			continue
		}
		if p, err := strconv.ParseFloat(strings.TrimSpace(body), 64); err != nil || p < 0 || p > 1 {
			c.t.Errorf("%s answered %q, want one probability", file, body)
		}
	}
}

func TestXGBoostScriptsChain(t *testing.T) {
	needPython(t, "pandas", "sklearn", "xgboost")
	c := newChain(t)
	c.train("xgboost_training", map[string]any{"label_name": "label", "id_name": "id", "num_round": 40}, "--max_depth", "3")
	c.evaluate("xgboost")
	c.main("xgboost_model_inference", map[string]string{"model_input": "model", "processed_data": "data"},
		map[string]string{"eval_output": "inference"}, map[string]string{"ID_NAME": "id", "LABEL_NAME": "label", "OUTPUT_FORMAT": "csv"}, "test")
	c.main("model_metrics_computation", map[string]string{"eval_output": "inference"},
		map[string]string{"metrics_output": "metrics/metrics", "plots_output": "metrics/plots"},
		map[string]string{"ID_NAME": "id", "LABEL_NAME": "label", "AMOUNT_FIELD": "", "INPUT_FORMAT": "auto",
			"COMPUTE_DOLLAR_RECALL": "true", "COMPUTE_COUNT_RECALL": "true"}, "testing")
	c.main("percentile_model_calibration", map[string]string{"evaluation_data": "eval/predictions", "calibration_config": "none"},
		map[string]string{"calibration_output": "pct/calibration", "metrics_output": "pct/metrics", "calibrated_data": "pct/data"},
		map[string]string{"SCORE_FIELD": "prob_class_1", "N_BINS": "100", "ACCURACY": "1e-5"}, "calibration")
	c.packageAndServe()
	c.exec()

	hp := c.readJSON("job/model/hyperparameters.json")
	if hp["max_depth"] != 3.0 || hp["num_round"] != 40.0 {
		t.Errorf("model hyperparameters max_depth=%v num_round=%v, want the flag's 3 and the source folder's 40", hp["max_depth"], hp["num_round"])
	}
	if metric := tuningMetric(t, "XGBoostTuning", c.log("xgboost_training")); metric <= 0.7 {
		t.Errorf("logged validation AUC %v, want > 0.7", metric)
	}
	c.checkEval()
	if auc, _ := c.readJSON("metrics/metrics/metrics.json")["auc_roc"].(float64); auc <= 0.7 {
		t.Errorf("metrics computation AUC on the inference output = %v, want > 0.7", auc)
	}
	if pts, _ := c.readJSON("pct/metrics/calibration_metrics.json")["points"].(float64); pts < 10 {
		t.Errorf("percentile calibration kept %v points, want most of the 101 levels", pts)
	}
	c.checkServed("xgboost-model")
}

func TestPyTorchScriptsChain(t *testing.T) {
	needPython(t, "pandas", "sklearn", "torch")
	c := newChain(t)
	c.train("pytorch_training", map[string]any{"max_epochs": 15, "batch_size": 64}, "--lr", "0.003")
	c.evaluate("pytorch")
	c.packageAndServe()
	c.exec()

	hp := c.readJSON("job/model/hyperparameters.json")
	if hp["lr"] != 0.003 || hp["max_epochs"] != 15.0 {
		t.Errorf("model hyperparameters lr=%v max_epochs=%v, want the flag's 0.003 and the source folder's 15", hp["lr"], hp["max_epochs"])
	}
	if metric := tuningMetric(t, "PyTorchTuning", c.log("pytorch_training")); metric <= 0.7 {
		t.Errorf("logged val/auroc %v, want > 0.7", metric)
	}
	c.checkEval()
	c.checkServed("model.pth")
}

func TestLightGBMScriptsChain(t *testing.T) {
	needPython(t, "pandas", "sklearn", "lightgbm")
	c := newChain(t)
	c.train("lightgbm_training", map[string]any{"num_iterations": 50}, "--num_leaves", "15")
	c.evaluate("lightgbm")
	c.packageAndServe()
	c.exec()

	if metric := tuningMetric(t, "LightGBMTuning", c.log("lightgbm_training")); metric <= 0.7 {
		t.Errorf("logged valid_0's auc %v, want > 0.7", metric)
	}
	c.checkEval()
	c.checkServed("lightgbm-model.txt")
}

// The shared modules are in every folder that imports them, as SageMaker
// ships them, while the repository keeps one copy of each.
func TestSharedModulesReachEveryFolder(t *testing.T) {
	groups := map[string][]string{
		"xgboost_model/tabular_features.py": {"xgboost_training", "xgboost_model_eval", "xgboost_model_inference",
			"pytorch_model", "pytorch_training", "pytorch_model_eval", "pytorch_model_inference",
			"lightgbm_model", "lightgbm_training", "lightgbm_model_eval", "lightgbm_model_inference"},
		"xgboost_model/inference.py":      {"xgboost_training", "xgboost_model_eval", "xgboost_model_inference"},
		"pytorch_model/inference.py":      {"pytorch_training", "pytorch_model_eval", "pytorch_model_inference"},
		"lightgbm_model/inference.py":     {"lightgbm_training", "lightgbm_model_eval", "lightgbm_model_inference"},
		"lightgbm_model/requirements.txt": {"lightgbm_training", "lightgbm_model_eval", "lightgbm_model_inference"},
	}
	for canonical, dirs := range groups {
		want, err := fs.ReadFile(stepcode.FS, canonical)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range dirs {
			p := dir + "/" + filepath.Base(canonical)
			got, err := fs.ReadFile(stepcode.FS, p)
			if err != nil {
				t.Errorf("%s: %v (it imports %s)", p, err, canonical)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s", p, canonical)
			}
		}
	}
	if _, err := fs.Stat(stepcode.FS, "common"); err == nil {
		t.Error("FS shows common/, which is no step type's folder")
	}
	// One copy in the repository: a second one would drift.
	seen := map[string]string{}
	err := filepath.WalkDir("code", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := fmt.Sprintf("%x", sha256.Sum256(b))
		if first, ok := seen[sum]; ok {
			t.Errorf("%s repeats %s: list it in stepcode's includes instead", p, first)
		}
		seen[sum] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := fs.ReadFile(stepcode.FS, "lightgbm_model/requirements.txt")
	if !strings.Contains(string(req), "lightgbm>=4.0") {
		t.Errorf("lightgbm requirements.txt = %q, want lightgbm>=4.0", req)
	}
}

// Every model script honours its step's contract as the static alignment
// check reads it: main's signature, the declared inputs, outputs,
// environment and job arguments. (The tuning steps run the training script
// under other logical names: their contracts are not the script's own.)
func TestModelScriptsAlignWithContracts(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, stepType := range []string{"XGBoostTraining", "LightGBMTraining", "PyTorchTraining",
		"XGBoostModelEval", "LightGBMModelEval", "PyTorchModelEval",
		"XGBoostModelInference", "LightGBMModelInference", "PyTorchModelInference",
		"ModelMetricsComputation", "ModelCalibration", "PercentileModelCalibration", "Package", "Payload"} {
		iface, ok := cat.Get(stepType)
		if !ok {
			t.Fatalf("no %s in the catalog", stepType)
		}
		dir, ok := stepcode.Dir(stepType)
		if !ok {
			t.Errorf("%s has no built-in folder", stepType)
			continue
		}
		file := dir + "/" + iface.Contract.EntryPoint
		src, err := fs.ReadFile(stepcode.FS, file)
		if err != nil {
			t.Errorf("%s: %v", stepType, err)
			continue
		}
		findings, _, err := validate.CheckScriptSource(context.Background(), iface, file, src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, f := range findings {
			if f.Blocking() || f.Level == finding.Warning {
				t.Errorf("%s (%s): %s %s: %s", file, stepType, f.Level, f.Rule, f.Message)
			}
		}
	}
}
