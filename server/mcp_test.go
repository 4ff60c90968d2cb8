package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cursus-dev/cursus/registry"
)

var wireName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

var protocolRevisions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// envelopeOf parses the text content and checks structuredContent equals it.
func envelopeOf(t *testing.T, text string, structured any) map[string]any {
	t.Helper()
	var fromText, fromStructured map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		t.Fatalf("text content is not JSON: %v: %s", err, text)
	}
	b, _ := json.Marshal(structured)
	if err := json.Unmarshal(b, &fromStructured); err != nil {
		t.Fatalf("structuredContent is not an object: %s", b)
	}
	if fmt.Sprint(fromText) != fmt.Sprint(fromStructured) {
		t.Fatalf("structuredContent differs from text:\n%v\n%v", fromStructured, fromText)
	}
	return fromText
}

func TestMCPGoClientEveryRevision(t *testing.T) {
	env := newTestEnv(t, nil)
	for _, rev := range protocolRevisions {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tr, err := transport.NewStreamableHTTP(env.ts.URL + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			c := mcpclient.NewClient(tr, mcpclient.WithProtocolVersion(rev))
			defer c.Close()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
				ProtocolVersion: rev, ClientInfo: mcp.Implementation{Name: "test", Version: "1"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if init.ProtocolVersion != rev || init.ServerInfo.Name != "cursus" {
				t.Fatalf("negotiated %s with %s, want %s", init.ProtocolVersion, init.ServerInfo.Name, rev)
			}
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			checkToolList(t, toolNames(list.Tools), func(name string) (ro, destr, idem, open *bool) {
				for _, tool := range list.Tools {
					if tool.Name == name {
						a := tool.Annotations
						return a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint
					}
				}
				return nil, nil, nil, nil
			})

			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "tools__help", Arguments: map[string]any{}}})
			if err != nil {
				t.Fatal(err)
			}
			env := envelopeOf(t, res.Content[0].(mcp.TextContent).Text, res.StructuredContent)
			if res.IsError || env["ok"] != true {
				t.Fatalf("tools__help isError=%v env=%v", res.IsError, env)
			}
			res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "tools__by_phase", Arguments: map[string]any{"phase": 7}}})
			if err != nil {
				t.Fatal(err)
			}
			env = envelopeOf(t, res.Content[0].(mcp.TextContent).Text, res.StructuredContent)
			if !res.IsError || env["code"] != "invalid_input" {
				t.Fatalf("bad argument: isError=%v env=%v", res.IsError, env)
			}
		})
	}
}

func TestGoSDKClientEveryRevision(t *testing.T) {
	env := newTestEnv(t, nil)
	for _, rev := range protocolRevisions {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cl := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, nil)
			cs, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1},
				&sdk.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Fatalf("negotiated %s, want %s", got, rev)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			checkToolList(t, names, func(name string) (ro, destr, idem, open *bool) {
				for _, tool := range list.Tools {
					if tool.Name == name && tool.Annotations != nil {
						a := tool.Annotations
						// The go-sdk's idempotentHint is a plain bool: an omitted one reads false.
						return &a.ReadOnlyHint, a.DestructiveHint, nil, a.OpenWorldHint
					}
				}
				return nil, nil, nil, nil
			})
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools__help", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			envl := envelopeOf(t, res.Content[0].(*sdk.TextContent).Text, res.StructuredContent)
			if res.IsError || envl["ok"] != true {
				t.Fatalf("tools__help isError=%v", res.IsError)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools__describe_tool", Arguments: map[string]any{"name": "x", "bogus": true}})
			if err != nil {
				t.Fatal(err)
			}
			envl = envelopeOf(t, res.Content[0].(*sdk.TextContent).Text, res.StructuredContent)
			if !res.IsError || envl["code"] != "invalid_input" {
				t.Fatalf("bad argument: isError=%v env=%v", res.IsError, envl)
			}
		})
	}
}

func toolNames(tools []mcp.Tool) []string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

// checkToolList asserts wire names, the default gates and explicit hints.
func checkToolList(t *testing.T, names []string, hints func(string) (ro, destr, idem, open *bool)) {
	t.Helper()
	if !slices.Contains(names, "tools__help") || !slices.Contains(names, "testonly__panic") {
		t.Fatalf("tools/list misses expected tools: %v", names)
	}
	if slices.Contains(names, "testonly__write") {
		t.Fatal("gated tool listed on a default server")
	}
	for _, n := range names {
		if !wireName.MatchString(n) {
			t.Errorf("tool name %q is not a wire name", n)
		}
	}
	// The lean list sends readOnlyHint and openWorldHint (default true);
	// destructiveHint and idempotentHint only for a tool that is not
	// read-only, since MCP gives them meaning only then.
	ro, destr, idem, open := hints("tools__help")
	if ro == nil || open == nil || !*ro || destr != nil || *open || idem != nil {
		t.Fatalf("tools__help hints not explicit/right: ro=%v destr=%v idem=%v open=%v", ro, destr, idem, open)
	}
}

func TestMCPProgressNotifications(t *testing.T) {
	env := newTestEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []float64
	cl := sdk.NewClient(&sdk.Implementation{Name: "progress", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params.Progress)
			mu.Unlock()
		},
	})
	cs, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "testonly__progress", Arguments: map[string]any{}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	// The client may deliver notifications on its own goroutine after
	// CallTool returns; wait for them rather than racing.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Fatalf("progress notifications = %v, want [1 2 3]", got)
	}
}

func TestMCPForeignOriginRefused(t *testing.T) {
	env := newTestEnv(t, nil)
	req, _ := http.NewRequest(http.MethodPost, env.ts.URL+"/mcp", nil)
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status = %d, want 403", resp.StatusCode)
	}
}

// panickyObserver panics when a call starts: a bug outside any tool
// handler, which the registry does not contain.
type panickyObserver struct{}

func (panickyObserver) CallStarted(context.Context, string, registry.Caller) context.Context {
	panic("observer bug")
}
func (panickyObserver) CallFinished(context.Context, registry.CallRecord) {}

// TestMCPToolHandlerContainsPanics: a panic around a call answers an
// internal_error envelope, and the MCP server goes on serving.
func TestMCPToolHandlerContainsPanics(t *testing.T) {
	reg, err := registry.New(registry.Options{Observer: panickyObserver{}}, benchNamespace)
	if err != nil {
		t.Fatal(err)
	}
	s := NewMCPServer(Deps{Registry: reg, Config: DefaultConfig()})
	for i := range 2 {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bench__noop","arguments":{"name":"x"}}}`, i)
		resp, ok := s.HandleMessage(context.Background(), json.RawMessage(msg)).(mcp.JSONRPCResponse)
		if !ok {
			t.Fatalf("call %d: not a result", i)
		}
		res, ok := resp.Result.(*mcp.CallToolResult)
		if !ok || !res.IsError || len(res.Content) != 1 {
			t.Fatalf("call %d: %#v", i, resp.Result)
		}
		if env := envelopeOf(t, res.Content[0].(mcp.TextContent).Text, res.StructuredContent); env["code"] != "internal_error" {
			t.Fatalf("call %d: envelope %v", i, env)
		}
	}
}
