package workflows

import (
	"strings"
	"testing"
)

func TestFourWorkflowsWellFormed(t *testing.T) {
	all := All()
	if len(all) != 4 {
		t.Fatalf("%d workflows", len(all))
	}
	names := map[string]bool{}
	for _, w := range all {
		if names[w.Name] {
			t.Errorf("duplicate %s", w.Name)
		}
		names[w.Name] = true
		if len(w.Stages) < 3 || w.Description == "" || w.Outcome == "" {
			t.Errorf("%s is incomplete", w.Name)
		}
		for _, s := range w.Stages {
			if s.Gate == "" || s.Name == "" || s.Purpose == "" {
				t.Errorf("%s/%s lacks a gate or purpose", w.Name, s.Name)
			}
			for _, tool := range s.Tools {
				if !strings.Contains(tool, ".") {
					t.Errorf("%s/%s: %q is not a dotted tool name", w.Name, s.Name, tool)
				}
			}
			if s.Workflow != "" {
				if _, ok := Get(s.Workflow); !ok {
					t.Errorf("%s/%s nests unknown workflow %s", w.Name, s.Name, s.Workflow)
				}
			}
		}
	}
	for _, n := range []string{InitProject, ConfigurePipeline, AuthorStep, NewProject} {
		if _, ok := Get(n); !ok {
			t.Errorf("missing %s", n)
		}
	}
	w, _ := Get(NewProject)
	if got := w.Tools(); got[0] != "project.init" {
		t.Errorf("tools = %v", got)
	}
}

// TestGateStagesAreDescribedStages: what the server checks and what the
// guides (prompts, project.bring_up) describe are the same stages: every
// gate stage is a stage of its workflow, in the same order.
func TestGateStagesAreDescribedStages(t *testing.T) {
	for _, w := range All() {
		gates, ok := Stages(w.Name)
		if !ok {
			t.Errorf("%s has no gate stages", w.Name)
			continue
		}
		at := 0
		for _, g := range gates {
			i := at
			for i < len(w.Stages) && w.Stages[i].Name != g.Name {
				i++
			}
			if i == len(w.Stages) {
				t.Errorf("%s: gate stage %s is not a described stage after %d (described: %v)", w.Name, g.Name, at, w.Stages)
				break
			}
			at = i + 1
		}
	}
	// The new project's Scaffold stage is checked by the server.
	gates, _ := Stages(NewProject)
	if gates[0].Name != "Scaffold" {
		t.Errorf("new-project gate stages start with %s", gates[0].Name)
	}
}
