package handlers

import (
	"context"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func TestToolsHelpListsEveryTool(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[helpData](t, call(t, reg, "tools.help", `{"detail": "full"}`))
	total := data.TotalTools
	if total != len(reg.Tools("")) || data.Shown != total {
		t.Fatalf("total_tools=%v shown=%v, registry has %d", data.TotalTools, data.Shown, len(reg.Tools("")))
	}
	seen := 0
	for _, ns := range data.Namespaces {
		seen += len(ns.Tools)
	}
	if seen != total {
		t.Fatalf("namespaces list %d tools, want %d", seen, total)
	}
	if wf := data.Workflows; len(wf) != len(Prompts(nil)) || len(wf) != 4 {
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
	data := answer[helpData](t, res)
	if data.Namespaces != nil || data.Detail != "summary" {
		t.Fatalf("the summary has namespaces or says detail %v", data.Detail)
	}
	for _, tool := range reg.Tools("") {
		for _, p := range tool.Tags {
			purpose, listed := data.Phases[p].Tools[tool.Name]
			if listed == strings.HasSuffix(tool.Name, ".help") || (listed && purpose != tool.Purpose()) {
				t.Errorf("%s under %s: %v", tool.Name, p, purpose)
			}
		}
	}
}

func TestToolsHelpFilters(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[helpData](t, call(t, reg, "tools.help", `{"namespace":"tools","include_schema":true}`))
	nss := data.Namespaces
	if len(nss) != 1 || nss[0].Namespace != "tools" || len(nss[0].Tools) == 0 {
		t.Fatalf("namespace filter: %+v", nss)
	}
	if nss[0].Tools[0].Schema == nil {
		t.Fatal("include_schema did not attach schemas")
	}
	if data.FilteredNamespace == nil || *data.FilteredNamespace != "tools" {
		t.Fatalf("filtered_namespace = %v", data.FilteredNamespace)
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
	data := answer[helpData](t, callRemote(t, reg, "tools.help", `{}`))
	disabled := data.Disabled
	if len(disabled) != 1 || !strings.Contains(disabled[0].EnableWith, "CURSUS_MCP_ENABLE_DESTRUCTIVE") ||
		disabled[0].Count != 1 || disabled[0].Gate != "writes" {
		t.Fatalf("disabled = %+v", disabled)
	}
	// The closed tool is counted, never named.
	if body := string(callRemote(t, reg, "tools.help", `{}`).Encode()); strings.Contains(body, "zz_gated") {
		t.Fatalf("tools.help names a closed tool: %s", body)
	}
	if data.Shown != data.TotalTools-1 {
		t.Fatalf("shown %d of %d", data.Shown, data.TotalTools)
	}
}

func TestToolsByPhaseAndDescribe(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[byPhaseOut](t, call(t, reg, "tools.by_phase", `{"phase":"planner"}`))
	if data.Count < 3 || len(data.Tools) != data.Count {
		t.Fatalf("planner count = %v, %d tools", data.Count, len(data.Tools))
	}
	mustFail(t, call(t, reg, "tools.by_phase", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "tools.by_phase", `{"phase":"nonsense"}`), registry.CodeInvalidInput)

	for _, name := range []string{"tools.help", "tools__help"} {
		d := answer[toolDescription](t, call(t, reg, "tools.describe_tool", `{"name":"`+name+`"}`))
		if d.Name != "tools.help" || d.Schema == nil {
			t.Fatalf("describe %s = %+v", name, d)
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
		data := answer[helpData](t, call(t, reg, ns+".help", `{}`))
		if len(data.Namespaces) != 1 {
			t.Fatalf("%s.help shows %d namespaces", ns, len(data.Namespaces))
		}
		for _, g := range data.Namespaces {
			if g.Namespace != ns {
				t.Fatalf("%s.help shows namespace %v", ns, g.Namespace)
			}
		}
		mustFail(t, call(t, reg, ns+".help", `{"namespace":"tools"}`), registry.CodeInvalidInput)
	}
}
