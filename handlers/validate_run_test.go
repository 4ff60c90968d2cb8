package handlers

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/localrun"
	"github.com/cursus-dev/cursus/engine/sandbox"
	"github.com/cursus-dev/cursus/registry"
)

// validate.run_pipeline executes code: a remote caller meets the same gate
// as validate.run_scripts.
func TestRunPipelineIsGatedLikeRunScripts(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	args := `{"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json"}`
	scripts := callRemote(t, reg, "validate.run_scripts", args)
	res := callRemote(t, reg, "validate.run_pipeline", args)
	if res.OK || scripts.OK || res.Code != scripts.Code {
		t.Fatalf("run_pipeline answered %v %s, run_scripts %v %s", res.OK, res.Code, scripts.OK, scripts.Code)
	}
	def, ok := reg.Lookup("validate.run_pipeline")
	if !ok || !def.ExecCode || def.Writes {
		t.Fatalf("flags: %+v", def)
	}
}

func TestRunPipelineRefusesBadInput(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	compiled := answer[compileReport](t, call(t, reg, "compile.with_report", `{"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json"}`))
	def, _ := json.Marshal(compiled.Definition)
	manifest := compiled.Manifest
	var dropped string
	for k := range manifest {
		// The training artifact: its tarball holds the config's
		// hyperparameters, which the definition does not carry.
		if strings.HasSuffix(k, "@XGBoostTraining") {
			dropped = k
			delete(manifest, k)
		}
	}
	short, _ := json.Marshal(manifest)
	for _, c := range []struct{ name, args, want string }{
		{"nothing to run", `{}`, "give definition and manifest"},
		{"definition without manifest", `{"definition": ` + string(def) + `}`, "needs its manifest"},
		{"both", `{"definition": ` + string(def) + `, "manifest": {}, "dag_file": "examples/xgboost-tabular/dag.json"}`, "not both"},
		{"not a definition", `{"definition": {"nodes": ["A"], "edges": []}, "manifest": {}}`, "not a pipeline definition"},
		{"manifest missing an artifact", `{"definition": ` + string(def) + `, "manifest": ` + string(short) + `}`, "does not list"},
		{"manifest entry not in the files", `{"definition": ` + string(def) + `, "manifest": {"gone.py": "s3://b/p/code/` + strings.Repeat("a", 64) + `/gone.py"}}`, "not in the call's files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, reg, "validate.run_pipeline", c.args)
			mustFail(t, res, registry.CodeInvalidInput)
			if !strings.Contains(res.Error, c.want) {
				t.Errorf("error %q does not say %q", res.Error, c.want)
			}
		})
	}
	if dropped == "" {
		t.Fatal("the example's manifest has no XGBoostTraining source directory")
	}
}

// The example project, compiled in the call, runs on its own data, with a
// progress notification as each step starts and ends.
func TestRunPipelineRunsTheExampleProject(t *testing.T) {
	if err := sandbox.Namespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import xgboost").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with xgboost")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir+"/examples/xgboost-tabular", os.DirFS("../examples/xgboost-tabular")); err != nil {
		t.Fatal(err)
	}
	deps, err := NewDeps(Options{WorkspaceRoot: dir, Python: "/usr/bin/python3"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../examples/xgboost-tabular/data/tabular.csv")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json",
		"sample_data": map[string]string{"tabular.csv": string(data)}})
	var notes []string
	ctx := registry.WithProgress(context.Background(), func(done, total float64, msg string) { notes = append(notes, msg) })
	rep := answer[localrun.Report](t, callAs(t, ctx, reg, "validate.run_pipeline", string(args)))
	if len(rep.Steps) != 9 || len(notes) != 18 {
		t.Fatalf("%d steps, %d progress notes: %q", len(rep.Steps), len(notes), notes)
	}
	for _, st := range rep.Steps {
		if st.Status != "succeeded" {
			t.Errorf("step %v: %v %v", st.Name, st.Status, st.Error)
		}
	}
	if !rep.OK {
		t.Errorf("report not ok: %+v", rep.FirstFailure)
	}
}

// s3Registry serves the example project with the local run's object
// store backed by the S3 at endpoint.
func s3Registry(t *testing.T, endpoint string) *registry.Registry {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir+"/examples/xgboost-tabular", os.DirFS("../examples/xgboost-tabular")); err != nil {
		t.Fatal(err)
	}
	deps, err := NewDeps(Options{WorkspaceRoot: dir, Python: "/usr/bin/python3", AWSEndpoint: endpoint, AWSRegion: "us-east-1", RunPipelineS3: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// With workspace.run_pipeline_s3 the tool is flagged network (still gated
// as exec_code), reads the caller's input from S3 (no built-in sample
// stands in for it: a missing object fails the first step naming its
// URI), and an unreachable S3 fails the step without naming the endpoint.
func TestRunPipelineWithS3(t *testing.T) {
	if err := sandbox.Namespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import pandas").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with pandas")
	}
	fake := fakeAWS(t)
	reg := s3Registry(t, fake.URL())
	def, _ := reg.Lookup("validate.run_pipeline")
	if !def.Network || !def.ExecCode {
		t.Errorf("flags with S3: %v", def.Flags())
	}
	plain, _ := exampleRegistry(t, "")
	if def, _ := plain.Lookup("validate.run_pipeline"); def.Network {
		t.Errorf("flags without S3: %v", def.Flags())
	}

	firstFailure := func(reg *registry.Registry) (localrun.Failure, string) {
		res := call(t, reg, "validate.run_pipeline", `{`+exampleArgs+`}`)
		raw, _ := json.Marshal(res)
		rep := answer[localrun.Report](t, res)
		if rep.OK || rep.FirstFailure == nil {
			t.Fatalf("answer: %s", raw)
		}
		return *rep.FirstFailure, string(raw)
	}
	f, raw := firstFailure(reg)
	if !strings.Contains(f.Reason, "s3://") || !strings.Contains(f.Remedy, "upload the input to s3://") {
		t.Errorf("missing input: %+v", f)
	}
	if fake.Count("ListObjectsV2") == 0 {
		t.Error("the run never asked S3 for its input")
	}
	host := strings.TrimPrefix(fake.URL(), "http://")
	if strings.Contains(raw, host) || strings.Contains(raw, "127.0.0.1") {
		t.Errorf("the answer names the endpoint: %s", raw)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	f, raw = firstFailure(s3Registry(t, "http://"+dead))
	if !strings.Contains(f.Reason, "could not reach S3") || !strings.Contains(f.Remedy, "could not be reached") {
		t.Errorf("unreachable: %+v", f)
	}
	if strings.Contains(raw, dead) || strings.Contains(raw, "127.0.0.1") {
		t.Errorf("the answer names the endpoint: %s", raw)
	}
}
