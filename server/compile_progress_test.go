package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// copyExampleProject puts examples/xgboost-tabular at the same relative path
// under root, where its config.json's source_dir expects the scripts.
func copyExampleProject(t *testing.T, root string) {
	t.Helper()
	const rel = "examples/xgboost-tabular"
	if err := os.CopyFS(filepath.Join(root, rel), os.DirFS(filepath.Join("..", rel))); err != nil {
		t.Fatalf("copy the example project: %v", err)
	}
}

// TestCompileReportsProgressOverMCP is issue 6's "long compiles report
// progress", with the official go-sdk client against the real server: a
// compile of the example sends one notifications/progress per pipeline step,
// progress counting up to the step count, which is the total.
func TestCompileReportsProgressOverMCP(t *testing.T) {
	env := newTestEnv(t, nil)
	copyExampleProject(t, env.cfg.Workspace.Root)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	cl := sdk.NewClient(&sdk.Implementation{Name: "compile-progress", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	cs, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	params := &sdk.CallToolParams{Name: "compile__with_report", Arguments: map[string]any{
		"dag_file":    "examples/xgboost-tabular/dag.json",
		"config_file": "examples/xgboost-tabular/config.json",
	}}
	params.SetProgressToken("compile-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("compile failed: %+v", res)
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	var env0 struct {
		OK   bool `json:"ok"`
		Data struct {
			Definition struct {
				Steps []struct {
					Name string `json:"Name"`
				} `json:"Steps"`
			} `json:"definition"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(text.Text), &env0); err != nil || !env0.OK {
		t.Fatalf("envelope: %v %s", err, text.Text)
	}
	steps := env0.Data.Definition.Steps
	if len(steps) < 2 {
		t.Fatalf("definition has %d steps; the example has more", len(steps))
	}

	// Notifications may be delivered on the client's goroutine after
	// CallTool returns: wait until one per step arrived (or give up).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(steps) || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(steps) {
		t.Fatalf("%d progress notifications for %d pipeline steps: %+v", len(got), len(steps), got)
	}
	named := map[string]bool{}
	for i, p := range got {
		if p.ProgressToken != "compile-1" {
			t.Errorf("notification %d has token %v", i, p.ProgressToken)
		}
		if p.Progress != float64(i+1) {
			t.Errorf("notification %d: progress %v, want %d (increasing by one per step)", i, p.Progress, i+1)
		}
		if p.Total != float64(len(steps)) {
			t.Errorf("notification %d: total %v, want %d", i, p.Total, len(steps))
		}
		for _, s := range steps {
			if strings.HasSuffix(p.Message, " "+s.Name) {
				named[s.Name] = true
			}
		}
	}
	for _, s := range steps {
		if !named[s.Name] {
			t.Errorf("no progress message names step %s", s.Name)
		}
	}
}
