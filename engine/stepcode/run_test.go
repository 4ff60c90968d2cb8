package stepcode

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cursus-dev/cursus/engine/sampledata"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
)

// python is the interpreter the built-in scripts are tested with: Debian's,
// with python3-pandas and python3-sklearn (scripts/test.sh installs them).
const python = "/usr/bin/python3"

// chain runs built-in scripts one after the other in the sandboxed runner
// validate.run_scripts uses, feeding each the outputs of the earlier ones.
type chain struct {
	t      *testing.T
	cat    *steps.Catalog
	runner *scriptrun.Runner
	// outputs by "<label>.<output>": the sandbox directory holding it.
	outputs map[string]string
}

func newChain(t *testing.T) *chain {
	t.Helper()
	if os.Getenv("CI") == "" {
		if err := exec.Command(python, "-c", "import pandas, sklearn").Run(); err != nil {
			t.Skipf("%s lacks pandas or scikit-learn (scripts/test.sh installs python3-pandas and python3-sklearn; set CI to make this a failure): %v", python, err)
		}
	}
	cat, probs, err := steps.LoadCatalog()
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	r := scriptrun.NewRunner(1)
	r.UseInterpreter(python)
	if err := r.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("scripts cannot run in CI: %v", err)
		}
		t.Skipf("scripts cannot run here (set CI to make this a failure): %v", err)
	}
	return &chain{t: t, cat: cat, runner: r, outputs: map[string]string{}}
}

// run runs stepType's built-in script as label with inputs (contract input
// → "<label>.<output>" of an earlier run, or a Source) and checks that it
// succeeded.
func (c *chain) run(label, stepType, jobType string, inputs map[string]any, env map[string]string) *scriptrun.RunResult {
	c.t.Helper()
	iface, _, err := c.cat.ForJobType(stepType, jobType)
	if err != nil {
		c.t.Fatal(err)
	}
	dir, ok := Dir(stepType)
	if !ok {
		c.t.Fatalf("%s has no built-in code", stepType)
	}
	req := scriptrun.RunRequest{Interface: iface, Script: scriptrun.Source{FS: FS, Path: path.Join(dir, iface.Contract.EntryPoint)},
		SampleInputs: map[string]scriptrun.Source{}, Env: env, KeepSandbox: true,
		Limits: scriptrun.Limits{Timeout: 5 * time.Minute}}
	if jobType != "" {
		req.JobArgs = map[string]string{"job_type": jobType}
	}
	for name, in := range inputs {
		switch v := in.(type) {
		case string:
			d, ok := c.outputs[v]
			if !ok {
				c.t.Fatalf("%s: no earlier output %s", label, v)
			}
			req.SampleInputs[name] = scriptrun.Source{FS: os.DirFS(d), Path: "."}
		case scriptrun.Source:
			req.SampleInputs[name] = v
		}
	}
	res, err := c.runner.Run(context.Background(), req)
	if err != nil {
		c.t.Fatalf("%s: %v", label, err)
	}
	if res.Sandbox != "" {
		c.t.Cleanup(func() { os.RemoveAll(res.Sandbox) })
	}
	if !res.Success {
		c.t.Fatalf("%s (%s %s) failed: %s\nstdout:\n%s\nstderr:\n%s", label, stepType, jobType, res.ErrorMessage, res.Stdout, res.Stderr)
	}
	for _, o := range res.Outputs {
		c.outputs[label+"."+o.Name] = o.Dir
	}
	return res
}

// table reads every CSV file under "<label>.<output>"/sub into a header and
// its rows.
func (c *chain) table(output, sub string) ([]string, [][]string) {
	c.t.Helper()
	root := filepath.Join(c.outputs[output], sub)
	var header []string
	var rows [][]string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".csv") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil || len(recs) == 0 {
			return err
		}
		if header != nil && !slices.Equal(header, recs[0]) {
			c.t.Fatalf("%s: files with different headers %v, %v", root, header, recs[0])
		}
		header = recs[0]
		rows = append(rows, recs[1:]...)
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	if header == nil {
		c.t.Fatalf("no CSV under %s", root)
	}
	return header, rows
}

func (c *chain) json(output, file string, into any) {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.outputs[output], file))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		c.t.Fatal(err)
	}
}

func column(header []string, name string) int { return slices.Index(header, name) }

// sampleSource is the built-in sample data as a data_source input.
func sampleSource() scriptrun.Source {
	return scriptrun.Source{FS: fstest.MapFS{"tabular.csv": {Data: sampledata.Tabular()}}, Path: "."}
}

// The data-prep scripts, run as validate.run_scripts runs them on the
// built-in sample data, chained as the shared XGBoost DAGs chain them: the
// training job type fits imputation values, risk tables and a feature
// selection; the calibration job type applies the saved ones, so both end
// with the same columns, no missing cell and numeric categorical fields.
func TestDataPrepScriptsRunChainedOnSampleData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 14 scripts in the sandbox (a minute or two); -short skips it")
	}
	c := newChain(t)
	label := sampledata.LabelField
	for _, job := range []string{"training", "calibration"} {
		c.run("load_"+job, "DummyDataLoading", job, map[string]any{"data_source": sampleSource()}, nil)
		c.run("convert_"+job, "CurrencyConversion", job, map[string]any{"input_data": "load_" + job + ".data_output"},
			map[string]string{"CURRENCY_CONVERSION_VARS": "num_6", "CURRENCY_CONVERSION_DICT": `{"USD": 1.0, "EUR": 1.08}`})
		c.run("prep_"+job, "TabularPreprocessing", job, map[string]any{"input_data": "convert_" + job + ".processed_data",
			"signature": "load_" + job + ".signature", "metadata": "load_" + job + ".metadata_output"}, map[string]string{"LABEL_FIELD": label})
	}
	// train/val/test for training, calibration/ otherwise, every row kept.
	total := 0
	for _, split := range []string{"train", "val", "test"} {
		_, rows := c.table("prep_training.processed_data", split)
		total += len(rows)
	}
	_, calibration := c.table("prep_calibration.processed_data", "calibration")
	if total != 1500 || len(calibration) != 1500 {
		t.Fatalf("preprocessing kept %d training and %d calibration rows of 1500", total, len(calibration))
	}

	c.run("sample_training", "StratifiedSampling", "training", map[string]any{"input_data": "prep_training.processed_data"},
		map[string]string{"STRATA_COLUMN": label, "TARGET_SAMPLE_SIZE": "600"})
	header, train := c.table("sample_training.processed_data", "train")
	counts := map[string]int{}
	for _, r := range train {
		counts[r[column(header, label)]]++
	}
	if counts["0"] != 300 || counts["1"] != 300 {
		t.Errorf("balanced sample of 600: %v", counts)
	}
	if _, val := c.table("sample_training.processed_data", "val"); len(val) != 225 {
		t.Errorf("the val split was sampled too: %d rows", len(val))
	}

	for _, job := range []string{"training", "calibration"} {
		from := "sample_training.processed_data"
		if job != "training" {
			from = "prep_calibration.processed_data"
		}
		// The other job types read what the training job type fitted.
		fitted := func(inputs map[string]any, name, output string) map[string]any {
			if job != "training" {
				inputs[name] = output
			}
			return inputs
		}
		c.run("impute_"+job, "MissingValueImputation", job,
			fitted(map[string]any{"input_data": from}, "imputation_params", "impute_training.imputation_params"), map[string]string{"LABEL_FIELD": label})
		c.run("risk_"+job, "RiskTableMapping", job,
			fitted(map[string]any{"input_data": "impute_" + job + ".processed_data"}, "risk_tables", "risk_training.risk_tables"), map[string]string{"LABEL_FIELD": label})
		c.run("select_"+job, "FeatureSelection", job,
			fitted(map[string]any{"input_data": "risk_" + job + ".processed_data"}, "selected_features", "select_training.selected_features"),
			map[string]string{"LABEL_FIELD": label, "N_FEATURES_TO_SELECT": "6",
				"FEATURE_SELECTION_METHODS": "variance,correlation,mutual_info,chi2,f_test,rfe,feature_importance,lasso,permutation"})
	}

	var tables struct {
		Fields map[string]struct {
			Bins map[string]float64 `json:"bins"`
		} `json:"fields"`
	}
	c.json("risk_training.risk_tables", "risk_tables.json", &tables)
	for _, f := range []string{"cat_1", "cat_2", "cat_3"} {
		if len(tables.Fields[f].Bins) < 3 {
			t.Errorf("risk table of %s: %v", f, tables.Fields[f].Bins)
		}
	}
	var selection struct {
		Selected []string `json:"selected_features"`
	}
	c.json("select_training.selected_features", "selected_features.json", &selection)
	if len(selection.Selected) != 6 || !slices.Contains(selection.Selected, "num_1") {
		t.Errorf("selected %v, want 6 features including num_1 (the strongest signal)", selection.Selected)
	}

	trainHeader, trainRows := c.table("select_training.processed_data", "train")
	calHeader, calRows := c.table("select_calibration.processed_data", "calibration")
	if !slices.Equal(trainHeader, calHeader) {
		t.Fatalf("training columns %v, calibration columns %v", trainHeader, calHeader)
	}
	want := append([]string{sampledata.IDField, label}, selection.Selected...)
	slices.Sort(want)
	got := slices.Clone(trainHeader)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("columns %v, want id, label and the selection %v", trainHeader, selection.Selected)
	}
	if len(calRows) != 1500 {
		t.Errorf("%d calibration rows after the chain, want 1500", len(calRows))
	}
	for _, rows := range [][][]string{trainRows, calRows} {
		for i, r := range rows {
			for j, v := range r {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					t.Fatalf("row %d column %s = %q: not a number (missing, or a category left unmapped)", i, trainHeader[j], v)
				}
			}
		}
	}
}

// DummyTraining re-emits a pretrained model.tar.gz, adding the
// hyperparameters when given, and refuses an archive that is not one.
func TestDummyTrainingRepacksThePretrainedModel(t *testing.T) {
	c := newChain(t)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	_ = tw.WriteHeader(&tar.Header{Name: "xgboost-model", Mode: 0o644, Size: 5, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("model"))
	tw.Close()
	gz.Close()
	model := scriptrun.Source{FS: fstest.MapFS{"model.tar.gz": {Data: buf.Bytes()}}, Path: "."}
	hp := scriptrun.Source{FS: fstest.MapFS{"hyperparameters.json": {Data: []byte(`{"num_round": "10"}`)}}, Path: "."}
	c.run("dummy", "DummyTraining", "", map[string]any{"pretrained_model_path": model, "hyperparameters_s3_uri": hp}, nil)
	f, err := os.Open(filepath.Join(c.outputs["dummy.model_output"], "model.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = string(b)
	}
	if files["xgboost-model"] != "model" || files["hyperparameters.json"] != `{"num_round": "10"}` {
		t.Errorf("model.tar.gz holds %v", files)
	}

	iface, _ := c.cat.Get("DummyTraining")
	bad := scriptrun.Source{FS: fstest.MapFS{"model.tar.gz": {Data: []byte("not a tarball")}}, Path: "."}
	res, err := c.runner.Run(context.Background(), scriptrun.RunRequest{Interface: iface,
		Script: scriptrun.Source{FS: FS, Path: "dummy_training/dummy_training.py"}, SampleInputs: map[string]scriptrun.Source{"pretrained_model_path": bad}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Stderr+res.ErrorMessage, "is not a gzip'd tar archive") {
		t.Errorf("a broken archive: success %v, %s %s", res.Success, res.ErrorMessage, res.Stderr)
	}
}
