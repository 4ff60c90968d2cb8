package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/engine/steps"
)

// codeWarnings are the compile warnings about a step's code: one the
// caller lacks, or built-in code standing in for a script the config names.
func codeWarnings(warnings []string) []string {
	var out []string
	for _, w := range warnings {
		if strings.Contains(w, "not found") || strings.Contains(w, "built-in code") || strings.Contains(w, "no code") {
			out = append(out, w)
		}
	}
	return out
}

// tarFiles reads a .tar.gz into path → content.
func tarFiles(t *testing.T, data []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = string(b)
	}
}

// artifactOf is the artifact of kind that step uses.
func artifactOf(t *testing.T, res *Result, step, kind string) Artifact {
	t.Helper()
	for _, a := range res.Artifacts {
		if a.Kind != kind {
			continue
		}
		for _, s := range a.Steps {
			if s == step {
				return a
			}
		}
	}
	t.Fatalf("no %s artifact for step %s in %+v", kind, step, res.Artifacts)
	return Artifact{}
}

// Acceptance (issue 35): every shared DAG, configured with no caller code,
// compiles with no code/missing placeholder and no warning about code, and
// every artifact of its manifest is built-in code (or a file the compiler
// generates); compile.validate finds it valid.
func TestSharedDAGsCompileWithBuiltinCodeOnly(t *testing.T) {
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cat.List() {
		t.Run(e.ID, func(t *testing.T) {
			in := sampleInput(t, e.DAG())
			res, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			sagemakertest.MustValidate(t, res.JSON)
			if strings.Contains(string(res.JSON), "/code/missing/") {
				t.Error("the definition names a code/missing placeholder")
			}
			if w := codeWarnings(res.Warnings); len(w) > 0 {
				t.Errorf("warnings about code: %q", w)
			}
			builtin := 0
			for _, a := range res.Artifacts {
				switch {
				case a.Kind == KindGenerated && a.Local == "":
				case strings.HasPrefix(a.Local, BuiltinPrefix):
					builtin++
					if !strings.Contains(string(res.JSON), a.S3URI) {
						t.Errorf("artifact %s (%s) is not named by the definition", a.Local, a.S3URI)
					}
				default:
					t.Errorf("artifact %s (%s) is neither built-in code nor generated", a.Local, a.Kind)
				}
			}
			if builtin == 0 {
				t.Fatal("no built-in code artifact")
			}
			for local := range res.Manifest() {
				if !strings.HasPrefix(local, BuiltinPrefix) && !strings.HasPrefix(local, "generated:") {
					t.Errorf("manifest entry %s is not built-in code", local)
				}
			}
			v := Validate(context.Background(), in)
			if !v.IsValid || len(codeWarnings(v.Warnings)) > 0 {
				t.Errorf("compile.validate: %s %v %v", v.Summary, v.ConfigErrors, v.Warnings)
			}
		})
	}
}

// The built-in artifacts hold the built-in files: a script processor ships
// the one script, a framework step its whole folder.
func TestBuiltinArtifactsHoldTheBuiltinFiles(t *testing.T) {
	res, err := Compile(context.Background(), sampleInput(t, e2eDAG()))
	if err != nil {
		t.Fatal(err)
	}
	script := artifactOf(t, res, "TabularPreprocessing-Training", KindScript)
	want, _ := readBuiltin(t, "tabular_preprocessing/tabular_preprocessing.py")
	if script.Local != "builtin:tabular_preprocessing/tabular_preprocessing.py" || string(script.Data) != want {
		t.Errorf("TabularPreprocessing ships %s (%d bytes), want the built-in script", script.Local, len(script.Data))
	}
	if !strings.HasSuffix(script.Key, "/"+script.SHA256+"/tabular_preprocessing.py") {
		t.Errorf("key %s is not content-addressed", script.Key)
	}
	tarball := artifactOf(t, res, "XGBoostModelEval-Calibration", KindSourceDir)
	files := tarFiles(t, tarball.Data)
	builtin, err := stepcode.Files("xgboost_model_eval")
	if err != nil {
		t.Fatal(err)
	}
	if tarball.Local != "builtin:xgboost_model_eval" || len(files) != len(builtin) {
		t.Fatalf("XGBoostModelEval ships %s with %d files, want builtin:xgboost_model_eval with %d", tarball.Local, len(files), len(builtin))
	}
	for _, f := range builtin {
		if files[f.Path] != f.Text {
			t.Errorf("%s differs from the built-in file", f.Path)
		}
	}
}

func readBuiltin(t *testing.T, p string) (string, error) {
	t.Helper()
	dir, name, _ := strings.Cut(p, "/")
	files, err := stepcode.Files(dir)
	for _, f := range files {
		if f.Path == name {
			return f.Text, nil
		}
	}
	t.Fatalf("no built-in %s: %v", p, err)
	return "", err
}

// A caller's script, sent inline, replaces the built-in code of that step
// only: a script processor's file and a training step's entry point.
func TestInlineScriptReplacesBuiltinCodeOfItsStep(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	const prep, train = "print('my preprocessing')\n", "print('my training')\n"
	in.Sources = fstest.MapFS{
		"tabular_preprocessing.py": {Data: []byte(prep)},
		"xgboost_training.py":      {Data: []byte(train)},
	}
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if w := codeWarnings(res.Warnings); len(w) > 0 {
		t.Errorf("warnings about code: %q", w)
	}
	script := artifactOf(t, res, "TabularPreprocessing-Training", KindScript)
	if script.Local != "tabular_preprocessing.py" || string(script.Data) != prep {
		t.Errorf("TabularPreprocessing ships %s %q, want the caller's script", script.Local, script.Data)
	}
	if cal := artifactOf(t, res, "TabularPreprocessing-Calibration", KindScript); cal.Local != "tabular_preprocessing.py" {
		t.Errorf("the calibration TabularPreprocessing ships %s, want the caller's script", cal.Local)
	}
	tarball := artifactOf(t, res, "XGBoostTraining", KindSourceDir)
	files := tarFiles(t, tarball.Data)
	if tarball.Local != "xgboost_training.py" || files["xgboost_training.py"] != train || files["tabular_features.py"] != "" {
		t.Errorf("XGBoostTraining ships %s %v, want the caller's script alone", tarball.Local, files)
	}
	for _, step := range []string{"DummyDataLoading-Training", "Payload"} {
		if a := artifactOf(t, res, step, KindScript); !strings.HasPrefix(a.Local, BuiltinPrefix) {
			t.Errorf("%s ships %s, want its built-in code", step, a.Local)
		}
	}
}

// Configured hyperparameters reach the job inside the built-in source
// folder (hyperparams/hyperparameters.json beside the script), for training
// and tuning alike.
func TestHyperparametersReachBuiltinTrainingCode(t *testing.T) {
	hp := map[string]any{"objective": "binary:logistic", "eval_metric": "auc", "num_round": json.Number("25"), "max_depth": json.Number("4")}
	for _, trainer := range []string{"XGBoostTraining", "XGBoostTuning"} {
		t.Run(trainer, func(t *testing.T) {
			d := dag.New([]string{"DummyDataLoading_training", "TabularPreprocessing_training", trainer},
				[][2]string{{"DummyDataLoading_training", "TabularPreprocessing_training"}, {"TabularPreprocessing_training", trainer}})
			res, err := Compile(context.Background(), sampleInputWith(t, d, map[string]map[string]any{trainer: {"hyperparameters": hp}}))
			if err != nil {
				t.Fatal(err)
			}
			tarball := artifactOf(t, res, trainer, KindSourceDir)
			if tarball.Local != "builtin:xgboost_training" {
				t.Fatalf("%s ships %s", trainer, tarball.Local)
			}
			files := tarFiles(t, tarball.Data)
			if files["xgboost_training.py"] == "" {
				t.Fatalf("the tarball lacks the script: %v", len(files))
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(files["hyperparams/hyperparameters.json"]), &got); err != nil {
				t.Fatalf("hyperparams/hyperparameters.json: %v", err)
			}
			if got["objective"] != "binary:logistic" || got["num_round"] != float64(25) || got["max_depth"] != float64(4) {
				t.Errorf("hyperparameters %v", got)
			}
			if !strings.Contains(string(res.JSON), `"sagemaker_submit_directory":"\"`+tarball.S3URI+`\""`) {
				t.Errorf("the job's sagemaker_submit_directory is not %s", tarball.S3URI)
			}
		})
	}
}

// LightGBM's built-in code declares its package in requirements.txt, which
// is packed with it (the training toolkit and runproc.sh install it).
func TestLightGBMRequirementsArePacked(t *testing.T) {
	cat, _, _ := pipelines.Load()
	e, ok := cat.Get("lightgbm_complete_e2e")
	if !ok {
		t.Fatal("no lightgbm_complete_e2e shared DAG")
	}
	res, err := Compile(context.Background(), sampleInput(t, e.DAG()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range res.Artifacts {
		if a.Kind != KindSourceDir || !strings.HasPrefix(a.Local, "builtin:lightgbm_") {
			continue
		}
		n++
		if req := tarFiles(t, a.Data)["requirements.txt"]; !strings.Contains(req, "lightgbm") {
			t.Errorf("%s (%v) packs requirements.txt %q", a.Local, a.Steps, req)
		}
	}
	if n < 2 {
		t.Fatalf("%d LightGBM source folders packed, want training and evaluation at least", n)
	}
}

// newStepInput is a DAG with a caller's own step type (testdata/newstep,
// no built-in code) between preprocessing and training, configured with
// sample values; sources is the caller's workspace.
func newStepInput(t *testing.T) Input {
	t.Helper()
	cat, probs, err := steps.LoadCatalog("testdata/newstep")
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	s, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	d := dag.New([]string{"DummyDataLoading_training", "TabularPreprocessing_training", "OutlierClipping_training", "XGBoostTraining"},
		[][2]string{{"DummyDataLoading_training", "TabularPreprocessing_training"}, {"TabularPreprocessing_training", "OutlierClipping_training"},
			{"OutlierClipping_training", "XGBoostTraining"}})
	rep, err := config.Requirements(context.Background(), d, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := config.SampleValues(rep)
	if len(missing) > 0 {
		t.Fatalf("no sample values for %v", missing)
	}
	configs, cprobs, _ := s.BuildDAG(context.Background(), d, base, perNode)
	if len(cprobs) > 0 {
		t.Fatalf("config problems: %v", cprobs)
	}
	return Input{DAG: d, Configs: configs, Catalog: cat}
}

// A caller's step type without its script is a finding naming the node,
// the file expected and the remedy — from compile, compile.validate and
// compile.preview — never a placeholder URI; with the script it compiles.
func TestStepTypeWithoutCodeIsAFinding(t *testing.T) {
	in := newStepInput(t)
	res, err := Compile(context.Background(), in)
	var mc *MissingCodeError
	if !errors.As(err, &mc) || res != nil {
		t.Fatalf("compile: %v (result %v), want a MissingCodeError", err, res != nil)
	}
	if len(mc.Steps) != 1 {
		t.Fatalf("findings %+v, want one", mc.Steps)
	}
	m := mc.Steps[0]
	if m.Node != "OutlierClipping_training" || m.StepType != "OutlierClipping" || m.Expected != "outlier_clipping.py" {
		t.Errorf("finding %+v", m)
	}
	for _, want := range []string{`node "OutlierClipping_training" (OutlierClipping)`, "outlier_clipping.py", "files", "source_dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := CompileSingleNode(context.Background(), in, "OutlierClipping_training",
		map[string]string{"input_data": "s3://bucket/data/"}, true); !errors.As(err, &mc) {
		t.Errorf("single-node compile: %v, want a MissingCodeError", err)
	}

	v := Validate(context.Background(), in)
	if v.IsValid || len(v.ConfigErrors["OutlierClipping_training"]) != 1 ||
		!strings.Contains(v.ConfigErrors["OutlierClipping_training"][0], "outlier_clipping.py") {
		t.Errorf("compile.validate: valid %v, errors %v", v.IsValid, v.ConfigErrors)
	}
	if len(v.MissingCode) != 1 || v.MissingCode[0] != m {
		t.Errorf("validation's missing code %+v, want %+v", v.MissingCode, m)
	}
	p, err := PreviewResolution(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.MissingCode) != 1 || p.MissingCode[0] != m {
		t.Errorf("preview's missing code %+v, want %+v", p.MissingCode, m)
	}
	found := false
	for _, r := range p.Recommendations {
		found = found || strings.Contains(r, "OutlierClipping_training") && strings.Contains(r, "outlier_clipping.py")
	}
	if !found {
		t.Errorf("compile.preview recommends %q, nothing about the missing script", p.Recommendations)
	}

	in.Sources = fstest.MapFS{"outlier_clipping.py": {Data: []byte("print('clip')\n")}}
	res, err = Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if a := artifactOf(t, res, "OutlierClipping-Training", KindScript); a.Local != "outlier_clipping.py" {
		t.Errorf("the new step ships %s", a.Local)
	}
	if p, _ := PreviewResolution(context.Background(), in); strings.Contains(strings.Join(p.Recommendations, "\n"), "no code") {
		t.Errorf("compile.preview still reports missing code: %q", p.Recommendations)
	}
}
