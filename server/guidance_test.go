package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cursus-dev/cursus/registry"
)

// closedTo matches the dotted and wire names of every tool caller may not
// call (as listed: without WritesWith arguments).
func closedTo(t *testing.T, reg *registry.Registry, caller registry.Caller) *regexp.Regexp {
	t.Helper()
	var alts []string
	for _, tool := range reg.Tools("") {
		if !reg.Admit(caller, tool).Allowed {
			alts = append(alts, regexp.QuoteMeta(tool.Name), regexp.QuoteMeta(tool.WireName()))
		}
	}
	if len(alts) == 0 {
		t.Fatal("no tool is closed to this caller")
	}
	return regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`)
}

// postAs is POST /call/<tool> with args (JSON) by client, answering the status and
// the decoded envelope.
func postAs(t *testing.T, client *http.Client, base, tool, args string) (int, map[string]any) {
	t.Helper()
	resp, err := client.Post(base+"/call/"+tool, "application/json", strings.NewReader(args))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("POST /call/%s: %v: %.300s", tool, err, b)
	}
	return resp.StatusCode, env
}

func exampleArgs(ex string) string {
	_, rest, _ := strings.Cut(ex, " ")
	args, _, _ := strings.Cut(rest, "  #")
	return strings.TrimSpace(args)
}

// workspaceEntries lists what the workspace root holds.
func workspaceEntries(t *testing.T, d Deps) []string {
	t.Helper()
	entries, err := os.ReadDir(d.Config.Workspace.Root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestReadOnlyServerGuidesOnlyToOpenTools walks every tool's example calls
// over REST as a remote caller of the default (read-only) deployment with
// an empty workspace: no next step, args hint, remedy, suggested tool or
// alternative of any answer, closed tools' refusals included, names a
// tool that caller cannot call; neither do tools.help, the <ns>.help
// tools and unknown_tool. Nothing is written.
func TestReadOnlyServerGuidesOnlyToOpenTools(t *testing.T) {
	ts, reg, d := surfaceEnv(t, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "0"})
	closed := closedTo(t, reg, registry.Caller{Remote: true})
	client := &http.Client{Timeout: 60 * time.Second}
	steps, refusals := 0, 0
	for _, tool := range reg.Tools("") {
		for _, ex := range tool.Examples {
			args := exampleArgs(ex)
			_, env := postAs(t, client, ts.URL, tool.Name, args)
			next, _ := env["next_steps"].([]any)
			steps += len(next)
			if env["code"] == registry.CodeToolDisabled {
				refusals++
			}
			details, _ := env["meta"].(map[string]any)["details"].(map[string]any)
			b, _ := json.Marshal(map[string]any{"next_steps": next, "remedy": env["remedy"], "alternative": details["alternative"]})
			if m := closed.Find(b); m != nil {
				t.Errorf("%s %s: guidance names %q to a read-only caller: %s", tool.Name, args, m, b)
			}
		}
	}
	// The walk reached both kinds of answer.
	if steps < 40 || refusals < 3 {
		t.Fatalf("%d next steps and %d tool_disabled answers seen", steps, refusals)
	}
	whole := func(surface, tool, args string) {
		t.Helper()
		_, env := postAs(t, client, ts.URL, tool, args)
		b, _ := json.Marshal(env)
		if m := closed.Find(b); m != nil {
			t.Errorf("%s names %q to a read-only caller", surface, m)
		}
	}
	whole("tools.help", "tools.help", `{"include_schema": true}`)
	whole("unknown_tool", "no.such_tool", `{}`)
	for ns := range reg.Namespaces() {
		if ns != "tools" {
			whole(ns+".help", ns+".help", `{"include_schema": true}`)
		}
	}
	if got := workspaceEntries(t, d); len(got) != 0 {
		t.Errorf("the read-only walk wrote %v into the workspace", got)
	}
}

// TestReadOnlyCallerGetsDocumentsWithoutWriting: on the default
// deployment config.merge_save and dag.serialize return their document
// without an output path, over REST and MCP; with one they answer
// tool_disabled naming the setting and the read-only way, and write
// nothing. tools.help lists them and counts compile.dag as closed with
// its alternative.
func TestReadOnlyCallerGetsDocumentsWithoutWriting(t *testing.T) {
	ts, _, d := surfaceEnv(t, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "0"})
	client := &http.Client{Timeout: 60 * time.Second}
	const values = `"dag": {"nodes": ["XGBoostModel"], "edges": []}, "base": {"author": "jdoe", "bucket": "my-bucket", ` +
		`"role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}`
	const dagArgs = `"nodes": ["A", "B"], "edges": [["A", "B"]]`

	status, env := postAs(t, client, ts.URL, "config.merge_save", `{`+values+`}`)
	data, _ := env["data"].(map[string]any)
	if status != 200 || data["written"] != nil || data["document"] == nil {
		t.Fatalf("config.merge_save without output_file = %d %v", status, env)
	}
	next, _ := env["next_steps"].([]any)
	if len(next) == 0 || next[0].(map[string]any)["tool"] != "compile.with_report" ||
		next[0].(map[string]any)["args_hint"].(map[string]any)["config"] == nil {
		t.Errorf("config.merge_save next steps = %v, want compile.with_report with an inline config first", next)
	}
	status, env = postAs(t, client, ts.URL, "dag.serialize", `{`+dagArgs+`}`)
	if data, _ := env["data"].(map[string]any); status != 200 || !strings.Contains(data["json"].(string), `"nodes"`) {
		t.Fatalf("dag.serialize without path = %d %v", status, env)
	}

	for _, tc := range []struct{ tool, args, alternative string }{
		{"config.merge_save", `{` + values + `, "output_file": "config.json"}`, "config.merge_save"},
		{"dag.serialize", `{` + dagArgs + `, "path": "dag.json"}`, "dag.serialize"},
		{"compile.dag", `{"config_file": "config.json", "dag_file": "dag.json", "upsert": true}`, "compile.with_report"},
	} {
		status, env := postAs(t, client, ts.URL, tc.tool, tc.args)
		details, _ := env["meta"].(map[string]any)["details"].(map[string]any)
		alt, _ := details["alternative"].(map[string]any)
		remedy, _ := env["remedy"].(map[string]any)
		if status != 403 || env["code"] != registry.CodeToolDisabled || alt["tool"] != tc.alternative ||
			!strings.Contains(details["setting"].(string), "CURSUS_MCP_ENABLE_DESTRUCTIVE") ||
			!strings.Contains(env["error"].(string), "only the operator") ||
			!strings.Contains(remedy["fix_action"].(string), tc.alternative) {
			t.Errorf("%s %s = %d %v", tc.tool, tc.args, status, env)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, list := sdkSession(t, ctx, ts.URL+"/mcp", nil)
	listed := map[string]bool{}
	for _, tool := range list.Tools {
		listed[tool.Name] = true
	}
	if !listed["config__merge_save"] || !listed["dag__serialize"] || listed["compile__dag"] {
		t.Errorf("MCP tools/list: merge_save %v, serialize %v, compile.dag %v", listed["config__merge_save"], listed["dag__serialize"], listed["compile__dag"])
	}
	for args, wantCode := range map[string]string{`{` + values + `}`: "", `{` + values + `, "output_file": "config.json"}`: registry.CodeToolDisabled} {
		var in map[string]any
		if err := json.Unmarshal([]byte(args), &in); err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "config__merge_save", Arguments: in})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var env map[string]any
		_ = json.Unmarshal(b, &env)
		if code, _ := env["code"].(string); code != wantCode || res.IsError != (wantCode != "") {
			t.Errorf("MCP config__merge_save %s: isError %v, %s", args, res.IsError, b)
		}
	}

	_, env = postAs(t, client, ts.URL, "tools.help", `{}`)
	var writeGate map[string]any
	for _, g := range env["data"].(map[string]any)["disabled"].([]any) {
		if g.(map[string]any)["gate"] == string(registry.GateWrite) {
			writeGate = g.(map[string]any)
		}
	}
	if alts, _ := writeGate["alternatives"].([]any); len(alts) == 0 || alts[0] != "compile.with_report" {
		t.Errorf("tools.help disabled writes entry = %v", writeGate)
	}
	if got := workspaceEntries(t, d); len(got) != 0 {
		t.Errorf("refused writes left %v in the workspace", got)
	}
}

// TestWriteArgumentNeedsTheWriteScope: where writing is on, a read-scope
// token may call config.merge_save without output_file; with it the call
// is forbidden with the RFC 6750 challenge naming the write scope.
func TestWriteArgumentNeedsTheWriteScope(t *testing.T) {
	ts, _, _ := surfaceEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1", "CURSUS_LIMITS_RATE_PER_MINUTE": "0",
	})
	client := &http.Client{Transport: bearerTransport{readToken}, Timeout: 60 * time.Second}
	const args = `"per_node": {"XGBoostModel": {"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole", ` +
		`"region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}}`
	if status, env := postAs(t, client, ts.URL, "config.merge_save", `{`+args+`}`); status != 200 {
		t.Fatalf("without output_file = %d %v", status, env)
	}
	resp, err := client.Post(ts.URL+"/call/config.merge_save", "application/json", strings.NewReader(`{`+args+`, "output_file": "c.json"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), `"code":"forbidden"`) ||
		!strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="write"`) {
		t.Errorf("with output_file = %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b)
	}
}

// TestWorkflowPromptsNameOnlyOpenTools: prompts/get renders each workflow
// for the caller. On the default deployment no prompt names a closed
// tool, and the new-project prompt's Scaffold stage names project.init
// (which returns the files there); where writing is on, too.
func TestWorkflowPromptsNameOnlyOpenTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prompt := func(cs *sdk.ClientSession, name string) string {
		t.Helper()
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: map[string]string{"name": "demo", "framework": "xgboost"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages[0].Content.(*sdk.TextContent).Text
	}

	ts, reg, _ := surfaceEnv(t, nil)
	closed := closedTo(t, reg, registry.Caller{Remote: true})
	cs, _ := sdkSession(t, ctx, ts.URL+"/mcp", nil)
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 4 {
		t.Fatalf("prompts/list = %v, %v", list, err)
	}
	for _, p := range list.Prompts {
		text := prompt(cs, p.Name)
		if m := closed.Find([]byte(text)); m != nil {
			t.Errorf("%s names %q on a read-only server:\n%s", p.Name, m, text)
		}
		if !strings.Contains(text, "Tools:") {
			t.Errorf("%s names no tool at all:\n%s", p.Name, text)
		}
	}
	// project.init returns the files to a read-only caller, so the
	// Scaffold stage holds on the default deployment too.
	if text := prompt(cs, "cursus-new-project"); !strings.Contains(text, "project.init") || strings.Contains(text, "only the operator") {
		t.Errorf("new-project prompt on a read-only server:\n%s", text)
	}

	open, _, _ := surfaceEnv(t, map[string]string{"CURSUS_MCP_ENABLE_DESTRUCTIVE": "1"})
	cs, _ = sdkSession(t, ctx, open.URL+"/mcp", nil)
	if text := prompt(cs, "cursus-new-project"); !strings.Contains(text, "project.init") || strings.Contains(text, "only the operator") {
		t.Errorf("new-project prompt where writing is on:\n%s", text)
	}
}
