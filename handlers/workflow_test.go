package handlers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

// exampleContent is the example project as a workflow submission sends
// it: its DAG, config and scripts, the scripts under scriptsDir.
func exampleContent(t *testing.T, scriptsDir string) map[string]any {
	t.Helper()
	read := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(exampleDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	files := map[string]any{}
	src := filepath.Join(exampleDir, "scripts")
	err := fs.WalkDir(os.DirFS(src), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(src, p))
		files[path.Join(scriptsDir, p)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"dag": read("dag.json"), "config": read("config.json"), "files": files}
}

func jsonArgs(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runner drives one run through workflow.start and workflow.submit.
type runner struct {
	t   *testing.T
	reg *registry.Registry
	run string
}

func startRun(t *testing.T, reg *registry.Registry, workflow string, args map[string]string) *runner {
	t.Helper()
	in := map[string]any{"workflow": workflow}
	if args != nil {
		in["args"] = args
	}
	return &runner{t: t, reg: reg, run: answer[workflowOut](t, call(t, reg, "workflow.start", jsonArgs(t, in))).Run}
}

// submit sends content for stage and keeps the new token.
func (r *runner) submit(stage string, content map[string]any) workflowOut {
	r.t.Helper()
	data := answer[workflowOut](r.t, r.raw(stage, content))
	r.run = data.Run
	return data
}

func (r *runner) raw(stage string, content map[string]any) *registry.Result {
	r.t.Helper()
	in := map[string]any{"run": r.run, "stage": stage}
	if content != nil {
		in["content"] = content
	}
	return call(r.t, r.reg, "workflow.submit", jsonArgs(r.t, in))
}

func wantStatus(t *testing.T, data workflowOut, status string) {
	t.Helper()
	if data.Status != status {
		t.Fatalf("status %s, want %s: %+v", data.Status, status, data)
	}
}

// outcomeOf is a green run's outcome decoded into Out: a key Out does not
// have fails the test.
func outcomeOf[Out any](t *testing.T, run workflowOut) Out {
	t.Helper()
	b, err := json.Marshal(run.Outcome)
	if err != nil {
		t.Fatal(err)
	}
	var out Out
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("outcome does not decode into %T: %v\n%.2000s", out, err, b)
	}
	return out
}

// runRefusal is the details of a refused run token or submission.
type runRefusal struct {
	Argument      string `json:"argument"`
	Reason        string `json:"reason"`
	ExpectedStage string `json:"expected_stage"`
	Retryable     bool   `json:"retryable"`
}

func pick(content map[string]any, fields ...string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		out[f] = content[f]
	}
	return out
}

func TestWorkflowConfigurePipelineRunsToGreen(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	wantStatus(t, r.submit("Constrain", pick(c, "dag")), "passed")
	wantStatus(t, r.submit("Validate", pick(c, "dag", "config")), "passed")
	green := r.submit("DagCheck", c)
	wantStatus(t, green, "green")
	outcome := outcomeOf[struct {
		CompileReadyConfig map[string]any `json:"compile_ready_config"`
	}](t, green)
	if !reflect.DeepEqual(outcome.CompileReadyConfig, c["config"]) {
		t.Fatalf("the outcome is not the config the gates passed: %+v", outcome)
	}
	if len(green.Certified) != 3 {
		t.Fatalf("certified %v, want the hashes of three stages", green.Certified)
	}
	status := answer[workflowOut](t, call(t, reg, "workflow.status", `{"run": "`+r.run+`"}`))
	wantStatus(t, status, "green")
	// A content field no stage takes is refused by name.
	unknown := call(t, reg, "workflow.submit", `{"run": "`+r.run+`", "stage": "DagCheck", "content": {"dga": {}}}`)
	if unknown.OK || !strings.Contains(unknown.Error, "dga") {
		t.Fatalf("unknown content field: %v %s", unknown.OK, unknown.Error)
	}
	// A green run takes nothing more.
	mustFail(t, r.raw("DagCheck", c), registry.CodeInvalidInput)
}

// projectContent is the example project sent as the project fraud_xgboost
// of the new-project workflow: its scripts where project.init puts them and
// where its config's source_dir names them.
func projectContent(t *testing.T) map[string]any {
	t.Helper()
	c := exampleContent(t, examplePath+"/scripts")
	files := c["files"].(map[string]any)
	for p, text := range exampleContent(t, "projects/fraud_xgboost/scripts")["files"].(map[string]any) {
		files[p] = text
	}
	return c
}

func TestWorkflowNewProjectIssuesTheCompiledDefinition(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := projectContent(t)
	r := startRun(t, reg, "cursus-new-project", map[string]string{"name": "fraud", "framework": "xgboost"})
	wantStatus(t, r.submit("Scaffold", pick(c, "dag", "files")), "passed")
	wantStatus(t, r.submit("GateDAG", pick(c, "dag")), "passed")
	green := r.submit("Configure", c)
	wantStatus(t, green, "green")
	outcome := outcomeOf[struct {
		PipelineName string         `json:"pipeline_name"`
		Definition   map[string]any `json:"definition"`
	}](t, green)
	if len(outcome.Definition) == 0 || outcome.PipelineName == "" {
		t.Fatalf("no compiled definition: %+v", outcome)
	}
}

// scaffoldContent is what project.init returns without target_dir, as a
// workflow submission: the project's DAG and its files.
func scaffoldContent(t *testing.T, reg *registry.Registry, args string) map[string]any {
	t.Helper()
	data := answer[projectInitOut](t, call(t, reg, "project.init", args))
	dagText, ok := data.Files[data.DAGFile]
	if !ok {
		t.Fatalf("project.init returned no %s among %v", data.DAGFile, slices.Sorted(maps.Keys(data.Files)))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(dagText), &doc); err != nil {
		t.Fatal(err)
	}
	files := map[string]any{}
	for p, text := range data.Files {
		files[p] = text
	}
	return map[string]any{"dag": doc, "files": files}
}

func TestWorkflowInitProjectVerifiesTheScripts(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := scaffoldContent(t, reg, `{"name": "fraud", "framework": "xgboost"}`)
	r := startRun(t, reg, "cursus-init-project", map[string]string{"name": "fraud", "framework": "xgboost"})
	wantStatus(t, r.submit("Consult", nil), "passed")
	wantStatus(t, r.submit("Verify", c), "green")

	// A stub that breaks its contract fails the gate, with findings and
	// the fix attempts left.
	broken := pick(c, "dag", "files")
	files := map[string]any{}
	for p, text := range c["files"].(map[string]any) {
		files[p] = text
	}
	for p := range files {
		if strings.HasSuffix(p, "tabular_preprocessing.py") {
			files[p] = "import os\nopen('/opt/ml/processing/nowhere/x.csv').read()\n"
		}
	}
	broken["files"] = files
	r = startRun(t, reg, "cursus-init-project", map[string]string{"name": "fraud", "framework": "xgboost"})
	r.submit("Consult", nil)
	failed := r.submit("Verify", broken)
	wantStatus(t, failed, "failed")
	if failed.AttemptsLeft != 1 || len(failed.Findings) == 0 {
		t.Fatalf("failure: %+v", failed)
	}
}

// TestWorkflowVerifyFailsOnMissingScripts: "no critical issue" over no
// scripts proves nothing, so Verify fails when a script step's script is
// not in the files: none sent, or sent under another project's folder.
func TestWorkflowVerifyFailsOnMissingScripts(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := scaffoldContent(t, reg, `{"name": "fraud", "framework": "xgboost"}`)
	for name, content := range map[string]map[string]any{
		"no files":      pick(c, "dag"),
		"other project": pick(scaffoldContent(t, reg, `{"name": "other", "framework": "xgboost"}`), "dag", "files"),
	} {
		r := startRun(t, reg, "cursus-init-project", map[string]string{"name": "fraud", "framework": "xgboost"})
		r.submit("Consult", nil)
		failed := r.submit("Verify", content)
		wantStatus(t, failed, "failed")
		if f := fmt.Sprint(failed.Findings); !strings.Contains(f, "no script projects/fraud_xgboost/scripts/xgboost_training.py") {
			t.Errorf("%s: findings %s do not name the missing script", name, f)
		}
	}
}

// TestWorkflowNewProjectRunsOnScaffoldContent: the new-project workflow's
// Scaffold stage takes what project.init returns to a read-only caller,
// and refuses a DAG without the files.
func TestWorkflowNewProjectRunsOnScaffoldContent(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := scaffoldContent(t, reg, `{"name": "fraud", "framework": "xgboost"}`)
	r := startRun(t, reg, "cursus-new-project", map[string]string{"name": "fraud", "framework": "xgboost"})
	wantStatus(t, r.submit("Scaffold", c), "passed")
	wantStatus(t, r.submit("GateDAG", pick(c, "dag")), "passed")
	r = startRun(t, reg, "cursus-new-project", map[string]string{"name": "fraud", "framework": "xgboost"})
	mustFail(t, r.raw("Scaffold", pick(c, "dag")), registry.CodeInvalidInput) // files are required
}

func TestWorkflowInitProjectRefusesBadArguments(t *testing.T) {
	reg, _ := newTestRegistry(t)
	mustFail(t, call(t, reg, "workflow.start", `{"workflow": "cursus-init-project", "args": {"name": "x"}}`), registry.CodeInvalidInput)
	r := startRun(t, reg, "cursus-init-project", map[string]string{"name": "../x", "framework": "xgboost"})
	blocked := r.submit("Consult", nil)
	wantStatus(t, blocked, "blocked")
	mustFail(t, r.raw("Verify", map[string]any{"dag": map[string]any{"nodes": []string{"XGBoostTraining"}}}), registry.CodeInvalidInput)
}

// shapScript is a script that keeps shapStep's contract.
const shapScript = `import os
def main(input_paths, output_paths, environ_vars, job_args):
    model, out = input_paths["model_input"], output_paths["explanations"]
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(model):
        open(os.path.join(out, name), "w").write(open(os.path.join(model, name)).read())
if __name__ == "__main__":
    main({"model_input": "/opt/ml/processing/input/model"}, {"explanations": "/opt/ml/processing/output"}, dict(os.environ), None)
`

func TestWorkflowAuthorStepValidatesTheNewStep(t *testing.T) {
	reg, _ := newTestRegistry(t)
	content := map[string]any{"step_types": []string{shapStep("ShapExplain", "explanations")},
		"files": map[string]string{"scripts/shap_explain.py": shapScript}}
	r := startRun(t, reg, "cursus-author-step", map[string]string{"intent": "explain predictions", "name": "ShapExplain"})
	wantStatus(t, r.submit("Validate", content), "passed")
	green := r.submit("Preflight", content)
	wantStatus(t, green, "green")
	if outcome := outcomeOf[struct {
		ValidatedStep string `json:"validated_step"`
		Gates         any    `json:"gates"`
	}](t, green); outcome.ValidatedStep != "ShapExplain" {
		t.Fatalf("outcome %+v", outcome)
	}

	bad := startRun(t, reg, "cursus-author-step", map[string]string{"intent": "explain predictions"})
	failed := bad.submit("Validate", map[string]any{"step_types": []string{"step_type: Broken\nspec: [1]\n"}})
	wantStatus(t, failed, "failed")
}

func TestWorkflowGatesCannotBeSkipped(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	if d := failure[runRefusal](t, r.raw("DagCheck", c), registry.CodeInvalidInput); d.Reason != "out_of_order" || d.ExpectedStage != "Constrain" {
		t.Fatalf("refusal details %+v", d)
	}
	wantStatus(t, r.submit("Constrain", pick(c, "dag")), "passed")
	mustFail(t, r.raw("Constrain", pick(c, "dag")), registry.CodeInvalidInput)
}

func TestWorkflowTamperedTokenIsRefused(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	parts := strings.Split(r.run, ".")
	if len(parts) != 3 {
		t.Fatalf("run token %q is not <key id>.<state>.<signature>", r.run)
	}
	raw, err := base64URL.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	// Claim the first two gates passed.
	forged := strings.Replace(string(raw), `"stage":0`, `"stage":2`, 1)
	if forged == string(raw) {
		t.Fatalf("token body has no stage field: %s", raw)
	}
	r.run = parts[0] + "." + base64URL.EncodeToString([]byte(forged)) + "." + parts[2]
	if d := failure[runRefusal](t, r.raw("DagCheck", c), registry.CodeInvalidInput); d.Reason != "tampered" {
		t.Fatalf("details %+v", d)
	}
}

// TestWorkflowKeyRotation: a rollout adds a key (the old one becomes a
// previous key), then retires the old key. A run started before the
// rollout goes on through both steps as long as it moved once in between;
// a token only the retired key signed is unknown_run_key with a remedy to
// start again, not invalid_input.
func TestWorkflowKeyRotation(t *testing.T) {
	oldKey, newKey := []byte("old-workflow-key-0123456789"), []byte("new-workflow-key-0123456789")
	_, before := newDepsRegistry(t, Options{WorkflowKey: oldKey})
	_, during := newDepsRegistry(t, Options{WorkflowKey: newKey, WorkflowPreviousKeys: [][]byte{oldKey}})
	_, after := newDepsRegistry(t, Options{WorkflowKey: newKey})
	c := exampleContent(t, examplePath+"/scripts")

	moving := startRun(t, before, "cursus-configure-pipeline", nil)
	stuck := startRun(t, before, "cursus-configure-pipeline", nil)
	moving.reg = during
	moving.submit("Constrain", pick(c, "dag"))
	moving.reg = after
	moving.submit("Validate", pick(c, "dag", "config"))
	wantStatus(t, moving.submit("DagCheck", c), "green")

	res := call(t, after, "workflow.status", `{"run": "`+stuck.run+`"}`)
	if d := failure[runRefusal](t, res, registry.CodeUnknownRunKey); d.Reason != "unknown_key" || res.Remedy == nil ||
		!slices.Contains(res.Remedy.SuggestedTools, "workflow.start") || !strings.Contains(res.Remedy.FixAction, "Start a new run") {
		t.Fatalf("retired key: details %+v remedy %+v", d, res.Remedy)
	}
	// A server that never held the key says the same.
	other, _ := newTestRegistry(t)
	mustFail(t, call(t, other, "workflow.status", `{"run": "`+startRun(t, after, "cursus-configure-pipeline", nil).run+`"}`), registry.CodeUnknownRunKey)
}

func TestWorkflowExpiredTokenIsRefused(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{WorkflowKey: []byte("0123456789abcdef0123"), WorkflowTTL: time.Second})
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	time.Sleep(1100 * time.Millisecond)
	if d := failure[runRefusal](t, call(t, reg, "workflow.status", `{"run": "`+r.run+`"}`), registry.CodeInvalidInput); d.Reason != "expired" {
		t.Fatalf("details %+v", d)
	}
}

func TestWorkflowChangedContentReopensItsGate(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	r.submit("Constrain", pick(c, "dag"))
	r.submit("Validate", pick(c, "dag", "config"))
	// The DAG sent to DagCheck is not the one Constrain passed on.
	changed := pick(c, "config", "files")
	dag := c["dag"].(map[string]any)
	edited := map[string]any{}
	for k, v := range dag {
		edited[k] = v
	}
	edited["metadata"] = map[string]any{"name": "edited"}
	changed["dag"] = edited
	reopened := r.submit("DagCheck", changed)
	wantStatus(t, reopened, "reopened")
	if reopened.Stage != "Constrain" || reopened.Next == nil || reopened.Next.Name != "Constrain" {
		t.Fatalf("reopened %+v", reopened)
	}
	mustFail(t, r.raw("DagCheck", c), registry.CodeInvalidInput)
	// The run goes on from the reopened gate with the new content.
	r.submit("Constrain", pick(changed, "dag"))
	r.submit("Validate", pick(changed, "dag", "config"))
	wantStatus(t, r.submit("DagCheck", changed), "green")
}

func TestWorkflowRunContinuesOnAnotherServerWithTheKey(t *testing.T) {
	key := []byte("shared-workflow-key-0123456789")
	_, one := newDepsRegistry(t, Options{WorkflowKey: key})
	_, two := newDepsRegistry(t, Options{WorkflowKey: key})
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, one, "cursus-configure-pipeline", nil)
	r.submit("Constrain", pick(c, "dag"))
	r.reg = two
	r.submit("Validate", pick(c, "dag", "config"))
	r.reg = one
	wantStatus(t, r.submit("DagCheck", c), "green")
}

func TestWorkflowSubmissionsAreDeterministic(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := projectContent(t)
	outcome := func() string {
		r := startRun(t, reg, "cursus-new-project", map[string]string{"name": "fraud", "framework": "xgboost"})
		r.submit("Scaffold", pick(c, "dag", "files"))
		r.submit("GateDAG", pick(c, "dag"))
		green := r.submit("Configure", c)
		green.Run = "" // carries the expiry
		b, _ := json.Marshal(green)
		return string(b)
	}
	if a, b := outcome(), outcome(); a != b {
		t.Fatalf("two runs on the same content differ:\n%s\n%s", a, b)
	}
}

func TestWorkflowBatchReportsExactlyTheFailingItems(t *testing.T) {
	reg, _ := newTestRegistry(t)
	good := map[string]any{"nodes": []string{"TabularPreprocessing_training", "XGBoostTraining"}, "edges": [][]string{{"TabularPreprocessing_training", "XGBoostTraining"}}}
	typo := map[string]any{"nodes": []string{"TabularPreprocessing_training", "XGBoostTrainng"}, "edges": [][]string{{"TabularPreprocessing_training", "XGBoostTrainng"}}}
	runs := answer[workflowOut](t, call(t, reg, "workflow.start", `{"workflow": "cursus-configure-pipeline", "items": [{}, {}, {}, {}, {}]}`)).Items
	if len(runs) != 5 {
		t.Fatalf("runs %+v", runs)
	}
	var items []map[string]any
	for i, run := range runs {
		dag := good
		if i == 1 || i == 3 {
			dag = typo
		}
		items = append(items, map[string]any{"run": run.Run, "content": map[string]any{"dag": dag}})
	}
	data := answer[workflowOut](t, call(t, reg, "workflow.submit", jsonArgs(t, map[string]any{"stage": "Constrain", "items": items})))
	if data.Summary == nil {
		t.Fatalf("a batch without a summary: %+v", data)
	}
	notGreen := data.Summary.NotGreen
	if len(notGreen) != 2 {
		t.Fatalf("not green %+v", notGreen)
	}
	for i, want := range []int{1, 3} {
		if item := notGreen[i]; item.Item != want || !strings.Contains(item.Reason, "XGBoostTrainng") {
			t.Fatalf("not green %+v", notGreen)
		}
	}
	for i, it := range data.Items {
		if (i == 1 || i == 3) != (it.Status == "blocked") {
			t.Fatalf("item %d: %v", i, it.Status)
		}
	}
}

var base64URL = base64.RawURLEncoding

// TestWorkflowGuidanceSaysHowToRunIt: the prompts, tools.help and
// project.bring_up tell a caller that may call the workflow tools to
// drive workflow.start and workflow.submit, and a caller that may not
// hears nothing of them.
func TestWorkflowGuidanceSaysHowToRunIt(t *testing.T) {
	deps, reg := newDepsRegistry(t, Options{})
	for _, p := range Prompts(deps) {
		served := p.Render(nil, func(string) bool { return true })
		if !strings.Contains(served, `workflow.start {"workflow": "`+p.Name+`"`) || !strings.Contains(served, "workflow.submit") {
			t.Errorf("%s prompt does not say how to run it:\n%s", p.Name, served)
		}
		closed := p.Render(nil, func(tool string) bool { return !strings.HasPrefix(tool, "workflow.") })
		if strings.Contains(closed, "workflow.start") {
			t.Errorf("%s prompt names workflow.start to a caller that may not call it", p.Name)
		}
	}
	for _, w := range answer[helpData](t, call(t, reg, "tools.help", `{}`)).Workflows {
		if !strings.Contains(w.Run, "workflow.submit") {
			t.Errorf("tools.help workflow %+v says not how to run it", w)
		}
	}
	plan := answer[bringUpPlan](t, call(t, reg, "project.bring_up", `{"name": "demo", "framework": "xgboost"}`))
	if !strings.Contains(plan.Note, `workflow.start {"workflow": "cursus-new-project"`) {
		t.Errorf("bring_up note: %v", plan.Note)
	}
}

// TestWorkflowGreenPassesOnTheCompileWarnings: a gate that passes passes
// its checks' warnings on; a script missing from the files, with built-in
// code standing in, is named in the green outcome, not swallowed.
func TestWorkflowGreenPassesOnTheCompileWarnings(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := exampleContent(t, examplePath+"/scripts")
	delete(c["files"].(map[string]any), examplePath+"/scripts/tabular_preprocessing.py")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	r.submit("Constrain", pick(c, "dag"))
	r.submit("Validate", pick(c, "dag", "config"))
	green := r.submit("DagCheck", c)
	wantStatus(t, green, "green")
	if w := fmt.Sprint(green.Warnings); !strings.Contains(w, examplePath+"/scripts/tabular_preprocessing.py is not in the call's files") {
		t.Fatalf("the green outcome does not name the missing script: warnings %s", w)
	}
	// With every script sent, nothing to warn of.
	full := exampleContent(t, examplePath+"/scripts")
	r = startRun(t, reg, "cursus-configure-pipeline", nil)
	r.submit("Constrain", pick(full, "dag"))
	r.submit("Validate", pick(full, "dag", "config"))
	green = r.submit("DagCheck", full)
	if w := fmt.Sprint(green.Warnings); strings.Contains(w, "is not in the call's files") {
		t.Fatalf("warnings with every script sent: %s", w)
	}
}

// TestWorkflowStandInPointsAtStepsCode: a stage whose compile runs a
// step type's built-in code in place of a script the files lack points at
// steps.code for that step type, as the compile tools do (the engine's
// warning names no tool); in a batch too. With every script sent, no stage
// points there.
func TestWorkflowStandInPointsAtStepsCode(t *testing.T) {
	reg, _ := newTestRegistry(t)
	showsCode := func(res *registry.Result) bool {
		for _, n := range res.NextSteps {
			if n.Tool == "steps.code" && n.ArgsHint["step_type"] == "TabularPreprocessing" &&
				strings.Contains(n.When, examplePath+"/scripts/tabular_preprocessing.py") {
				return true
			}
		}
		return false
	}
	submit := func(r *runner, stage string, content map[string]any) *registry.Result {
		t.Helper()
		res := r.raw(stage, content)
		r.run = answer[workflowOut](t, res).Run
		return res
	}
	c := exampleContent(t, examplePath+"/scripts")
	delete(c["files"].(map[string]any), examplePath+"/scripts/tabular_preprocessing.py")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	submit(r, "Constrain", pick(c, "dag"))
	if res := submit(r, "Validate", pick(c, "dag", "config")); !showsCode(res) {
		t.Errorf("Validate: no steps.code next step for the built-in TabularPreprocessing code: %+v", res.NextSteps)
	}
	if res := submit(r, "DagCheck", c); !showsCode(res) {
		t.Errorf("DagCheck: no steps.code next step for the built-in TabularPreprocessing code: %+v", res.NextSteps)
	}
	b := startRun(t, reg, "cursus-configure-pipeline", nil)
	submit(b, "Constrain", pick(c, "dag"))
	submit(b, "Validate", pick(c, "dag", "config"))
	batch := call(t, reg, "workflow.submit", jsonArgs(t, map[string]any{"stage": "DagCheck",
		"items": []any{map[string]any{"run": b.run, "content": c}}}))
	if items := answer[workflowOut](t, batch).Items; len(items) != 1 || items[0].Status != "green" {
		t.Fatalf("batch: %+v", items)
	}
	if !showsCode(batch) {
		t.Errorf("batch: no steps.code next step for the built-in TabularPreprocessing code: %+v", batch.NextSteps)
	}

	// Validate takes no files, so built-in code stands in for every
	// script there; DagCheck takes them all.
	full := exampleContent(t, examplePath+"/scripts")
	r = startRun(t, reg, "cursus-configure-pipeline", nil)
	submit(r, "Constrain", pick(full, "dag"))
	submit(r, "Validate", pick(full, "dag", "config"))
	for _, n := range submit(r, "DagCheck", full).NextSteps {
		if n.Tool == "steps.code" {
			t.Errorf("DagCheck: steps.code next step with every script sent: %+v", n)
		}
	}
}

// TestWorkflowReplayedTokenIsRefused: each token moves its run once. An
// earlier token, replayed to submit a stage that passed again or to win
// back the fix attempts a failure used, is refused as run_token_spent;
// the token the last submission returned goes on.
func TestWorkflowReplayedTokenIsRefused(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	first := r.run
	wantStatus(t, r.submit("Constrain", pick(c, "dag")), "passed")
	replay := &runner{t: t, reg: reg, run: first}
	if d := failure[runRefusal](t, replay.raw("Constrain", pick(c, "dag")), registry.CodeRunTokenSpent); d.Reason != "spent" {
		t.Errorf("details %+v", d)
	}

	// A failed gate spends its token too: replaying it does not give the
	// fix attempt back.
	beforeFail := r.run
	failed := r.submit("Validate", map[string]any{"dag": c["dag"], "config": map[string]any{"configuration": map[string]any{}}})
	wantStatus(t, failed, "failed")
	replay.run = beforeFail
	mustFail(t, replay.raw("Validate", pick(c, "dag", "config")), registry.CodeRunTokenSpent)
	// The current token goes on, and status does not spend it.
	answer[workflowOut](t, call(t, reg, "workflow.status", `{"run": "`+r.run+`"}`))
	wantStatus(t, r.submit("Validate", pick(c, "dag", "config")), "passed")

	// One token in two items of a batch: one item moves, the other is refused.
	r = startRun(t, reg, "cursus-configure-pipeline", nil)
	batch := answer[workflowOut](t, call(t, reg, "workflow.submit", jsonArgs(t, map[string]any{"stage": "Constrain",
		"items": []any{map[string]any{"run": r.run, "content": pick(c, "dag")}, map[string]any{"run": r.run, "content": pick(c, "dag")}}})))
	if batch.Summary == nil || batch.Summary.ByStatus["passed"] != 1 || batch.Summary.ByStatus["refused"] != 1 {
		t.Fatalf("one token twice in a batch: %+v", batch.Summary)
	}
}

// flakyStore is a SpentStore whose Was fails while wasDown is set, and
// whose Spend fails while spendDown is.
type flakyStore struct {
	workflows.SpentStore
	wasDown, spendDown atomic.Bool
}

func (f *flakyStore) Spend(ctx context.Context, id string, until time.Time) (bool, error) {
	if f.spendDown.Load() {
		return false, errors.New("dial tcp 10.0.0.7:6379: connection refused")
	}
	return f.SpentStore.Spend(ctx, id, until)
}

func (f *flakyStore) Was(ctx context.Context, id string) (bool, error) {
	if f.wasDown.Load() {
		return false, errors.New("dial tcp 10.0.0.7:6379: connection refused")
	}
	return f.SpentStore.Was(ctx, id)
}

// TestWorkflowSpentStoreDownFailsClosed: a submission whose spent-token
// store does not answer, before the gate or after it, is refused as
// run_store_unavailable, retryable, without the store's address; the
// token is not spent, so the same submission passes once the store is
// back, and is then spent.
func TestWorkflowSpentStoreDownFailsClosed(t *testing.T) {
	store := &flakyStore{SpentStore: workflows.NewSpent(0, nil)}
	_, reg := newDepsRegistry(t, Options{WorkspaceRoot: t.TempDir(), SpentStore: store})
	c := exampleContent(t, examplePath+"/scripts")
	r := startRun(t, reg, "cursus-configure-pipeline", nil)
	first := r.run

	for _, down := range []*atomic.Bool{&store.wasDown, &store.spendDown} {
		down.Store(true)
		res := r.raw("Constrain", pick(c, "dag"))
		down.Store(false)
		if d := failure[runRefusal](t, res, registry.CodeRunStoreUnavailable); !d.Retryable || d.Reason != "store_unavailable" {
			t.Errorf("details %+v", d)
		}
		if strings.Contains(string(res.Encode()), "10.0.0.7") {
			t.Errorf("the caller sees the store's address: %s", res.Encode())
		}
	}

	wantStatus(t, r.submit("Constrain", pick(c, "dag")), "passed")
	replay := &runner{t: t, reg: reg, run: first}
	mustFail(t, replay.raw("Constrain", pick(c, "dag")), registry.CodeRunTokenSpent)
}
