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
	data := mustOK(t, callRemote(t, reg, "author.rules", `{}`))
	rules, _ := data["rules"].(map[string]any)
	for _, topic := range []string{"naming", "packaging", "closure"} {
		if _, ok := rules[topic].(map[string]any); !ok {
			t.Errorf("author.rules {} has no %s rules: %v", topic, data)
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
