package handlers

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

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
	compiled := mustOK(t, call(t, reg, "compile.with_report", `{"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json"}`))
	def, _ := json.Marshal(compiled["definition"])
	manifest := compiled["manifest"].(map[string]any)
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
	rep := mustOK(t, callAs(t, ctx, reg, "validate.run_pipeline", string(args)))
	steps := rep["steps"].([]any)
	if len(steps) != 9 || len(notes) != 18 {
		t.Fatalf("%d steps, %d progress notes: %q", len(steps), len(notes), notes)
	}
	for _, s := range steps {
		if st := s.(map[string]any); st["status"] != "succeeded" {
			t.Errorf("step %v: %v %v", st["name"], st["status"], st["error"])
		}
	}
	if rep["ok"] != true {
		t.Errorf("report not ok: %v", rep["first_failure"])
	}
}
