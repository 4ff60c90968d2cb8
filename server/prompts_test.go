package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cursus-dev/cursus/handlers"
)

// TestPromptsListTheWorkflows checks prompts/list and prompts/get with both
// real clients: the four workflows, each naming its stages, tools and gates.
func TestPromptsListTheWorkflows(t *testing.T) {
	env := newTestEnv(t, nil)
	var want []string
	for _, p := range handlers.Prompts(nil) {
		want = append(want, p.Name)
	}
	slices.Sort(want)
	if len(want) != 4 {
		t.Fatalf("handlers.Prompts = %v, want the four workflows", want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := mcpGoClient(t, ctx, env.ts.URL+"/mcp", "")
	list, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range list.Prompts {
		got = append(got, p.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("mcp-go prompts/list = %v, want %v", got, want)
	}
	prompt, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: want[0]}})
	if err != nil {
		t.Fatal(err)
	}
	text := prompt.Messages[0].Content.(mcp.TextContent).Text
	if !strings.Contains(text, "Stage 1") || !strings.Contains(text, "Gate:") || !strings.Contains(text, "Tools:") {
		t.Fatalf("prompt text lacks stages/tools/gates:\n%s", text)
	}

	cl := sdk.NewClient(&sdk.Implementation{Name: "prompts", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	plist, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, p := range plist.Prompts {
		got = append(got, p.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("go-sdk prompts/list = %v, want %v", got, want)
	}
}
