package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// scripts returns a workspace holding every script the e2e DAG needs.
func scripts(in Input) fstest.MapFS {
	fs := fstest.MapFS{}
	for _, c := range in.Configs {
		iface, _ := in.Catalog.Get(c.StepType)
		if iface.Contract.EntryPoint != "" {
			fs[iface.Contract.EntryPoint] = &fstest.MapFile{Data: []byte("# " + iface.Contract.EntryPoint + "\nprint('ok')\n")}
		}
	}
	fs["inference.py"] = &fstest.MapFile{Data: []byte("def model_fn(d):\n    return d\n")}
	for _, f := range []string{"xgboost_training.py", "xgboost_model_eval.py"} {
		fs["xgb/"+f] = &fstest.MapFile{Data: []byte("print('" + f + "')\n")}
	}
	return fs
}

func TestChangingOneScriptChangesOnlyItsArtifact(t *testing.T) {
	// Framework steps pack their source directory; keep it apart from the
	// script processors' files so the change touches one artifact.
	in := sampleInputWith(t, e2eDAG(), map[string]map[string]any{
		"XGBoostTraining": {"source_dir": "xgb"}, "XGBoostModelEval_calibration": {"source_dir": "xgb"}})
	src := scripts(in)
	in.Sources = src
	before, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range before.Artifacts {
		if strings.HasPrefix(a.Local, BuiltinPrefix) {
			t.Fatalf("artifact %s: built-in code used where the workspace has the script", a.Local)
		}
		if !strings.HasPrefix(a.Key, before.PipelineName+"/code/"+a.SHA256+"/") {
			t.Fatalf("key %s is not content-addressed", a.Key)
		}
	}
	// tabular_preprocessing.py is a script-processor file: only its own
	// key may change. (Framework steps pack the whole directory, so their
	// tarball changes too — that is correct, and checked separately.)
	src["tabular_preprocessing.py"] = &fstest.MapFile{Data: []byte("print('changed')\n")}
	after, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	changed := diffKeys(before.Artifacts, after.Artifacts)
	if len(changed) != 1 || !strings.HasSuffix(changed[0], "/tabular_preprocessing.py") {
		t.Fatalf("changed keys: %v", changed)
	}
	if bytes.Equal(before.JSON, after.JSON) {
		t.Fatal("definition did not change")
	}
}

func diffKeys(a, b []Artifact) []string {
	old := map[string]bool{}
	for _, x := range a {
		old[x.Key] = true
	}
	var out []string
	for _, x := range b {
		if !old[x.Key] {
			out = append(out, x.Key)
		}
	}
	return out
}

func TestSourceDirTarballIsReproducible(t *testing.T) {
	fs := fstest.MapFS{
		"src/b.py":              {Data: []byte("b")},
		"src/a.py":              {Data: []byte("a"), ModTime: fixedTime(1)},
		"src/pkg/c.py":          {Data: []byte("c"), ModTime: fixedTime(2)},
		"src/__pycache__/x.pyc": {Data: []byte("junk")},
		"src/.git/HEAD":         {Data: []byte("junk")},
	}
	one, err := packSourceDir(context.Background(), fs, "src", map[string][]byte{"hyperparams/hyperparameters.json": []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	fs["src/a.py"].ModTime = fixedTime(99)
	two, _ := packSourceDir(context.Background(), fs, "./src/", map[string][]byte{"hyperparams/hyperparameters.json": []byte("{}")})
	if !bytes.Equal(one, two) {
		t.Fatal("mtime changed the tarball")
	}
	gz, err := gzip.NewReader(bytes.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(epoch) || h.Uid != 0 {
			t.Fatalf("%s: mtime %v uid %d", h.Name, h.ModTime, h.Uid)
		}
		names = append(names, h.Name)
	}
	if got := strings.Join(names, ","); got != "a.py,b.py,hyperparams/hyperparameters.json,pkg/c.py" {
		t.Fatalf("entries %s", got)
	}
	if _, err := packSourceDir(context.Background(), fs, "nope", nil); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("absent dir: %v, want not found", err)
	}
}

// Reading a source folder stops when the compile's context ends.
func TestSourceDirReadStopsWhenCancelled(t *testing.T) {
	fs := fstest.MapFS{"src/a.py": {Data: []byte("a")}, "src/b.py": {Data: []byte("b")}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := packSourceDir(ctx, fs, "src", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("packSourceDir after cancel = %v, want context.Canceled", err)
	}
}

// A compile without caller code packs the built-in code of every step,
// and upsert uploads it like any other artifact.
func TestBuiltinCodeServesStepsWithoutCallerCode(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "built-in code") || strings.Contains(w, "not found") {
			t.Errorf("warning about code: %s", w)
		}
	}
	if strings.Contains(string(res.JSON), "/code/missing/") {
		t.Fatal("the definition names a missing-code placeholder")
	}
	f := sagemakertest.NewFakeAWS(t)
	rep, err := Upsert(context.Background(), fakeDeployer(t, f), res, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Uploaded) != len(res.Artifacts) {
		t.Fatalf("uploaded %d of %d artifacts", len(rep.Uploaded), len(res.Artifacts))
	}
}

func fakeDeployer(t *testing.T, f *sagemakertest.FakeAWS) *sagemaker.Client {
	t.Helper()
	c, err := sagemaker.NewClient(context.Background(), sagemaker.ClientOptions{Region: "us-east-1",
		S3Endpoint: f.URL(), SageMakerEndpoint: f.URL(), MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestUpsertAgainstFake(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	in.Sources = scripts(in)
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	f := sagemakertest.NewFakeAWS(t)
	d := fakeDeployer(t, f)
	var progress []int
	rep, err := Upsert(context.Background(), d, res, "", WithProgress(func(done, total int, _ string) { progress = append(progress, done) }))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Created || len(rep.Uploaded) != len(res.Artifacts) || len(progress) != len(res.Artifacts)+1 {
		t.Fatalf("first upsert: %+v progress %v", rep, progress)
	}
	for _, a := range res.Artifacts {
		if got, ok := f.Object(a.Bucket, a.Key); !ok || !bytes.Equal(got, a.Data) {
			t.Fatalf("artifact %s not uploaded intact", a.Key)
		}
	}
	stored, _ := f.Pipeline(res.PipelineName)
	sagemakertest.MustValidate(t, []byte(stored))
	rep, err = Upsert(context.Background(), d, res, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created || len(rep.Uploaded) != 0 || len(rep.Existing) != len(res.Artifacts) {
		t.Fatalf("second upsert: %+v", rep)
	}
	if f.Count("PutObject") != len(res.Artifacts) || f.Count("CreatePipeline") != 1 || f.Count("UpdatePipeline") != 1 {
		t.Fatalf("calls: put %d create %d update %d", f.Count("PutObject"), f.Count("CreatePipeline"), f.Count("UpdatePipeline"))
	}
	f.Fail("UpdatePipeline", "ValidationException")
	_, err = Upsert(context.Background(), d, res, "")
	var ae *sagemaker.AWSError
	if !errors.As(err, &ae) || ae.Code != "ValidationException" {
		t.Fatalf("want AWS ValidationException, got %v", err)
	}
}

func TestInternalKindIsUnsupported(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	in.DAG = dag.New([]string{"CradleDataLoading_training", "TabularPreprocessing_training"},
		[][2]string{{"CradleDataLoading_training", "TabularPreprocessing_training"}})
	_, err := Compile(context.Background(), in)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Replacement != "DummyDataLoading" || ue.Node != "CradleDataLoading_training" {
		t.Fatalf("want UnsupportedError naming DummyDataLoading, got %v", err)
	}
	v := Validate(context.Background(), in)
	if v.IsValid || len(v.UnresolvableBuilders) != 1 {
		t.Fatalf("validate: %+v", v)
	}
}

func TestSingleNode(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	res, err := CompileSingleNode(context.Background(), in, "XGBoostTraining", map[string]string{"input_path": "s3://bucket/run/out"}, true)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	if res.PipelineName != "XGBoostTraining-isolated" || len(res.Definition.Steps) != 1 || res.Definition.Steps[0].DependsOn != nil {
		t.Fatalf("got %s %+v", res.PipelineName, res.Definition.Steps)
	}
	if !strings.Contains(string(res.JSON), `"s3://bucket/run/out","train/"`) {
		t.Fatalf("manual input not used: %s", res.JSON)
	}
	var ie *InputError
	if _, err := CompileSingleNode(context.Background(), in, "Nope", nil, true); !errors.As(err, &ie) {
		t.Fatalf("unknown node: %v", err)
	}
	if _, err := CompileSingleNode(context.Background(), in, "XGBoostTraining", map[string]string{"input_path": "/local"}, true); !errors.As(err, &ie) {
		t.Fatalf("bad uri: %v", err)
	}
	if _, err := CompileSingleNode(context.Background(), in, "XGBoostTraining", map[string]string{"bogus": "s3://bucket/x"}, true); !errors.As(err, &ie) {
		t.Fatalf("unknown input: %v", err)
	}
	var be *BuildError
	if _, err := CompileSingleNode(context.Background(), in, "XGBoostTraining", nil, true); !errors.As(err, &be) {
		t.Fatalf("missing required input: %v", err)
	}
}

func TestPreviewAndValidate(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	p := mustPreview(t, in)
	if len(p.NodeConfigMap) != len(in.DAG.Nodes) {
		t.Fatalf("preview: %+v", p)
	}
	for n, c := range p.ResolutionConfidence {
		if c != 1 {
			t.Errorf("%s: confidence %v", n, c)
		}
	}
	if p.ConfigBuilderMap["XGBoostTrainingConfig"] != "XGBoostTrainingStepBuilder" {
		t.Errorf("builder map %v", p.ConfigBuilderMap)
	}
	v := Validate(context.Background(), in)
	if !v.IsValid {
		t.Fatalf("validate: %+v", v)
	}
	// Drop a config: the node becomes a missing config.
	for i, c := range in.Configs {
		if c.Key == "Payload" {
			in.Configs = append(in.Configs[:i:i], in.Configs[i+1:]...)
			break
		}
	}
	v = Validate(context.Background(), in)
	if v.IsValid || len(v.MissingConfigs) != 1 || v.MissingConfigs[0] != "Payload" {
		t.Fatalf("validate without Payload config: %+v", v)
	}
	var re *ResolutionError
	if _, err := Compile(context.Background(), in); !errors.As(err, &re) {
		t.Fatalf("compile: %v", err)
	}
	p = mustPreview(t, in)
	if p.NodeConfigMap["Payload"] != "UNRESOLVED" || len(p.Recommendations) == 0 {
		t.Fatalf("preview: %+v", p)
	}
}

func TestResolutionStrategies(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	cases := []struct {
		node, step, job, wantKey, method string
	}{
		{"XGBoostTraining", "XGBoostTraining", "", "XGBoostTraining", MethodExactKey},
		{"xgboosttraining", "XGBoostTraining", "", "XGBoostTraining", MethodCaseKey},
		{"TabularPreprocessing_Calibration", "TabularPreprocessing", "Calibration", "TabularPreprocessing_calibration", MethodCaseKey},
		{"TabularPreprocessing_calib", "TabularPreprocessing", "calib", "TabularPreprocessing_calibration", MethodJobType},
	}
	for _, c := range cases {
		r, err := resolveNode(c.node, c.step, c.job, indexConfigs(in.Configs))
		if err != nil {
			t.Errorf("%s: %v", c.node, err)
			continue
		}
		if r.ConfigKey != c.wantKey || r.Method != c.method || len(r.Reasons) == 0 {
			t.Errorf("%s: got %s via %s (%.2f)", c.node, r.ConfigKey, r.Method, r.Confidence)
		}
	}
	if _, err := resolveNode("Unrelated", "", "", indexConfigs(in.Configs)); err == nil {
		t.Error("unrelated node resolved")
	}
}

func TestProgressAndCancel(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	var calls int
	var lastTotal int
	if _, err := Compile(context.Background(), in, WithProgress(func(done, total int, msg string) { calls++; lastTotal = total })); err != nil {
		t.Fatal(err)
	}
	if calls != len(in.DAG.Nodes) || lastTotal != len(in.DAG.Nodes) {
		t.Fatalf("progress calls %d total %d", calls, lastTotal)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compile(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled compile: %v", err)
	}
}

func fixedTime(s int64) time.Time { return time.Unix(s, 0) }

func mustPreview(t *testing.T, in Input) Preview {
	t.Helper()
	p, err := PreviewResolution(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
