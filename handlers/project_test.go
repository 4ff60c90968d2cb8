package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

func TestProjectInitScaffoldsAndStubsPassPreflight(t *testing.T) {
	reg, root := newTestRegistry(t)
	res := call(t, reg, "project.init", `{"name": "fraud", "framework": "xgboost", "target_dir": "projects"}`)
	data := answer[projectInitOut](t, res)
	if data.TargetPath != "projects/fraud_xgboost" || !data.Ready {
		t.Fatalf("project.init: %s", res.Encode())
	}
	for _, f := range []string{"README.md", "pipeline_config/dag.json", "pipeline_config/config.json", "scripts/xgboost_training.py"} {
		if _, err := os.Stat(filepath.Join(root, "projects/fraud_xgboost", f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	for _, s := range data.Scripts {
		st := s.StepType
		pre := call(t, reg, "author.preflight_step", `{"step_name": "`+st+`", "source_dir": "projects/fraud_xgboost/scripts"}`)
		if !pre.OK {
			t.Errorf("preflight %s: %s", st, pre.Encode())
			continue
		}
		gates := answer[verify.PreflightReport](t, pre).Gates
		if len(gates) == 0 {
			t.Fatalf("preflight %s ran no gate", st)
		}
		last := gates[len(gates)-1]
		if last.Name != "script_alignment" || strings.HasPrefix(last.Detail, "SKIPPED") {
			t.Errorf("%s: script gate did not check the stub: %+v", st, last)
		}
		valOK(t, call(t, reg, "author.check_script", `{"step_name": "`+st+`", "source_dir": "projects/fraud_xgboost/scripts"}`))
	}
	valOK(t, call(t, reg, "validate.alignment", `{"target_scripts": ["TabularPreprocessing", "XGBoostTraining"], "source_dir": "projects/fraud_xgboost/scripts"}`))
	// Again without overwrite: already_exists.
	mustFail(t, call(t, reg, "project.init", `{"name": "fraud", "framework": "xgboost", "target_dir": "projects"}`), registry.CodeAlreadyExists)
	valOK(t, call(t, reg, "project.init", `{"name": "fraud", "framework": "xgboost", "target_dir": "projects", "overwrite": true}`))
}

func TestProjectInitRefusals(t *testing.T) {
	reg, root := newTestRegistry(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"name": "../x", "framework": "xgboost"}`,
		`{"name": "..", "framework": "xgboost"}`,
		`{"name": "x", "framework": "xgboost", "target_dir": "` + outside + `"}`,
		`{"name": "x", "framework": "xgboost", "target_dir": "escape"}`,
		`{"name": "x", "framework": "xgboost", "target_dir": "a/../../b"}`,
		`{"name": "x", "framework": "sklearn"}`,
		`{"name": "x"}`,
		`{"name": 5, "framework": "xgboost"}`,
		`{"name": "x", "framework": "xgboost", "extra": true}`,
		`{"name": "` + strings.Repeat("n", 100) + `", "framework": "xgboost"}`,
		`{"name": "x", "framework": "xgboost", "dag": {"nodes": ["NoSuchStep"]}}`,
	} {
		mustFail(t, call(t, reg, "project.init", args), registry.CodeInvalidInput)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the root: %v", entries)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("a refused init wrote into the root: %v", entries)
	}
	// Writes are gated for remote callers.
	mustFail(t, callRemote(t, reg, "project.init", `{"name": "x", "framework": "xgboost", "target_dir": "projects"}`), registry.CodeToolDisabled)
}

func TestProjectBringUp(t *testing.T) {
	reg, root := newTestRegistry(t)
	res := call(t, reg, "project.bring_up", `{"name": "new_model", "framework": "pytorch", "dag_source": "manual"}`)
	data := answer[bringUpPlan](t, res)
	if data.Workflow != "cursus-new-project" || len(data.Stages) != 3 {
		t.Errorf("bring_up: %s", res.Encode())
	}
	// The plan's stages are the ones workflow.submit checks, and a
	// read-only remote caller can run every one (Scaffold on project.init's
	// returned files).
	remote := callRemote(t, reg, "project.bring_up", `{"name": "new_model", "framework": "pytorch"}`)
	stages := answer[bringUpPlan](t, remote).Stages
	gates, _ := workflows.Stages(workflows.NewProject)
	for i, g := range gates {
		if i >= len(stages) || !slices.ContainsFunc(stages, func(s guideStage) bool { return s.Name == g.Name }) {
			t.Errorf("gate stage %s is not in bring_up's plan %+v", g.Name, stages)
		}
	}
	if !remote.OK || len(remote.Warnings) != 0 || strings.Contains(string(remote.Encode()), "cannot") {
		t.Errorf("bring_up for a read-only caller: %s", remote.Encode())
	}
	// Cursus's workflow_path names the workflow's guide resource.
	if data.WorkflowPath != "cursus://workflows/cursus-new-project" {
		t.Errorf("workflow_path = %v", data.WorkflowPath)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("bring_up wrote files: %v", entries)
	}
	mustFail(t, call(t, reg, "project.bring_up", `{"name": "a/b", "framework": "pytorch"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "project.bring_up", `{"name": "a", "framework": "pytorch", "dag_source": "x"}`), registry.CodeInvalidInput)
}

func TestAuthorRulesAndChecklist(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, topic := range steps.RuleTopics {
		if d := answer[authorRulesOut](t, call(t, reg, "author.rules", `{"topic": "`+topic+`"}`)); d.Rules == nil {
			t.Errorf("%s: no rules", topic)
		}
	}
	mustFail(t, call(t, reg, "author.rules", `{"topic": "other"}`), registry.CodeInvalidInput)
	d := answer[authorChecklistOut](t, call(t, reg, "author.checklist", `{"sagemaker_step_type": "Training"}`))
	if d.ExemplarStep != "XGBoostTraining" || len(d.Steps) != 8 || !d.Routable {
		t.Errorf("checklist = %+v", d)
	}
	res := call(t, reg, "author.checklist", `{"sagemaker_step_type": "Lambda"}`)
	if !res.OK || len(res.Warnings) == 0 {
		t.Errorf("Lambda checklist should warn: %s", res.Encode())
	}
	mustFail(t, call(t, reg, "author.checklist", `{"sagemaker_step_type": "Nope"}`), registry.CodeInvalidInput)
}

func TestAuthorPreflightAllAndErrors(t *testing.T) {
	reg, _ := newTestRegistry(t)
	res := call(t, reg, "author.preflight_step", `{"all": true}`)
	if !res.OK {
		t.Errorf("built-ins not constructible: %s", res.Error)
	}
	mustFail(t, call(t, reg, "author.preflight_step", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.preflight_step", `{"step_name": "Nope"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "author.check_script", `{"step_name": "TabularPreprocessing", "script_path": "../x.py"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.check_script", `{"step_name": "TabularPreprocessing"}`), registry.CodeNotFound)
	d := answer[verify.ScriptCheckReport](t, call(t, reg, "author.check_script", `{"step_name": "XGBoostModel"}`))
	if d.Status != "skipped" {
		t.Errorf("CreateModel check_script = %+v", d)
	}
}

func TestValidateRunScriptsOnScaffold(t *testing.T) {
	reg, root := newTestRegistry(t)
	if scriptrun.NewRunner(1).Available() != nil {
		mustFail(t, call(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"]}`), registry.CodeRuntimeUnavailable)
		needPython3(t) // fails in CI, skips the rest elsewhere
	}
	valOK(t, call(t, reg, "project.init", `{"name": "run", "framework": "xgboost", "target_dir": "projects"}`))
	writeWS(t, root, "data/sample.csv", "a,label\n1,0\n")
	args := map[string]any{
		"nodes":         []string{"DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"},
		"edges":         [][2]string{{"DummyDataLoading_training", "TabularPreprocessing_training"}, {"TabularPreprocessing_training", "XGBoostTraining"}},
		"source_dir":    "projects/run_xgboost/scripts",
		"sample_inputs": map[string]any{"DummyDataLoading_training": map[string]string{"data_source": "data/sample.csv"}},
		"env":           map[string]string{"LABEL_FIELD": "label"},
	}
	b, _ := json.Marshal(args)
	res := call(t, reg, "validate.run_scripts", string(b))
	data := answer[verify.RunScriptsReport](t, res)
	if !data.PipelineSuccess || data.SuccessfulScripts != 3 {
		t.Fatalf("run_scripts: %s", res.Encode())
	}
	// The training stub saw the preprocessing output as its input.
	if tr, ok := data.ScriptResults["XGBoostTraining"]; !ok || !tr.Success {
		t.Errorf("training: %+v (reported %v)", tr, ok)
	}
	// Bad inputs.
	mustFail(t, call(t, reg, "validate.run_scripts", `{"nodes": []}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"], "source_dir": "/etc"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"], "source_dir": "projects/run_xgboost/scripts", "sample_inputs": {"TabularPreprocessing_training": {"input_data": "../../etc/passwd"}}}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.run_scripts", `{"nodes": ["A"], "edges": [["A", "B"]]}`), registry.CodeInvalidInput)
	// Gated for remote callers.
	mustFail(t, callRemote(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"]}`), registry.CodeToolDisabled)
}

func TestValidateRunScriptsKillsALoop(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	writeWS(t, root, "scripts/tabular_preprocessing.py", "def main(input_paths, output_paths, environ_vars, job_args):\n    while True:\n        pass\n")
	res := call(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"], "timeout_seconds": 1}`)
	data := answer[verify.RunScriptsReport](t, res)
	if r, ok := data.ScriptResults["TabularPreprocessing_training"]; !ok || data.PipelineSuccess || !r.TimedOut || len(res.Warnings) == 0 {
		t.Errorf("loop not reported: %s", res.Encode())
	}
}

// TestValidateRunScriptsCannotWriteOutsideTheSandbox: a script aiming at
// the workspace (its own source, a new file next to it) or at an absolute
// path elsewhere is refused, and nothing outside the sandbox changes.
func TestValidateRunScriptsCannotWriteOutsideTheSandbox(t *testing.T) {
	needPython3(t)
	reg, root := newTestRegistry(t)
	outside := t.TempDir()
	script := `import os


def attempt(label, fn):
	try:
		fn()
		print(label, "ALLOWED")
	except PermissionError:
		print(label, "DENIED")


def main(input_paths, output_paths, environ_vars, job_args):
	attempt("workspace", lambda: open(ROOT + "/pwned.txt", "w").write("x"))
	attempt("own_source", lambda: open(ROOT + "/scripts/tabular_preprocessing.py", "a").write("# x"))
	attempt("elsewhere", lambda: open(OUTSIDE + "/pwned.txt", "w").write("x"))
	attempt("remove", lambda: os.remove(ROOT + "/scripts/tabular_preprocessing.py"))
	open(os.path.join(output_paths["processed_data"], "ok.csv"), "w").write("a\n1\n")
`
	script = strings.NewReplacer("ROOT", `"`+root+`"`, "OUTSIDE", `"`+outside+`"`).Replace(script)
	writeWS(t, root, "scripts/tabular_preprocessing.py", script)
	res := call(t, reg, "validate.run_scripts", `{"nodes": ["TabularPreprocessing_training"], "env": {"LABEL_FIELD": "a"}}`)
	data := answer[verify.RunScriptsReport](t, res)
	r, ok := data.ScriptResults["TabularPreprocessing_training"]
	if !data.PipelineSuccess || !ok {
		t.Fatalf("run failed: %s", res.Encode())
	}
	for _, label := range []string{"workspace", "own_source", "elsewhere", "remove"} {
		if !strings.Contains(r.Stdout, label+" DENIED") {
			t.Errorf("%s was not denied; stdout:\n%s", label, r.Stdout)
		}
	}
	if src, err := os.ReadFile(filepath.Join(root, "scripts/tabular_preprocessing.py")); err != nil || string(src) != script {
		t.Errorf("the script changed its own source: %v", err)
	}
	for _, p := range []string{filepath.Join(root, "pwned.txt"), filepath.Join(outside, "pwned.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

func TestPromptsDescribeTheFourWorkflows(t *testing.T) {
	ps := Prompts(nil)
	if len(ps) != 4 {
		t.Fatalf("%d prompts", len(ps))
	}
	reg, _ := newTestRegistry(t)
	for _, p := range ps {
		text := p.Render(map[string]string{"name": "demo"}, allOpen)
		if !strings.Contains(text, "Stage 1") || !strings.Contains(text, "Gate:") || !strings.Contains(text, "Tools:") {
			t.Errorf("%s prompt lacks stages/gates/tools:\n%s", p.Name, text)
		}
		if len(p.Arguments) == 0 || p.Description == "" {
			t.Errorf("%s: no arguments or description", p.Name)
		}
	}
	// Every tool a workflow names is a registered tool.
	for _, p := range ps {
		text := p.Render(nil, allOpen)
		for _, line := range strings.Split(text, "\n") {
			rest, ok := strings.CutPrefix(line, "Tools: ")
			if !ok {
				continue
			}
			for _, tool := range strings.Split(rest, ", ") {
				if _, found := reg.Lookup(tool); !found {
					t.Errorf("%s names unknown tool %s", p.Name, tool)
				}
			}
		}
	}
}

// allOpen renders a prompt for a caller that may call every tool.
func allOpen(string) bool { return true }

// TestWorkflowForKeepsOnlyOpenTools: a stage lists only the tools the
// caller may call; it is closed (its gate replaced) when none is left or
// its gate is judged on a tool it lost, and stays as it was when all are
// open.
func TestWorkflowForKeepsOnlyOpenTools(t *testing.T) {
	w := guide{Stages: []guideStage{
		{Name: "Partly", Tools: []string{"a.read", "a.write"}, Gate: "a.read passes", decides: []string{"a.read"}},
		{Name: "GateNeedsIt", Tools: []string{"a.read", "a.write"}, Gate: "written", FixAttempts: 2, decides: []string{"a.write"}},
		{Name: "AllClosed", Tools: []string{"a.write"}, Gate: "written"},
		{Name: "NoTools", Gate: "the user agrees"},
	}}
	got := workflowFor(w, func(tool string) bool { return tool == "a.read" })
	want := []guideStage{
		{Name: "Partly", Tools: []string{"a.read"}, Gate: "a.read passes", decides: []string{"a.read"}},
		{Name: "GateNeedsIt", Gate: closedStageGate},
		{Name: "AllClosed", Gate: closedStageGate},
		{Name: "NoTools", Gate: "the user agrees"},
	}
	if !reflect.DeepEqual(got.Stages, want) {
		t.Errorf("stages = %+v\nwant %+v", got.Stages, want)
	}
	if !reflect.DeepEqual(workflowFor(w, allOpen), w) || w.Stages[0].Tools[1] != "a.write" {
		t.Errorf("an open caller's workflow changed, or the original was modified")
	}
}

// TestProjectInitReturnsFilesWithoutTargetDir: without target_dir,
// project.init produces the project's files as content and writes
// nothing, so a read-only remote caller may call it; with target_dir it
// is a write that caller is refused.
func TestProjectInitReturnsFilesWithoutTargetDir(t *testing.T) {
	reg, root := newTestRegistry(t)
	res := callRemote(t, reg, "project.init", `{"name": "fraud", "framework": "xgboost"}`)
	data := answer[projectInitOut](t, res)
	if !data.Ready {
		t.Fatalf("project.init as content: %s", res.Encode())
	}
	files := data.Files
	for _, f := range []string{"README.md", "pipeline_config/dag.json", "pipeline_config/config.json", "scripts/xgboost_training.py"} {
		if files["projects/fraud_xgboost/"+f] == "" {
			t.Errorf("no %s in data.files (%d files)", f, len(files))
		}
	}
	if len(data.FilesWritten) != 0 {
		t.Errorf("files_written %v for a call that writes nothing", data.FilesWritten)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("project.init without target_dir wrote %v", entries)
	}
	// The same bytes a write puts on disk (config.json carries its creation time).
	valOK(t, call(t, reg, "project.init", `{"name": "fraud", "framework": "xgboost", "target_dir": "projects"}`))
	for _, f := range []string{"README.md", "pipeline_config/dag.json", "scripts/xgboost_training.py"} {
		b, err := os.ReadFile(filepath.Join(root, "projects/fraud_xgboost", f))
		if err != nil || string(b) != files["projects/fraud_xgboost/"+f] {
			t.Errorf("%s differs from what was returned: %v", f, err)
		}
	}
	mustFail(t, callRemote(t, reg, "project.init", `{"name": "x", "framework": "xgboost", "target_dir": "projects"}`), registry.CodeToolDisabled)
	mustFail(t, call(t, reg, "project.init", `{"name": "x", "framework": "xgboost", "overwrite": true}`), registry.CodeInvalidInput)
}
