package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func dataOf(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s (%s)", res.Error, res.Code)
	}
	// Round-trip so typed payloads read as plain JSON.
	var out map[string]any
	b, _ := json.Marshal(res.Data)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestToolsHelpListsEveryTool(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := dataOf(t, call(t, reg, "tools.help", `{"detail": "full"}`))
	total := int(data["total_tools"].(float64))
	if total != len(reg.Tools("")) || int(data["shown"].(float64)) != total {
		t.Fatalf("total_tools=%v shown=%v, registry has %d", data["total_tools"], data["shown"], len(reg.Tools("")))
	}
	seen := 0
	for _, ns := range data["namespaces"].([]any) {
		seen += len(ns.(map[string]any)["tools"].([]any))
	}
	if seen != total {
		t.Fatalf("namespaces list %d tools, want %d", seen, total)
	}
	if wf := data["workflows"].([]any); len(wf) != len(Prompts(nil)) || len(wf) != 4 {
		t.Fatalf("workflows = %v", wf)
	}
}

// TestToolsHelpSummaryFitsBudget: for a local caller, who sees every
// tool, tools.help {} stays within 8 KB and lists every tool but the help
// ones under each of its phases, with the lead clause of its description.
func TestToolsHelpSummaryFitsBudget(t *testing.T) {
	reg, _ := newTestRegistry(t)
	res := call(t, reg, "tools.help", `{}`)
	if n := len(res.Encode()); n > 8<<10 {
		t.Errorf("tools.help {} is %d bytes, over the 8 KB budget", n)
	}
	data := dataOf(t, res)
	if _, ok := data["namespaces"]; ok || data["detail"] != "summary" {
		t.Fatalf("the summary has namespaces or says detail %v", data["detail"])
	}
	phases := data["phases"].(map[string]any)
	for _, tool := range reg.Tools("") {
		for _, p := range tool.Tags {
			purpose, listed := phases[p].(map[string]any)["tools"].(map[string]any)[tool.Name]
			if listed == strings.HasSuffix(tool.Name, ".help") || (listed && purpose != tool.Purpose()) {
				t.Errorf("%s under %s: %v", tool.Name, p, purpose)
			}
		}
	}
}

func TestToolsHelpFilters(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := dataOf(t, call(t, reg, "tools.help", `{"namespace":"tools","include_schema":true}`))
	nss := data["namespaces"].([]any)
	if len(nss) != 1 || nss[0].(map[string]any)["namespace"] != "tools" {
		t.Fatalf("namespace filter: %v", nss)
	}
	first := nss[0].(map[string]any)["tools"].([]any)[0].(map[string]any)
	if _, ok := first["schema"]; !ok {
		t.Fatal("include_schema did not attach schemas")
	}
	if data["filtered_namespace"] != "tools" {
		t.Fatalf("filtered_namespace = %v", data["filtered_namespace"])
	}
	res := call(t, reg, "tools.help", `{"namespace":"nope"}`)
	mustFail(t, res, registry.CodeNotFound)
	if res.Remedy == nil || res.Remedy.SuggestedTools[0] != "tools.help" {
		t.Fatalf("remedy = %+v", res.Remedy)
	}
}

func TestToolsHelpListsDisabledToolsForRemoteCallers(t *testing.T) {
	gated := registry.Define(registry.ToolDef{
		Name: "tools.zz_gated", Description: "test-only gated tool", When: "never", Examples: []string{"tools.zz_gated {}"}, Writes: true,
	}, registry.Plain(func(context.Context, struct{}) (any, error) { return nil, nil }))
	withGated := func() (registry.Namespace, error) {
		ns := toolsNamespace(nil, func(context.Context) stepCatalogStatus { return stepCatalogStatus{} })
		ns.Tools = append(ns.Tools, gated)
		return ns, nil
	}
	hints := map[registry.Gate]string{registry.GateWrite: "CURSUS_MCP_ENABLE_DESTRUCTIVE=1"}
	reg, err := registry.New(registry.Options{GateHints: hints}, withGated)
	if err != nil {
		t.Fatal(err)
	}
	data := dataOf(t, callRemote(t, reg, "tools.help", `{}`))
	disabled := data["disabled"].([]any)
	if len(disabled) != 1 || !strings.Contains(disabled[0].(map[string]any)["enable_with"].(string), "CURSUS_MCP_ENABLE_DESTRUCTIVE") ||
		disabled[0].(map[string]any)["count"] != 1.0 || disabled[0].(map[string]any)["gate"] != "writes" {
		t.Fatalf("disabled = %v", disabled)
	}
	// The closed tool is counted, never named.
	if body := string(callRemote(t, reg, "tools.help", `{}`).Encode()); strings.Contains(body, "zz_gated") {
		t.Fatalf("tools.help names a closed tool: %s", body)
	}
	if int(data["shown"].(float64)) != int(data["total_tools"].(float64))-1 {
		t.Fatalf("shown %v of %v", data["shown"], data["total_tools"])
	}
}

func TestToolsByPhaseAndDescribe(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := dataOf(t, call(t, reg, "tools.by_phase", `{"phase":"planner"}`))
	if data["count"].(float64) < 3 {
		t.Fatalf("planner count = %v", data["count"])
	}
	mustFail(t, call(t, reg, "tools.by_phase", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "tools.by_phase", `{"phase":"nonsense"}`), registry.CodeInvalidInput)

	for _, name := range []string{"tools.help", "tools__help"} {
		d := dataOf(t, call(t, reg, "tools.describe_tool", `{"name":"`+name+`"}`))
		if d["name"] != "tools.help" || d["schema"] == nil {
			t.Fatalf("describe %s = %v", name, d)
		}
	}
	res := call(t, reg, "tools.describe_tool", `{"name":"no.such"}`)
	mustFail(t, res, registry.CodeNotFound)
	mustFail(t, call(t, reg, "tools.describe_tool", `{"name":"   "}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "tools.describe_tool", `{"name":42}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "tools.describe_tool", `{"name":"x","extra":1}`), registry.CodeInvalidInput)
}

func TestNamespaceHelpIsScoped(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, ns := range []string{"catalog", "dag", "compile"} {
		if _, ok := reg.Lookup(ns + ".help"); !ok {
			t.Fatalf("%s.help is not registered", ns)
		}
		data := dataOf(t, call(t, reg, ns+".help", `{}`))
		for _, g := range data["namespaces"].([]any) {
			if g.(map[string]any)["namespace"] != ns {
				t.Fatalf("%s.help shows namespace %v", ns, g)
			}
		}
		mustFail(t, call(t, reg, ns+".help", `{"namespace":"tools"}`), registry.CodeInvalidInput)
	}
}
