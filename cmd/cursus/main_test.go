package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cursus-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "cursus")
	// The release build (scripts/build.sh), so the tests and the start-up
	// benchmarks run the binary that ships.
	build := exec.Command("../../scripts/build.sh", binary)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cursus:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runCLI(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb, environ)
	return out.String(), errb.String(), code
}

func TestListToolsJSON(t *testing.T) {
	out, errOut, code := runCLI(t, nil, "mcp", "list-tools", "--format", "json", "--workspace-root", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]bool{"tools.help": false, "tools.by_phase": false, "tools.describe_tool": false}
	for _, r := range rows {
		if _, ok := want[r["name"].(string)]; ok {
			want[r["name"].(string)] = true
			for _, k := range []string{"description", "tags", "flags", "wire_name"} {
				if _, ok := r[k]; !ok {
					t.Errorf("%s lacks %s", r["name"], k)
				}
			}
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("%s not listed", name)
		}
	}
}

func TestHelpJSONIsToolsHelpData(t *testing.T) {
	root := t.TempDir()
	out, errOut, code := runCLI(t, nil, "mcp", "help", "--format", "json", "--workspace-root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var help map[string]any
	if err := json.Unmarshal([]byte(out), &help); err != nil {
		t.Fatal(err)
	}
	callOut, _, code := runCLI(t, nil, "call", "--workspace-root", root, "tools.help", `{"detail": "full"}`)
	if code != 0 {
		t.Fatalf("call exit %d", code)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(callOut), &env); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(help) != fmt.Sprint(env.Data) {
		t.Fatal("mcp help --format json differs from tools.help data")
	}
	text, _, _ := runCLI(t, nil, "mcp", "help", "--workspace-root", root)
	if !strings.Contains(text, "tools.describe_tool") || !strings.Contains(text, "Phases:") {
		t.Fatalf("text help:\n%s", text)
	}
}

func TestCallExitCodesAndInputs(t *testing.T) {
	root := t.TempDir()
	argsFile := filepath.Join(root, "args.json")
	if err := os.WriteFile(argsFile, []byte(`{"phase":"validator"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := []string{"--workspace-root", root}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"call", "tools.by_phase", `{"phase":"planner"}`}, 0, `"ok": true`},
		{[]string{"call", "tools.by_phase", "@" + argsFile}, 0, `"phase": "validator"`},
		{[]string{"call", "tools.by_phase", `{"phase":"x"}`}, 1, `"code": "invalid_input"`},
		{[]string{"call", "no.such"}, 1, `"code": "unknown_tool"`},
		{[]string{"call", "tools.help", `not json`}, 1, `"code": "invalid_input"`},
		{[]string{"call"}, 2, ""},
	} {
		args := append(append([]string{tc.args[0]}, ws...), tc.args[1:]...)
		out, _, code := runCLI(t, nil, args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d (want %d), output:\n%s", tc.args, code, tc.code, out)
		}
	}
	if _, _, code := runCLI(t, nil, "bogus"); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
	// The envelope keeps its field order when printed.
	out, _, _ := runCLI(t, nil, "call", "--workspace-root", root, "tools.by_phase", `{"phase":"planner"}`)
	if !strings.HasPrefix(strings.TrimSpace(out), "{\n  \"ok\": true,\n  \"data\"") {
		t.Errorf("envelope order lost:\n%.80s", out)
	}
}

func TestInvalidBooleanStopsStartup(t *testing.T) {
	_, errOut, code := runCLI(t, map[string]string{"CURSUS_MCP_ENABLE_DESTRUCTIVE": "sure"}, "mcp", "list-tools")
	if code != 1 || !strings.Contains(errOut, "CURSUS_MCP_ENABLE_DESTRUCTIVE") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "cursus ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

// TestStdioServesOnlyJSONRPC drives `cursus mcp serve` as a subprocess,
// first raw (every stdout line must be a JSON-RPC message), then with the
// mcp-go stdio client.
func TestStdioServesOnlyJSONRPC(t *testing.T) {
	root := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cmd := exec.CommandContext(ctx, binary, "mcp", "serve", "--workspace-root", root, "--log-level", "debug")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tools__help","arguments":{}}}`,
	}
	for _, m := range msgs {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 0, 1<<20), 16<<20)
	responses := 0
	for responses < 3 && scanner.Scan() {
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      any             `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout carried a non-JSON-RPC line: %q", scanner.Text())
		}
		if msg.ID != nil {
			responses++
		}
	}
	if responses != 3 {
		t.Fatalf("got %d responses; stderr:\n%s", responses, stderr.String())
	}
	stdin.Close()
	_ = cmd.Wait()
	// The call was logged on stderr like an HTTP one.
	if log := stderr.String(); !strings.Contains(log, `"tool":"tools.help"`) || !strings.Contains(log, `"transport":"stdio"`) {
		t.Errorf("no tool-call log line for the stdio call; stderr:\n%s", log)
	}

	c, err := mcpclient.NewStdioMCPClient(binary, nil, "mcp", "serve", "--workspace-root", root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: "2025-11-25"}}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v (%d tools)", err, len(list.Tools))
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "tools__help", Arguments: map[string]any{}}})
	if err != nil || res.IsError {
		t.Fatalf("tools__help over stdio: %v %+v", err, res)
	}
}

// TestMaxFileBytesReachesTheWorkspace sets limits.max_file_bytes by its
// variable and sees a file over it refused by name.
func TestMaxFileBytesReachesTheWorkspace(t *testing.T) {
	root := t.TempDir()
	dag := `{"nodes": ["A", "B"], "edges": [["A", "B"]]}`
	if err := os.WriteFile(filepath.Join(root, "dag.json"), []byte(dag), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"call", "--workspace-root", root, "dag.deserialize", `{"path": "dag.json"}`}
	if out, _, code := runCLI(t, nil, args...); code != 0 {
		t.Fatalf("under the default cap: exit %d\n%s", code, out)
	}
	out, _, code := runCLI(t, map[string]string{"CURSUS_LIMITS_MAX_FILE_BYTES": "16"}, args...)
	if code != 1 || !strings.Contains(out, `"code": "invalid_input"`) || !strings.Contains(out, "16-byte limit (limits.max_file_bytes)") {
		t.Fatalf("over a 16-byte cap: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, map[string]string{"CURSUS_LIMITS_MAX_FILE_BYTES": "0"}, args...); code == 0 || !strings.Contains(errOut, "limits.max_file_bytes") {
		t.Fatalf("a zero cap starts: exit %d\n%s", code, errOut)
	}
}

// TestStepTypeCapsReachTheHandlers sets limits.max_step_types by its
// variable and sees a call over it refused naming the key.
func TestStepTypeCapsReachTheHandlers(t *testing.T) {
	doc := "step_type: ShapExplain\\nnode_type: singular\\ncontract: {}\\nregistry: {sagemaker_step_type: Processing}\\n"
	args := []string{"call", "--workspace-root", t.TempDir(), "catalog.list_steps", `{"step_types": ["` + doc + `", "` + strings.Replace(doc, "Shap", "Lime", 1) + `"]}`}
	out, _, code := runCLI(t, map[string]string{"CURSUS_LIMITS_MAX_STEP_TYPES": "1"}, args...)
	if code != 1 || !strings.Contains(out, `"code": "invalid_input"`) || !strings.Contains(out, "limits.max_step_types") {
		t.Fatalf("over a cap of one: exit %d\n%s", code, out)
	}
	if out, _, code := runCLI(t, map[string]string{"CURSUS_LIMITS_MAX_STEP_TYPE_BYTES": "16"}, args...); code != 1 || !strings.Contains(out, "limits.max_step_type_bytes") {
		t.Fatalf("over a 16-byte cap: exit %d\n%s", code, out)
	}
	if out, _, code := runCLI(t, nil, args...); code != 0 || !strings.Contains(out, "LimeExplain") {
		t.Fatalf("under the default caps: exit %d\n%s", code, out)
	}
}
