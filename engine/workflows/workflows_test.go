package workflows

import (
	"context"
	"maps"
	"slices"
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
		if len(w.Stages) < 3 || w.Description == "" || w.Outcome == "" || len(w.Checked()) == 0 {
			t.Errorf("%s is incomplete", w.Name)
		}
		stages := map[string]bool{}
		for _, s := range w.Stages {
			if s.Gate() == "" || s.Name == "" || s.Purpose == "" || stages[s.Name] {
				t.Errorf("%s/%s lacks a gate or purpose, or is named twice", w.Name, s.Name)
			}
			stages[s.Name] = true
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
	// The new project's stages are all checked by the server, Scaffold first.
	w, _ := Get(NewProject)
	if gates, _ := Stages(NewProject); len(gates) != len(w.Stages) || gates[0].Name != "Scaffold" {
		t.Errorf("new-project checked stages %v of %v", gates, w.Stages)
	}
}

// TestEveryStageDescribesItsGate: one model, so a stage's description
// cannot drift from the gate that runs it. A checked stage's gate is its
// check's own condition and its content is what that check reads (it
// has no text of its own beside them); a stage the server does not
// check states its condition; every check is run by some stage.
func TestEveryStageDescribesItsGate(t *testing.T) {
	used := map[Check]bool{}
	for _, w := range All() {
		for _, s := range w.Stages {
			if s.Check == "" {
				if s.Condition == "" || s.Takes() != nil || s.FixAttempts != 0 {
					t.Errorf("%s/%s: an unchecked stage needs a condition and takes nothing", w.Name, s.Name)
				}
				continue
			}
			c, ok := checks[s.Check]
			if !ok || c.run == nil {
				t.Errorf("%s/%s runs unknown check %q", w.Name, s.Name, s.Check)
				continue
			}
			used[s.Check] = true
			if s.Condition != "" {
				t.Errorf("%s/%s: a checked stage's gate is its check's (%q), not %q", w.Name, s.Name, c.condition, s.Condition)
			}
			if s.Gate() != c.condition || !slices.Equal(s.Takes(), c.takes) || !slices.Equal(s.Requires(), c.requires) {
				t.Errorf("%s/%s does not describe check %s", w.Name, s.Name, s.Check)
			}
			for _, f := range c.requires {
				if !slices.Contains(c.takes, f) {
					t.Errorf("check %s requires %s but does not take it", s.Check, f)
				}
			}
		}
	}
	for id := range checks {
		if !used[id] {
			t.Errorf("check %s is run by no stage", id)
		}
	}
}

// TestSubmitRunsTheDeclaredCheck: a run of each workflow runs, stage by
// stage, exactly the check each stage declares, on exactly the content
// that check takes.
func TestSubmitRunsTheDeclaredCheck(t *testing.T) {
	saved := maps.Clone(checks)
	t.Cleanup(func() { checks = saved })
	var ran []Check
	var sent []Content
	checks = map[Check]checkDef{}
	for id, c := range saved {
		c.run = func(_ context.Context, _ map[string]string, s *Subject) (Verdict, error) {
			ran = append(ran, id)
			if s != nil {
				sent = append(sent, s.Sent)
			} else {
				sent = append(sent, Content{})
			}
			return Verdict{Passed: true}, nil
		}
		checks[id] = c
	}
	all := Content{DAG: map[string]any{"nodes": []any{}}, Config: map[string]any{"x": 1}, Files: map[string]string{"a": "b"},
		StepTypes: []string{"s"}, StepName: "N"}
	load := func(context.Context, Content) (*Subject, error) { return &Subject{}, nil }
	for _, w := range All() {
		ran, sent = nil, nil
		args := map[string]string{}
		for _, a := range w.Arguments {
			args[a.Name] = "x"
		}
		st, err := Start(w.Name, args)
		if err != nil {
			t.Fatal(err)
		}
		var want []Check
		for _, s := range w.Checked() {
			want = append(want, s.Check)
			tr, err := Submit(t.Context(), st, s.Name, all, load)
			if err != nil {
				t.Fatalf("%s/%s: %v", w.Name, s.Name, err)
			}
			st = tr.State
			if got := sent[len(sent)-1]; !slices.Equal(fields(got), fields(all.only(s.Takes()))) {
				t.Errorf("%s/%s: check saw %v, takes %v", w.Name, s.Name, fields(got), s.Takes())
			}
		}
		if !slices.Equal(ran, want) || st.Stage != len(want) {
			t.Errorf("%s ran %v, stages declare %v", w.Name, ran, want)
		}
	}
}

// fields are the content fields c holds.
func fields(c Content) []string {
	var out []string
	for _, f := range []string{FieldDAG, FieldConfig, FieldFiles, FieldStepTypes, FieldStepName} {
		if _, ok := c.value(f); ok {
			out = append(out, f)
		}
	}
	return out
}
