package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cursus-dev/cursus/registry"
)

func postCall(t *testing.T, base, tool, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(base+"/call/"+tool, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("response is not JSON: %s", b)
	}
	return resp.StatusCode, env
}

func listedTools(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tools); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

func mcpToolNames(t *testing.T, base string) []string {
	t.Helper()
	ctx := context.Background()
	list, err := mcpGoClient(t, ctx, base+"/mcp", "").ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return toolNames(list.Tools)
}

func TestRESTCall(t *testing.T) {
	env := newTestEnv(t, nil)
	base := env.ts.URL
	for _, name := range []string{"tools__help", "tools.help"} {
		status, e := postCall(t, base, name, "")
		if status != 200 || e["ok"] != true || e["meta"].(map[string]any)["tool"] != "tools.help" {
			t.Fatalf("%s: %d %v", name, status, e)
		}
	}
	status, e := postCall(t, base, "no__such", "{}")
	if status != 404 || e["code"] != "unknown_tool" {
		t.Fatalf("unknown: %d %v", status, e)
	}
	status, e = postCall(t, base, "tools__by_phase", `{"phase":"nonsense"}`)
	if status != 400 || e["code"] != "invalid_input" || !strings.Contains(e["error"].(string), "phase") {
		t.Fatalf("bad args: %d %v", status, e)
	}
	status, e = postCall(t, base, "", `{}`) // POST /call/ — no tool named
	if status != 404 || e["code"] != "not_found" {
		t.Fatalf("no tool: %d %v", status, e)
	}
	resp, err := http.Get(base + "/call/tools__help")
	if err != nil {
		t.Fatal(err)
	}
	var wrongMethod map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&wrongMethod)
	resp.Body.Close()
	if resp.StatusCode != 405 || wrongMethod["code"] != "invalid_input" {
		t.Fatalf("GET /call: %d %v", resp.StatusCode, wrongMethod)
	}
	status, e = postCall(t, base, "tools__help", `[1,2]`)
	if status != 400 || e["code"] != "invalid_input" {
		t.Fatalf("non-object body: %d %v", status, e)
	}
	status, e = postCall(t, base, "tools__help", `{"namespace":"`+strings.Repeat("x", 2<<20)+`"}`)
	if status != 413 {
		t.Fatalf("huge body: %d %v", status, e)
	}
}

func TestRESTPanicKeepsServing(t *testing.T) {
	env := newTestEnv(t, nil)
	status, e := postCall(t, env.ts.URL, "testonly__panic", "{}")
	if status != 500 || e["code"] != "internal_error" || strings.Contains(e["error"].(string), "test panic") {
		t.Fatalf("panic: %d %v", status, e)
	}
	if status, _ := postCall(t, env.ts.URL, "tools__help", "{}"); status != 200 {
		t.Fatalf("after panic: %d", status)
	}
}

func TestGatedToolHiddenAndRefusedUntilEnabled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		enabled bool
	}{
		{"default", nil, false},
		{"explicit zero", map[string]string{"CURSUS_MCP_ENABLE_DESTRUCTIVE": "0"}, false},
		{"false", map[string]string{"CURSUS_GATES_ENABLE_DESTRUCTIVE": "false"}, false},
		{"enabled", map[string]string{"CURSUS_MCP_ENABLE_DESTRUCTIVE": "1"}, true},
		{"canonical enabled", map[string]string{"CURSUS_GATES_ENABLE_DESTRUCTIVE": "yes"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t, tc.env)
			status, e := postCall(t, env.ts.URL, "testonly__write", "{}")
			inREST := slices.Contains(listedTools(t, env.ts.URL), "testonly__write")
			inMCP := slices.Contains(mcpToolNames(t, env.ts.URL), "testonly__write")
			if tc.enabled {
				if status != 200 || !inREST || !inMCP {
					t.Fatalf("enabled: status %d, in /tools %v, in tools/list %v", status, inREST, inMCP)
				}
				return
			}
			if status != 403 || e["code"] != "tool_disabled" || inREST || inMCP {
				t.Fatalf("disabled: status %d code %v, in /tools %v, in tools/list %v", status, e["code"], inREST, inMCP)
			}
			if !strings.Contains(e["error"].(string), "CURSUS_MCP_ENABLE_DESTRUCTIVE") {
				t.Fatalf("error does not name the setting: %v", e["error"])
			}
		})
	}
}

func TestMCPCallOfGatedToolGetsEnvelope(t *testing.T) {
	env := newTestEnv(t, nil)
	ctx := context.Background()
	c := mcpGoClient(t, ctx, env.ts.URL+"/mcp", "")
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "testonly__write"}})
	if err != nil {
		t.Fatal(err)
	}
	e := envelopeOf(t, res.Content[0].(mcp.TextContent).Text, res.StructuredContent)
	if !res.IsError || e["code"] != "tool_disabled" {
		t.Fatalf("gated over MCP: %v", e)
	}
}

func TestInvalidBooleanStopsStartup(t *testing.T) {
	_, err := LoadConfig("", func(k string) (string, bool) {
		if k == "CURSUS_MCP_ENABLE_DESTRUCTIVE" {
			return "enabled", true
		}
		return "", false
	})
	if err == nil || !strings.Contains(err.Error(), "CURSUS_MCP_ENABLE_DESTRUCTIVE") {
		t.Fatalf("err = %v", err)
	}
}

func TestHealthAndOpenAPI(t *testing.T) {
	env := newTestEnv(t, nil)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/openapi.yaml": 200, "/nope": 404} {
		resp, err := http.Get(env.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestEveryCodeHasItsStatus pins the REST status of every error code
// (SPEC §5); a new code must be added here with its status.
func TestEveryCodeHasItsStatus(t *testing.T) {
	want := map[string]int{
		registry.CodeInvalidInput: 400, registry.CodeUnauthenticated: 401,
		registry.CodeToolDisabled: 403, registry.CodeForbidden: 403,
		registry.CodeUnknownTool: 404, registry.CodeNotFound: 404,
		registry.CodeRateLimited: 429, registry.CodeInternal: 500, registry.CodeTimeout: 504,
		registry.CodeToolError: 422, registry.CodeValidationFailed: 422, registry.CodeNotConstructible: 422,
		registry.CodeConfigInvalid: 422, registry.CodeScriptAnalysisError: 422, registry.CodeScriptCheckFailed: 422,
		registry.CodeAlreadyExists: 422, registry.CodeUnsupported: 422, registry.CodeUpsertFailed: 422,
		registry.CodeRuntimeUnavailable: 422, registry.CodeStorageError: 507, registry.CodeUnknownRunKey: 422,
		registry.CodeRunTokenSpent: 409, registry.CodeRunStoreUnavailable: 503,
	}
	if len(want) != len(registry.Codes) {
		t.Fatalf("%d codes pinned, registry has %d: pin the new ones", len(want), len(registry.Codes))
	}
	for _, code := range registry.Codes {
		if got := statusFor(registry.Fail(code, "x")); got != want[code] {
			t.Errorf("%s → %d, want %d", code, got, want[code])
		}
	}
}
