package registry

import (
	"context"
	"slices"
	"strings"
	"testing"
)

type noIn struct{}
type noOut struct{}

func policyTestTool(name string) ToolDef {
	return Define(ToolDef{Name: name, Description: "d", When: "w", Examples: []string{name + " {}"}, Tags: []string{PhasePlanner}},
		Plain(func(context.Context, noIn) (noOut, error) { return noOut{}, nil }))
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

// TestWritesWithIsAWriteOnlyWithItsArgument: a tool that writes only with
// "mode" is listed to every remote caller and called without it; with it,
// the call is refused exactly as a write tool's (the gate, then the
// scope), naming the argument, the setting and the tool's alternative.
// An empty value is no write; a trusted caller may always write.
func TestWritesWithIsAWriteOnlyWithItsArgument(t *testing.T) {
	saver := tool("t.save", okHandler)
	saver.WritesWith = []string{"mode"}
	saver.Alternative = &Alternative{Tool: "t.save", How: "leave out mode."}
	hints := map[Gate]string{GateWrite: "OPEN_WRITES=1", GateScope: "a token with that scope"}
	closed := newReg(t, Options{GateHints: hints}, saver)
	open := newReg(t, Options{GateHints: hints, Policy: Policy{EnableDestructive: true}}, saver)
	def, _ := closed.Lookup("t.save")
	read := Caller{Remote: true, Scopes: []string{ScopeRead}}
	writer := Caller{Remote: true, Scopes: []string{ScopeRead, ScopeWrite}}
	produce := map[string]any{"name": "x"}
	write := map[string]any{"name": "x", "mode": "fast"}

	for _, tc := range []struct {
		reg    *Registry
		caller Caller
		args   map[string]any
		code   string // "" = ok
	}{
		{closed, Caller{Remote: true}, produce, ""},
		{closed, Caller{Remote: true}, map[string]any{"name": "x", "mode": ""}, "invalid_input"}, // admitted; the schema refuses ""
		{closed, Caller{Remote: true}, write, CodeToolDisabled},
		{closed, Caller{}, write, ""},
		{open, read, produce, ""},
		{open, read, write, CodeForbidden},
		{open, writer, write, ""},
	} {
		res := tc.reg.Call(WithCaller(context.Background(), tc.caller), "t.save", tc.args)
		got := res.Code
		if res.OK {
			got = ""
		}
		if got != tc.code {
			t.Errorf("%+v %v: code %q, want %q (%s)", tc.caller, tc.args, got, tc.code, res.Error)
		}
	}
	if got := closed.Visible(Caller{Remote: true}, ""); len(got) != 1 || RequiredScope(def) != ScopeRead || Gated(def, nil) || !Gated(def, write) {
		t.Errorf("listed %d, scope %s, gated %v/%v", len(got), RequiredScope(def), Gated(def, nil), Gated(def, write))
	}
	if def.Annotations().ReadOnlyHint || !slices.Contains(def.Flags(), "writes_with:mode") {
		t.Errorf("annotations %+v, flags %v: a tool that can write is not read-only", def.Annotations(), def.Flags())
	}

	res := closed.Call(WithCaller(context.Background(), Caller{Remote: true}), "t.save", write)
	details := res.Meta["details"].(map[string]any)
	if details["setting"] != "OPEN_WRITES=1" || !slices.Equal(details["write_arguments"].([]string), []string{"mode"}) ||
		details["alternative"] != *saver.Alternative {
		t.Errorf("details = %v", details)
	}
	if !strings.Contains(res.Error, "only the operator") || !strings.Contains(res.Error, "with mode") ||
		res.Remedy == nil || !slices.Equal(res.Remedy.SuggestedTools, []string{"t.save"}) || !strings.Contains(res.Remedy.FixAction, "leave out mode") {
		t.Errorf("refusal = %s", res.Encode())
	}
	if a := open.AdmitCall(read, def, write); a.Scope != ScopeWrite {
		t.Errorf("scope refusal names scope %q, want write", a.Scope)
	}
}

// TestToolDisabledNamesOnlyAnOpenAlternative: a refused call names its
// alternative only when the caller may call that; a tool that declares
// none gets the operator's setting alone.
func TestToolDisabledNamesOnlyAnOpenAlternative(t *testing.T) {
	deploy := tool("t.deploy", okHandler)
	deploy.Destructive = true
	deploy.Alternative = &Alternative{Tool: "t.report", How: "it returns the definition."}
	plain := tool("t.plain", okHandler)
	plain.Writes = true
	tools := []ToolDef{tool("t.report", okHandler), deploy, plain}
	remote := WithCaller(context.Background(), Caller{Remote: true})
	args := map[string]any{"name": "x"}

	res := newReg(t, Options{}, tools...).Call(remote, "t.deploy", args)
	if res.Remedy == nil || !slices.Equal(res.Remedy.SuggestedTools, []string{"t.report"}) || res.Meta["details"].(map[string]any)["alternative"] == nil {
		t.Errorf("open alternative: %s", res.Encode())
	}
	res = newReg(t, Options{Policy: Policy{Deny: []string{"t.report"}}}, tools...).Call(remote, "t.deploy", args)
	if b := string(res.Encode()); strings.Contains(b, "t.report") {
		t.Errorf("denied alternative is named: %s", b)
	}
	res = newReg(t, Options{}, tools...).Call(remote, "t.plain", args)
	if res.Code != CodeToolDisabled || res.Remedy == nil || len(res.Remedy.SuggestedTools) != 0 || !strings.Contains(res.Remedy.FixAction, "operator") {
		t.Errorf("no alternative: %s", res.Encode())
	}
}

// TestWritesWithMustNameAnArgument: a WritesWith that names no argument,
// or comes with Writes, is a declaration error.
func TestWritesWithMustNameAnArgument(t *testing.T) {
	bad := tool("t.bad", okHandler)
	bad.WritesWith = []string{"output"}
	both := tool("t.both", okHandler)
	both.Writes, both.WritesWith = true, []string{"mode"}
	for _, def := range []ToolDef{bad, both} {
		if err := def.check(); err == nil {
			t.Errorf("%s: accepted", def.Name)
		}
	}
}
