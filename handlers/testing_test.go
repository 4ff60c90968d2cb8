package handlers

import (
	"context"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// newTestRegistry builds the real registry over a fresh temporary
// workspace. It returns the registry and the workspace directory.
func newTestRegistry(t *testing.T) (*registry.Registry, string) {
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

// mustOK fails the test unless res is a success, and returns its data.
func mustOK(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s (%s) %v", res.Error, res.Code, res.Meta)
	}
	data, ok := res.Data.(map[string]any)
	if !ok {
		b := res.Encode()
		t.Fatalf("data is not an object: %s", b)
	}
	return data
}

// mustFail fails the test unless res failed with code.
func mustFail(t *testing.T, res *registry.Result, code string) {
	t.Helper()
	if res.OK || res.Code != code {
		t.Fatalf("want failure %s, got ok=%v code=%s error=%q", code, res.OK, res.Code, res.Error)
	}
}
