package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// newTestRegistry builds the real registry over a fresh temporary
// workspace. It returns the registry and the workspace directory.
func newTestRegistry(t testing.TB) (*registry.Registry, string) {
	t.Helper()
	dir := t.TempDir()
	deps, err := NewDeps(Options{WorkspaceRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range reg.Skipped() {
		t.Errorf("namespace skipped: %v", e)
	}
	return reg, deps.Root.Dir()
}

// call runs a tool as the trusted in-process caller with JSON arguments.
func call(t *testing.T, reg *registry.Registry, tool, argsJSON string) *registry.Result {
	t.Helper()
	return callAs(t, context.Background(), reg, tool, argsJSON)
}

// callRemote runs a tool as a remote caller, so gates apply.
func callRemote(t *testing.T, reg *registry.Registry, tool, argsJSON string) *registry.Result {
	t.Helper()
	return callAs(t, registry.WithCaller(context.Background(), registry.Caller{Remote: true, Transport: "test"}), reg, tool, argsJSON)
}

func callAs(t *testing.T, ctx context.Context, reg *registry.Registry, tool, argsJSON string) *registry.Result {
	t.Helper()
	args, bad := registry.DecodeArgs([]byte(argsJSON))
	if bad != nil {
		t.Fatalf("test arguments for %s are not a JSON object: %s", tool, argsJSON)
	}
	return reg.Call(ctx, tool, args)
}

// mustOK fails the test unless res is a success, and returns its data as
// a client reads it (decoded from the wire: numbers are float64).
func mustOK(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s (%s) %v", res.Error, res.Code, res.Meta)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(res.Encode(), &env); err != nil || env.Data == nil {
		t.Fatalf("data is not an object: %s", res.Encode())
	}
	return env.Data
}

// answer fails the test unless res is a success, and returns its data
// decoded from the wire into the tool's output type Out. A key Out does not
// have, or a value of another type, fails the test (it does not panic as a
// type assertion on a map would).
func answer[Out any](t *testing.T, res *registry.Result) Out {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s (%s) %v", res.Error, res.Code, res.Meta)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(res.Encode(), &env); err != nil {
		t.Fatalf("envelope: %v", err)
	}
	var out Out
	dec := json.NewDecoder(bytes.NewReader(env.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("data does not decode into %T: %v\n%.2000s", out, err, env.Data)
	}
	return out
}

// failure fails the test unless res failed with code, and returns the
// failure's meta.details decoded from the wire into Details, as strictly
// as answer decodes data.
func failure[Details any](t *testing.T, res *registry.Result, code string) Details {
	t.Helper()
	mustFail(t, res, code)
	var env struct {
		Meta struct {
			Details json.RawMessage `json:"details"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(res.Encode(), &env); err != nil {
		t.Fatalf("envelope: %v", err)
	}
	var out Details
	dec := json.NewDecoder(bytes.NewReader(env.Meta.Details))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("details do not decode into %T: %v\n%.2000s", out, err, env.Meta.Details)
	}
	return out
}

// mustFail fails the test unless res failed with code.
func mustFail(t *testing.T, res *registry.Result, code string) {
	t.Helper()
	if res.OK || res.Code != code {
		t.Fatalf("want failure %s, got ok=%v code=%s error=%q", code, res.OK, res.Code, res.Error)
	}
}
