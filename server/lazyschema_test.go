package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cursus-dev/cursus/registry"
)

// probeDerivations counts the derivations of schemas that hold a
// probeName (its JSONSchema is called once for each).
var probeDerivations atomic.Int32

type probeName string

func (probeName) JSONSchema() *jsonschema.Schema {
	probeDerivations.Add(1)
	return &jsonschema.Schema{Type: "string", Description: "probe name"}
}

type probeArgs struct {
	Name probeName `json:"name"`
}

func probeNamespace() (registry.Namespace, error) {
	return registry.Namespace{Name: "probe", Description: "A tool that counts its schema derivations.", Tools: []registry.ToolDef{
		registry.Define(registry.ToolDef{Name: "probe.echo", Description: "Echoes.", When: "In tests.", Examples: []string{`probe.echo {"name": "x"}`}},
			registry.Plain(func(_ context.Context, in probeArgs) (probeArgs, error) { return in, nil })),
	}}, nil
}

// TestServerStartsWithoutDerivingSchemas: building the server, /readyz and
// an MCP initialize derive no tool schema; the first tools/list does, once
// for concurrent sessions (under -race), and lists the schema the tool
// derives; GET /tools lists it too.
func TestServerStartsWithoutDerivingSchemas(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_MCP_TOOL_LIST": "full"}, probeNamespace)
	resp, err := http.Get(env.ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sessions := make([]*sdk.ClientSession, 4)
	for i := range sessions {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		sessions[i] = cs
	}
	if n := probeDerivations.Load(); n != 0 {
		t.Fatalf("%d derivations before any listing", n)
	}
	listed := make([]string, len(sessions))
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Error(err)
				return
			}
			for _, tool := range list.Tools {
				if tool.Name == "probe__echo" {
					b, _ := json.Marshal(tool.InputSchema)
					listed[i] = string(b)
				}
			}
		})
	}
	wg.Wait()
	if n := probeDerivations.Load(); n != 2 {
		t.Fatalf("%d derivations after the first listings, want 2 (input and output)", n)
	}
	def, _ := env.srv.deps.Registry.Lookup("probe.echo")
	want, _ := json.Marshal(def.Schema())
	for i, got := range listed {
		if got != string(want) || !strings.Contains(got, "probe name") {
			t.Errorf("session %d listed %s, want %s", i, got, want)
		}
	}
	resp, err = http.Get(env.ts.URL + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.Contains(string(body), "probe__echo") || !strings.Contains(string(body), `"name":{"type":"string"}`) {
		t.Errorf("GET /tools: %.300s", body)
	}
}
