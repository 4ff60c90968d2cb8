package handlers

import (
	"strings"
	"testing"
)

// TestStepTypeWarningsReachTheReply: the warnings of the step types a call
// sends are part of its reply, in a tool, in one workflow submission, and
// in a batch whose items load concurrently (each item's warning once; run
// with -race, the batch shows the items do not share unguarded state).
func TestStepTypeWarningsReachTheReply(t *testing.T) {
	reg, _ := newTestRegistry(t)
	doc := shapStep("ShapExplain", "explanations") + "bogus_key: 1\n"
	unknownKeys := func(warnings []string) int {
		n := 0
		for _, w := range warnings {
			if strings.Contains(w, "bogus_key") {
				n++
			}
		}
		return n
	}

	res := call(t, reg, "catalog.step_info", stepTypesArgs(t, []string{doc}, map[string]any{"step_name": "ShapExplain"}))
	if mustOK(t, res); unknownKeys(res.Warnings) != 1 {
		t.Fatalf("catalog.step_info warnings %q, want the step type's unknown key once", res.Warnings)
	}

	content := map[string]any{"step_types": []string{doc}, "files": map[string]string{"scripts/shap_explain.py": shapScript}}
	r := startRun(t, reg, "cursus-author-step", map[string]string{"intent": "explain predictions", "name": "ShapExplain"})
	if res := r.raw("Validate", content); !res.OK || unknownKeys(res.Warnings) != 1 {
		t.Fatalf("one submission: ok=%v warnings %q, want the unknown key once", res.OK, res.Warnings)
	}

	const n = 6
	started := answer[workflowOut](t, call(t, reg, "workflow.start", `{"workflow": "cursus-author-step", "args": {"intent": "explain predictions", "name": "ShapExplain"}, "items": [{}, {}, {}, {}, {}, {}]}`))
	var items []map[string]any
	for _, run := range started.Items {
		items = append(items, map[string]any{"run": run.Run, "content": content})
	}
	res = call(t, reg, "workflow.submit", jsonArgs(t, map[string]any{"stage": "Validate", "items": items}))
	if mustOK(t, res); unknownKeys(res.Warnings) != n {
		t.Fatalf("batch of %d: warnings %q, want the unknown key once per item", n, res.Warnings)
	}
}
