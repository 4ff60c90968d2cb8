package registry

import (
	"context"
	"slices"
	"testing"
)

type noIn struct{}
type noOut struct{}

func policyTestTool(name string) ToolDef {
	return Define(ToolDef{Name: name, Description: "d", When: "w", Examples: []string{name + " {}"}, Tags: []string{PhasePlanner}},
		func(context.Context, noIn) (noOut, error) { return noOut{}, nil })
}

// TestUnknownPolicyNames: a name that matches no tool, wire name or
// namespace is reported; every form Admit accepts, in any case, is not.
func TestUnknownPolicyNames(t *testing.T) {
	policy := Policy{
		Allow: []string{"dag", "DAG.Serialize", "config__load", "cat"},
		Deny:  []string{"dag.serialise", "dag__serialize", "Config", "nosuch__tool", "dag.serialise"},
	}
	r, err := New(Options{Policy: policy}, func() (Namespace, error) {
		return Namespace{Name: "dag", Description: "d", Tools: []ToolDef{policyTestTool("dag.serialize")}}, nil
	}, func() (Namespace, error) {
		return Namespace{Name: "config", Description: "d", Tools: []ToolDef{policyTestTool("config.load")}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := r.UnknownPolicyNames()
	want := []string{"cat", "dag.serialise", "nosuch__tool"}
	if !slices.Equal(got, want) {
		t.Fatalf("UnknownPolicyNames = %q, want %q", got, want)
	}
}
