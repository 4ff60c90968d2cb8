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
