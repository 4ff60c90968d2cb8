package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// hintOf is the args hint of res's next step to tool.
func hintOf(t *testing.T, res *registry.Result, tool string) (registry.NextStep, map[string]any) {
	t.Helper()
	for _, n := range res.NextSteps {
		if n.Tool == tool {
			return n, n.ArgsHint
		}
	}
	t.Fatalf("no next step to %s: %+v", tool, res.NextSteps)
	return registry.NextStep{}, nil
}

func wantCarried(t *testing.T, from, to string, hint map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		if _, ok := hint[f]; !ok {
			t.Errorf("%s → %s: the args hint %v does not carry %s", from, to, hint, f)
		}
	}
}

// Hints carry forward the content the next tool needs: the server keeps
// nothing between calls, so inline DAG, config, files and step types must
// be sent again, and the hint says so. execdoc.generate gets one too.
func TestHintsCarryTheInlineContentForward(t *testing.T) {
	reg, _ := newTestRegistry(t)
	args := map[string]any{}
	if err := json.Unmarshal([]byte(`{`+inlineCompileArgs+`, "files": {"notes.txt": "x"}}`), &args); err != nil {
		t.Fatal(err)
	}
	v := callRemote(t, reg, "compile.validate", jsonArgs(t, args))
	mustOK(t, v)
	_, hint := hintOf(t, v, "compile.with_report")
	wantCarried(t, "compile.validate", "compile.with_report", hint, "dag", "config", "files")

	r := callRemote(t, reg, "compile.with_report", jsonArgs(t, args))
	mustOK(t, r)
	_, hint = hintOf(t, r, "execdoc.generate")
	wantCarried(t, "compile.with_report", "execdoc.generate", hint, "dag", "config", "files")

	// A step type sent inline: preflight's hint to compile says to send
	// step_types and files again.
	src := catOK(t, call(t, reg, "steps.source", `{"step_name": "TabularPreprocessing"}`))
	pre := call(t, reg, "author.preflight_step", stepTypesArgs(t, []string{src["yaml"].(string)},
		map[string]any{"step_name": "TabularPreprocessing", "files": map[string]any{"scripts/notes.txt": "x"}}))
	mustOK(t, pre)
	next, hint := hintOf(t, pre, "compile.with_report")
	wantCarried(t, "author.preflight_step", "compile.with_report", hint, "dag", "config", "step_types", "files")
	if !strings.Contains(next.Why, "send step_types and files again") {
		t.Errorf("the preflight hint does not say step_types and files must be sent again: %q", next.Why)
	}
}

// author.rules reads as an overview: without a topic it answers every
// topic's rules.
func TestAuthorRulesWithoutTopicAnswersEveryTopic(t *testing.T) {
	reg, _ := newTestRegistry(t)
	// Each topic's rules are an object: a topic that is not fails the decode.
	data := answer[struct {
		Topic string                    `json:"topic"`
		Rules map[string]map[string]any `json:"rules"`
	}](t, callRemote(t, reg, "author.rules", `{}`))
	for _, topic := range []string{"naming", "packaging", "closure"} {
		if _, ok := data.Rules[topic]; !ok {
			t.Errorf("author.rules {} has no %s rules: %+v", topic, data)
		}
	}
}

// A namespace's help does not suggest calling itself; tools.help still
// points at the namespace helps.
func TestNamespaceHelpDoesNotSuggestItself(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, ns := range []string{"project", "compile", "catalog"} {
		for _, n := range callRemote(t, reg, ns+".help", `{}`).NextSteps {
			if n.Tool == ns+".help" {
				t.Errorf("%s.help suggests %s", ns, n.Tool)
			}
		}
	}
	found := false
	for _, n := range callRemote(t, reg, "tools.help", `{}`).NextSteps {
		found = found || strings.HasSuffix(n.Tool, ".help")
	}
	if !found {
		t.Error("tools.help no longer points at the namespace helps")
	}
}

// pipeline_catalog.auto_select carries the DAG it selects forward to
// config.requirements (nodes, edges and its name, as load_dag answers
// them), and names, for each requested feature the DAG lacks, the step
// types that add it.
func TestAutoSelectHintsTheDAGAndWhatAddsALackingFeature(t *testing.T) {
	reg, _ := newTestRegistry(t)
	sel := callRemote(t, reg, "pipeline_catalog.auto_select", `{"framework": "lightgbm", "features": ["imputation", "calibration", "registration"]}`)
	mustOK(t, sel)
	_, hint := hintOf(t, sel, "config.requirements")
	loaded := answer[pcLoadedDAG](t, call(t, reg, "pipeline_catalog.load_dag", `{"dag_id": "lightgbm_complete_e2e"}`))
	type carriedDAG struct {
		Nodes    []string      `json:"nodes"`
		Edges    [][2]string   `json:"edges"`
		Metadata pcDAGMetadata `json:"metadata"`
	}
	dag := hintAs[carriedDAG](t, hint["dag"])
	if got, want := mustMarshal(t, dag), mustMarshal(t, carriedDAG{loaded.Nodes, loaded.Edges, loaded.Metadata}); got != want {
		t.Errorf("auto_select's config.requirements hint has dag %s, load_dag answers %s", got, want)
	}
	lacks := answer[pcAutoSelected](t, sel).Lacks
	if types := lacks["imputation"]; len(types) == 0 || types[0] != "MissingValueImputation" || len(lacks) != 1 {
		t.Errorf("lacks = %v, want imputation → MissingValueImputation first and nothing else", lacks)
	}
}

// config.merge_save's compile hint asks for files beside the step_types
// it was sent (the compile tools need the new steps' scripts), and the
// authoring checklist configures a new step with the source_dir its files
// hint puts scripts in.
func TestNewStepTypeHintsCarryFilesAndSourceDir(t *testing.T) {
	reg, _ := newTestRegistry(t)
	src := catOK(t, call(t, reg, "steps.source", `{"step_name": "TabularPreprocessing"}`))
	merged := call(t, reg, "config.merge_save", stepTypesArgs(t, []string{src["yaml"].(string)},
		map[string]any{"base": map[string]any{"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/R",
			"region": "NA", "service_name": "svc", "pipeline_version": "1.0.0"},
			"per_node": map[string]any{"TabularPreprocessing_training": map[string]any{"label_field": "label"}}}))
	if next := merged.NextSteps; len(next) > 0 {
		_, hint := hintOf(t, merged, "compile.with_report")
		wantCarried(t, "config.merge_save", "compile.with_report", hint, "config", "dag", "step_types", "files")
	} else {
		t.Fatalf("config.merge_save with step_types: %s", merged.Encode())
	}

	list := answer[authorChecklistOut](t, call(t, reg, "author.checklist", `{"sagemaker_step_type": "Processing"}`))
	var scriptsDir, sourceDir string
	for _, step := range list.Steps {
		hint := hintAs[struct {
			Files map[string]string `json:"files"`
			Base  struct {
				SourceDir string `json:"source_dir"`
			} `json:"base"`
		}](t, step.ArgsHint)
		for p := range hint.Files {
			scriptsDir = p[:strings.LastIndex(p, "/")]
		}
		if step.Tool == "config.merge_save" && hint.Base.SourceDir != "" {
			sourceDir = hint.Base.SourceDir
		}
	}
	if scriptsDir == "" || sourceDir != scriptsDir {
		t.Errorf("the checklist sends scripts under %q but configures source_dir %q", scriptsDir, sourceDir)
	}
}

// tools.help shows how to start each workflow with the arguments it
// requires, so starting one is one call.
func TestToolsHelpStartsWorkflowsWithTheirRequiredArguments(t *testing.T) {
	reg, _ := newTestRegistry(t)
	found := false
	for _, wf := range answer[helpData](t, call(t, reg, "tools.help", `{}`)).Workflows {
		if wf.Name != "cursus-new-project" {
			continue
		}
		found = true
		if !strings.Contains(wf.Run, `"args": {"name": "…", "framework": "…"}`) {
			t.Errorf("tools.help starts cursus-new-project with %q", wf.Run)
		}
	}
	if !found {
		t.Error("tools.help lists no cursus-new-project workflow")
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hintAs reads the parts of a next step's args_hint (JSON data) that T
// names; a part of the wrong type fails the test.
func hintAs[T any](t *testing.T, v any) T {
	t.Helper()
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("args_hint does not read as %T: %v\n%s", out, err, b)
	}
	return out
}
