package main

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/cursus-dev/cursus/registry"
	"github.com/cursus-dev/cursus/server"
)

// TestAppWiresTheSharedSpentStore: with limits.shared_store redis the
// app keeps spent run tokens in that Redis: with the Redis unreachable a
// submission is refused as run_store_unavailable, where the same app
// without the shared store passes it.
func TestAppWiresTheSharedSpentStore(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing listens there once closed
	ln.Close()
	dag, err := os.ReadFile(filepath.Join("..", "..", "examples", "xgboost-tabular", "dag.json"))
	if err != nil {
		t.Fatal(err)
	}
	submit := func(shared bool) *registry.Result {
		t.Helper()
		cfg := server.DefaultConfig()
		cfg.Workspace.Root = t.TempDir()
		if shared {
			cfg.Limits.SharedStore = "redis"
			cfg.Redis.Address = closed
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		a, err := newApp(cfg, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if (a.spent != nil) != shared {
			t.Fatalf("shared store %v, spent store %v", shared, a.spent)
		}
		if a.spent != nil {
			t.Cleanup(func() { _ = a.spent.Close() })
		}
		ctx := t.Context()
		started := a.registry.Call(ctx, "workflow.start", map[string]any{"workflow": "cursus-configure-pipeline"})
		if !started.OK {
			t.Fatalf("workflow.start: %s", started.Encode())
		}
		var env struct {
			Data struct {
				Run string `json:"run"`
			} `json:"data"`
		}
		if err := json.Unmarshal(started.Encode(), &env); err != nil {
			t.Fatal(err)
		}
		var dagDoc map[string]any
		if err := json.Unmarshal(dag, &dagDoc); err != nil {
			t.Fatal(err)
		}
		return a.registry.Call(ctx, "workflow.submit", map[string]any{"run": env.Data.Run, "stage": "Constrain", "content": map[string]any{"dag": dagDoc}})
	}
	if res := submit(false); !res.OK {
		t.Fatalf("without the shared store: %s", res.Encode())
	}
	if res := submit(true); res.OK || res.Code != registry.CodeRunStoreUnavailable {
		t.Fatalf("with the shared store unreachable: %s, want %s", res.Encode(), registry.CodeRunStoreUnavailable)
	}
}
