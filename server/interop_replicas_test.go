package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTypeScriptClientThroughReplicas runs the official TypeScript SDK
// client (interop/ts-client.mjs) through nginx in front of three
// replicas: stateless streamable HTTP, and with the shared store stateful
// streamable HTTP and legacy SSE. Each run checks tools, resources and
// completions against REST, finishes a workflow run started through the
// proxy, and opens 200 more sessions (20 with -short). It needs
// interop/node_modules (scripts/interop.sh runs npm ci) and is skipped
// without it.
func TestTypeScriptClientThroughReplicas(t *testing.T) {
	interop, err := filepath.Abs(filepath.Join("..", "interop"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("interop/node_modules is not installed (scripts/interop.sh installs it)")
	}
	node := filepath.Join(interop, "node_modules", ".bin", "node") // the lock file's Node, as interop.sh uses
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("node is not installed")
		}
	}
	sessions := 200
	if testing.Short() {
		sessions = 20
	}
	run := func(t *testing.T, base, transport string) {
		run := proxiedCall(t, base, "workflow.start", map[string]any{"workflow": "cursus-configure-pipeline"})
		run = proxiedCall(t, base, "workflow.submit", map[string]any{"run": run["run"], "stage": "Constrain",
			"content": map[string]any{"dag": exampleDocument(t, "dag.json")}})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, filepath.Join(interop, "ts-client.mjs"), fmt.Sprint(run["run"]))
		cmd.Env = append(os.Environ(), "CURSUS_URL="+base, "CURSUS_TRANSPORT="+transport, fmt.Sprintf("CURSUS_SESSIONS=%d", sessions))
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ts-client.mjs (%s) through nginx to 3 replicas: %v\n%s", transport, err, out)
		}
		t.Logf("%s in %v", out, time.Since(start).Round(time.Millisecond))
	}
	t.Run("stateless", func(t *testing.T) {
		var upstreams []string
		for range 3 {
			u, _ := countedReplica(t, "ts-client-replicas-share-this-key", func(c *Config) { c.Limits.RatePerMinute = 0 })
			upstreams = append(upstreams, u)
		}
		run(t, nginxInFront(t, upstreams), "streamable")
	})
	t.Run("stateful", func(t *testing.T) { run(t, startSharedCluster(t).base, "streamable") })
	t.Run("sse", func(t *testing.T) { run(t, startSharedCluster(t).base, "sse") })
}
