package handlers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
	"github.com/cursus-dev/cursus/registry"
)

// exampleRegistry builds the registry over a workspace holding a copy of
// examples/xgboost-tabular, with AWS pointed at endpoint.
func exampleRegistry(t testing.TB, endpoint string) (*registry.Registry, string) {
	t.Helper()
	dir := t.TempDir()
	rel := filepath.Join("examples", "xgboost-tabular")
	if err := os.CopyFS(filepath.Join(dir, rel), os.DirFS(filepath.Join("..", rel))); err != nil {
		t.Fatal(err)
	}
	deps, err := NewDeps(Options{WorkspaceRoot: dir, AWSEndpoint: endpoint, AWSRegion: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg, dir
}

const exampleArgs = `"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json"`

func TestCompileWithReportExample(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	data := answer[compileReport](t, call(t, reg, "compile.with_report", `{`+exampleArgs+`}`))
	if data.StepCount != 9 {
		t.Fatalf("step_count %d", data.StepCount)
	}
	def, err := json.Marshal(data.Definition)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, def)
	if len(data.Manifest) == 0 {
		t.Fatal("no manifest")
	}
	for local, uri := range data.Manifest {
		if !strings.HasPrefix(uri, "s3://my-sagemaker-bucket/") || strings.Contains(uri, "/missing/") {
			t.Errorf("%s → %v", local, uri)
		}
	}
}

// fakeAWS starts the loopback S3 and SageMaker fake and gives the AWS SDK
// static credentials and no other source (no instance metadata, no
// profile files), so nothing reaches beyond loopback.
func fakeAWS(t *testing.T) *sagemakertest.FakeAWS {
	t.Helper()
	fake := sagemakertest.NewFakeAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	return fake
}

func TestCompileDAGUpsertAgainstFake(t *testing.T) {
	fake := fakeAWS(t)
	reg, _ := exampleRegistry(t, fake.URL())

	var progressCalls int
	ctx := registry.WithProgress(context.Background(), func(done, total float64, msg string) { progressCalls++ })
	args, _ := registry.DecodeArgs([]byte(`{` + exampleArgs + `, "upsert": true}`))
	data := answer[compileDAGOut](t, reg.Call(ctx, "compile.dag", args))
	if !data.Upserted || data.Created == nil || !*data.Created {
		t.Fatalf("first upsert: %+v", data)
	}
	if progressCalls == 0 {
		t.Error("no progress reported")
	}
	puts := fake.Count("PutObject")
	if puts == 0 || puts != len(data.Artifacts) {
		t.Fatalf("PutObject %d for %d artifacts", puts, len(data.Artifacts))
	}
	name := data.PipelineName
	stored, ok := fake.Pipeline(name)
	if !ok {
		t.Fatal("pipeline not created")
	}
	sagemakertest.MustValidate(t, []byte(stored))

	data = answer[compileDAGOut](t, call(t, reg, "compile.dag", `{`+exampleArgs+`, "upsert": true}`))
	if data.Created == nil || *data.Created || fake.Count("UpdatePipeline") != 1 || fake.Count("PutObject") != puts {
		t.Fatalf("second upsert: %+v (puts %d)", data, fake.Count("PutObject"))
	}

	fake.Fail("UpdatePipeline", "AccessDeniedException")
	res := call(t, reg, "compile.dag", `{`+exampleArgs+`, "upsert": true}`)
	mustFail(t, res, registry.CodeUpsertFailed)
	b := string(res.Encode())
	if !strings.Contains(b, "AccessDeniedException") {
		t.Fatalf("AWS error code not surfaced: %s", b)
	}

	// Remote callers do not get the destructive tool unless enabled.
	mustFail(t, callRemote(t, reg, "compile.dag", `{`+exampleArgs+`}`), registry.CodeToolDisabled)
}

func TestCompileErrors(t *testing.T) {
	reg, dir := exampleRegistry(t, "")
	mustFail(t, call(t, reg, "compile.with_report", `{"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "nope.json"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "compile.validate", `{"dag_file": "../../etc/passwd", "config_file": "examples/xgboost-tabular/config.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "compile.preview", `{"config_file": "examples/xgboost-tabular/config.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "compile.with_report", `{"config_file": "../outside.json", "dag_file": "examples/xgboost-tabular/dag.json"}`), registry.CodeInvalidInput)
	// An Amazon-internal node is refused with the public replacement named.
	res := call(t, reg, "compile.with_report", `{"config_file": "examples/xgboost-tabular/config.json", "dag": {"nodes": ["CradleDataLoading_training", "TabularPreprocessing_training"], "edges": [["CradleDataLoading_training", "TabularPreprocessing_training"]]}}`)
	mustFail(t, res, registry.CodeUnsupported)
	if !strings.Contains(string(res.Encode()), "DummyDataLoading") {
		t.Fatalf("no replacement named: %s", res.Encode())
	}
	// A node with no config.
	mustFail(t, call(t, reg, "compile.with_report", `{"config_file": "examples/xgboost-tabular/config.json", "dag": {"nodes": ["BatchTransform_testing"], "edges": []}}`), registry.CodeValidationFailed)
	v := answer[compiler.ValidationResult](t, call(t, reg, "compile.validate", `{"config_file": "examples/xgboost-tabular/config.json", "dag": {"nodes": ["XGBoostTraining", "Unknown_thing"], "edges": []}}`))
	if v.IsValid {
		t.Fatalf("validate: %+v", v)
	}
	// A script the project lacks is served by the built-in code of its
	// step type, and the compile says so; steps.code, the tool that shows
	// that code, is a next step (the warning, engine text, names none).
	if err := os.Remove(filepath.Join(dir, "examples/xgboost-tabular/scripts/payload.py")); err != nil {
		t.Fatal(err)
	}
	res = call(t, reg, "compile.with_report", `{`+exampleArgs+`}`)
	rep := answer[compileReport](t, res)
	if _, ok := rep.Manifest["builtin:payload/payload.py"]; !ok {
		t.Errorf("manifest has no built-in payload script: %v", rep.Manifest)
	}
	if !strings.Contains(string(res.Encode()), "examples/xgboost-tabular/scripts/payload.py is not in the call's files or the workspace: the built-in code of Payload is used") {
		t.Errorf("no warning that the built-in payload script stands in: %s", res.Encode())
	}
	shows := false
	for _, n := range res.NextSteps {
		shows = shows || n.Tool == "steps.code" && n.ArgsHint["step_type"] == "Payload" && strings.Contains(n.When, "examples/xgboost-tabular/scripts/payload.py")
	}
	if !shows {
		t.Errorf("no steps.code next step for the built-in Payload code: %+v", res.NextSteps)
	}
	if res := call(t, reg, "compile.validate", `{`+exampleArgs+`}`); len(res.NextSteps) == 0 || res.NextSteps[len(res.NextSteps)-1].Tool != "steps.code" {
		t.Errorf("compile.validate: no steps.code next step for the built-in Payload code: %+v", res.NextSteps)
	}
}

func TestCompileNameAndSingleNode(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	d := answer[compileNameOut](t, call(t, reg, "compile.name", `{"base": "xgboost-training", "sanitize": "My Pipeline!! v3"}`))
	if d.Generated != "xgboost-training-1-0-pipeline" || d.Sanitized != "MyPipelinev3" || d.GeneratedIsValid == nil || !*d.GeneratedIsValid {
		t.Fatalf("name: %+v", d)
	}
	mustFail(t, call(t, reg, "compile.name", `{}`), registry.CodeInvalidInput)
	s := answer[compileSingleNodeOut](t, call(t, reg, "compile.single_node", `{`+exampleArgs+`, "target_node": "XGBoostTraining", "manual_inputs": {"input_path": "s3://my-bucket/run/processed"}}`))
	if s.PipelineName != "XGBoostTraining-isolated" {
		t.Fatalf("single node: %+v", s)
	}
	mustFail(t, call(t, reg, "compile.single_node", `{`+exampleArgs+`, "target_node": "XGBoostTraining", "manual_inputs": {"input_path": "not-s3"}}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "compile.single_node", `{`+exampleArgs+`, "target_node": "Nope", "manual_inputs": {}}`), registry.CodeInvalidInput)
}

// Issue 21 item 3: the compile tools put the DAG in the generated name,
// and compile.name shows that name.
func TestCompileNamesThePipelineAfterItsDAG(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	d := answer[compileReport](t, call(t, reg, "compile.with_report", `{`+exampleArgs+`}`))
	n := answer[compileNameOut](t, call(t, reg, "compile.name", `{"base": "example-tabular-xgboost-NA", "dag": "examples-xgboost-tabular", "version": "1.0.0"}`))
	if d.PipelineName != "example-tabular-xgboost-NA-examples-xgboost-tabular-1-0-0-pipeline" || n.Generated != d.PipelineName {
		t.Fatalf("compiled %q, compile.name %q", d.PipelineName, n.Generated)
	}
	mustFail(t, call(t, reg, "compile.name", `{"dag": "x"}`), registry.CodeInvalidInput)
}
