package handlers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

// decodeInto re-reads a tool's data (as a client decodes it) into v.
func decodeInto(t *testing.T, data map[string]any, v any) {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestWorkflowStageToolsCoverTheModel: every stage of the engine's model
// has its tools here and nothing else does; every tool is registered,
// every args hint key is an argument of its tool, a gate is judged only
// on tools of its stage, and every checked stage names a tool that
// produces its content.
func TestWorkflowStageToolsCoverTheModel(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, w := range workflows.All() {
		mapped, ok := workflowStageTools[w.Name]
		if !ok {
			t.Errorf("workflow %s has no stage tools", w.Name)
			continue
		}
		var names []string
		for _, s := range w.Stages {
			names = append(names, s.Name)
			st, ok := mapped[s.Name]
			if !ok {
				t.Errorf("%s/%s has no stage tools", w.Name, s.Name)
			}
			if s.Check != "" && len(st.tools) == 0 {
				t.Errorf("%s/%s: the server checks it but no tool produces its content", w.Name, s.Name)
			}
			for _, d := range st.decides {
				if !slices.ContainsFunc(st.tools, func(x stageTool) bool { return x.Tool == d }) {
					t.Errorf("%s/%s is judged on %s, not one of its tools", w.Name, s.Name, d)
				}
			}
			for _, tool := range st.tools {
				def, ok := reg.Lookup(tool.Tool)
				if !ok {
					t.Errorf("%s/%s names unknown tool %s", w.Name, s.Name, tool.Tool)
					continue
				}
				props, _ := def.Schema()["properties"].(map[string]any)
				for k := range tool.ArgsHint {
					if _, ok := props[k]; !ok {
						t.Errorf("%s/%s: %s takes no argument %q", w.Name, s.Name, tool.Tool, k)
					}
				}
				if tool.Why == "" {
					t.Errorf("%s/%s: %s says not why", w.Name, s.Name, tool.Tool)
				}
			}
		}
		for stage := range mapped {
			if !slices.Contains(names, stage) {
				t.Errorf("%s has tools for stage %s, which it does not have (%v)", w.Name, stage, names)
			}
		}
	}
	if len(workflowStageTools) != len(workflows.All()) {
		t.Errorf("stage tools for %d workflows, the model has %d", len(workflowStageTools), len(workflows.All()))
	}
}

// TestBringUpAndWorkflowsDescribeTheSameStages: project.bring_up's plan,
// workflow.list, the new-project prompt and the stages a run submits are
// one description: the same stages, purposes, gates and tools.
func TestBringUpAndWorkflowsDescribeTheSameStages(t *testing.T) {
	deps, reg := newDepsRegistry(t, Options{})
	var plan struct {
		Stages []guideStage `json:"stages"`
	}
	decodeInto(t, mustOK(t, callRemote(t, reg, "project.bring_up", `{"name": "fraud", "framework": "xgboost"}`)), &plan)
	var list workflowListOut
	decodeInto(t, mustOK(t, callRemote(t, reg, "workflow.list", `{}`)), &list)
	i := slices.IndexFunc(list.Workflows, func(w workflowListed) bool { return w.Name == workflows.NewProject })
	if i < 0 {
		t.Fatalf("workflow.list has no %s", workflows.NewProject)
	}
	listed := list.Workflows[i].Stages
	if len(plan.Stages) == 0 || len(plan.Stages) != len(listed) {
		t.Fatalf("bring_up stages %+v, workflow.list stages %+v", plan.Stages, listed)
	}
	var prompt string
	for _, p := range Prompts(deps) {
		if p.Name == workflows.NewProject {
			prompt = p.Render(nil, func(string) bool { return true })
		}
	}
	for j, s := range plan.Stages {
		l := listed[j]
		var tools []string
		for _, tool := range l.Tools {
			tools = append(tools, tool.Tool)
		}
		if s.Name != l.Name || s.Purpose != l.Purpose || s.Gate != l.Gate || s.FixAttempts != l.FixAttempts || !slices.Equal(s.Tools, tools) {
			t.Errorf("stage %d: bring_up %+v, workflow.list %+v", j, s, l)
		}
		if !strings.Contains(prompt, "— "+s.Name+"\n"+s.Purpose+"\n") || !strings.Contains(prompt, "Gate: "+s.Gate+"\n") {
			t.Errorf("the prompt does not describe stage %s as bring_up does", s.Name)
		}
	}
	gates, _ := workflows.Stages(workflows.NewProject)
	for j, g := range gates {
		if listed[j].Name != g.Name || listed[j].Gate != g.Gate() || !slices.Equal(listed[j].Takes, g.Takes()) {
			t.Errorf("workflow.list stage %+v is not the run's stage %s", listed[j], g.Name)
		}
	}
}

// TestWorkflowNextStageListsItsTools: a run's next stage names the tools
// that produce its content, args hints filled from the run's arguments,
// and only tools the caller may call.
func TestWorkflowNextStageListsItsTools(t *testing.T) {
	reg, _ := newTestRegistry(t)
	var run workflowOut
	decodeInto(t, mustOK(t, callRemote(t, reg, "workflow.start", `{"workflow": "cursus-new-project", "args": {"name": "fraud", "framework": "xgboost"}}`)), &run)
	if run.Next == nil || run.Next.Name != "Scaffold" {
		t.Fatalf("next = %+v", run.Next)
	}
	i := slices.IndexFunc(run.Next.Tools, func(s stageTool) bool { return s.Tool == "project.init" })
	if i < 0 {
		t.Fatalf("Scaffold's tools do not name project.init: %+v", run.Next.Tools)
	}
	if h := run.Next.Tools[i].ArgsHint; h["name"] != "fraud" || h["framework"] != "xgboost" {
		t.Errorf("project.init hint %v does not carry the run's arguments", h)
	}
	remote := registry.Caller{Remote: true, Transport: "test"}
	for _, tool := range run.Next.Tools {
		if !reg.MayCall(remote, tool.Tool) {
			t.Errorf("next names %s, which the caller may not call", tool.Tool)
		}
	}
	// A failed gate's next is the same stage, with its tools.
	var failed workflowOut
	decodeInto(t, mustOK(t, callRemote(t, reg, "workflow.submit", jsonArgs(t, map[string]any{"run": run.Run, "stage": "Scaffold",
		"content": map[string]any{"dag": map[string]any{"nodes": []any{"NoSuchStep"}, "edges": []any{}}, "files": map[string]any{"x.py": ""}}}))), &failed)
	if failed.Status != workflows.StatusFailed || failed.Next == nil || len(failed.Next.Tools) == 0 {
		t.Errorf("failed submission: %+v", failed)
	}
}

// TestAuthorRulesClosureNamesItsGates: author.rules names the closure
// gates (tools the engine's rules do not name).
func TestAuthorRulesClosureNamesItsGates(t *testing.T) {
	reg, _ := newTestRegistry(t)
	var out struct {
		Rules map[string]any `json:"rules"`
	}
	decodeInto(t, mustOK(t, call(t, reg, "author.rules", `{"topic": "closure"}`)), &out)
	if got, _ := json.Marshal(out.Rules["gates"]); string(got) != `["validate.step_interface","author.check_script","author.preflight_step","compile.validate"]` {
		t.Errorf("closure gates = %s", got)
	}
}
