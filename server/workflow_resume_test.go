package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// keyedServer serves the production namespaces with the given workflow key.
func keyedServer(t *testing.T, key string) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Workspace.Root = t.TempDir()
	deps, err := handlers.NewDeps(handlers.Options{WorkspaceRoot: cfg.Workspace.Root, WorkflowKey: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout}, handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: zerolog.New(io.Discard)})
	t.Cleanup(func() { _ = srv.stream.Shutdown(context.Background()) })
	return startHTTP(t, srv).URL
}

func restWorkflowCall(t *testing.T, base, tool string, args map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(args)
	resp, err := http.Post(base+"/call/"+tool, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		OK    bool           `json:"ok"`
		Error string         `json:"error"`
		Data  map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || !env.OK {
		t.Fatalf("%s: %v %s", tool, err, env.Error)
	}
	return env.Data
}

func exampleDocument(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "xgboost-tabular", name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWorkflowResumesAcrossTransportsAndReplicas starts a run over MCP
// with the go-sdk client on one server, passes its first gate there, and
// finishes it over REST on a second server that shares the key; a third
// server with another key refuses the token.
func TestWorkflowResumesAcrossTransportsAndReplicas(t *testing.T) {
	const key = "replicas-share-this-key-0123"
	one, two, stranger := keyedServer(t, key), keyedServer(t, key), keyedServer(t, "some-other-key-0123456789")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, _ := sdkSession(t, ctx, one+"/mcp", nil)
	mcpCall := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", tool, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var env struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
	dag := exampleDocument(t, "dag.json")
	config := exampleDocument(t, "config.json")
	started := mcpCall("workflow__start", map[string]any{"workflow": "cursus-configure-pipeline"})
	passed := mcpCall("workflow__submit", map[string]any{"run": started["run"], "stage": "Constrain", "content": map[string]any{"dag": dag}})
	if passed["status"] != "passed" {
		t.Fatalf("Constrain over MCP: %v", passed)
	}

	// The token is refused where the key differs.
	body, _ := json.Marshal(map[string]any{"run": passed["run"]})
	resp, err := http.Post(stranger+"/call/workflow.status", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	refused, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(refused), `"code":"unknown_run_key"`) {
		t.Fatalf("a server with another key answered %d %s, want 422 unknown_run_key", resp.StatusCode, refused)
	}

	status := restWorkflowCall(t, two, "workflow.status", map[string]any{"run": passed["run"]})
	if status["next"].(map[string]any)["name"] != "Validate" {
		t.Fatalf("status on the second server: %v", status)
	}
	validated := restWorkflowCall(t, two, "workflow.submit", map[string]any{"run": passed["run"], "stage": "Validate", "content": map[string]any{"dag": dag, "config": config}})
	green := restWorkflowCall(t, two, "workflow.submit", map[string]any{"run": validated["run"], "stage": "DagCheck", "content": map[string]any{"dag": dag, "config": config}})
	if green["status"] != "green" || green["outcome"] == nil {
		t.Fatalf("DagCheck over REST: %v", green)
	}
}
