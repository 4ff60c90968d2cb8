package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestLogsCarryNoSecrets drives authenticated and refused calls with
// secret-looking and oversized arguments, then greps the captured log.
func TestLogsCarryNoSecrets(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1", "CURSUS_TELEMETRY_LOG_ARG_BYTES": "300",
	})
	const password = "hunter2-correct-horse"
	long := strings.Repeat("abcdefgh", 200) + "TAIL-BEYOND-CAP"
	body := `{"password":"` + password + `","payload":{"api_key":"AKIA-SECRET-KEY","text":"` + long + `","nested":{"Authorization":"Bearer xyz-inner"}}}`
	if resp, env := o.call(t, "opstest.echo", body, bearer(readToken)); resp.StatusCode != 200 {
		t.Fatalf("echo: %d %v", resp.StatusCode, env)
	}
	o.call(t, "opstest.echo", body, bearer("wrong-token-secret-value"))
	o.call(t, "testonly.write", `{}`, bearer(readToken))  // refused: audit line
	o.call(t, "testonly.write", `{}`, bearer(writeToken)) // allowed: audit line
	wide := map[string]any{}
	for i := range 16 {
		wide[fmt.Sprintf("field%02d", i)] = strings.Repeat("w", 40)
	}
	_, _ = o.rpc(t, 1, "tools/call", map[string]any{"name": "opstest__echo", "arguments": map[string]any{"password": password, "payload": map[string]any{"text": long}, "wide": wide}}, bearer(readToken))

	logs := o.logs.String()
	for _, secret := range []string{readToken, writeToken, "wrong-token-secret-value", password, "AKIA-SECRET-KEY", "xyz-inner", "TAIL-BEYOND-CAP", long[:200]} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains %.40q", secret)
		}
	}
	var calls, audits, requests, truncated int
	var decisions []string
	for _, l := range o.logs.lines(t) {
		switch l["message"] {
		case "tool call":
			calls++
			for _, k := range []string{"request_id", "principal", "tool", "code", "duration_ms", "transport"} {
				if _, ok := l[k]; !ok {
					t.Errorf("tool-call line lacks %s: %v", k, l)
				}
			}
			if args, ok := l["args_truncated"].(string); ok {
				truncated++
				if len(args) > 300+len("…") {
					t.Errorf("args summary is %d bytes, over the cap", len(args))
				}
			}
			if _, ok := l["args"].(map[string]any); !ok && l["args_truncated"] == nil {
				t.Errorf("tool-call line without its arguments: %v", l)
			}
		case "gated tool call":
			audits++
			decisions = append(decisions, l["principal"].(string)+":"+l["decision"].(string)+":"+l["code"].(string))
			if l["audit"] != true {
				t.Errorf("audit line without audit=true: %v", l)
			}
		case "http request":
			requests++
			if l["route"] == "" || l["status"] == nil || l["request_id"] == "" {
				t.Errorf("request line incomplete: %v", l)
			}
		}
	}
	if calls != 4 || requests != 5 || truncated != 1 {
		t.Errorf("%d tool-call lines (%d with cut arguments) and %d request lines, want 4 (1) and 5", calls, truncated, requests)
	}
	if strings.Join(decisions, ",") != "alice:refused:forbidden,bob:allowed:ok" {
		t.Errorf("audit decisions %v", decisions)
	}
	if !strings.Contains(logs, `"args":{"password":"[redacted]","payload":{"api_key":"[redacted]"`) || !strings.Contains(logs, `abcdefgh…(1615 bytes)`) {
		t.Errorf("summary lacks the redaction or the length marker:\n%s", logs)
	}
}

func TestSummarizeArgs(t *testing.T) {
	got, whole := summarizeArgs(map[string]any{"client_secret": "s", "n": 1.0, "list": []any{"a"}}, 200)
	if string(got) != `{"client_secret":"[redacted]","list":["a"],"n":1}` || !whole {
		t.Errorf("summary %s (whole %v)", got, whole)
	}
	wide := map[string]any{}
	for i := range 18 {
		wide[fmt.Sprintf("k%02d", i)] = float64(i)
	}
	items := make([]any, 18)
	for i := range items {
		items[i] = true
	}
	mixed := map[string]any{
		"quote": "say \"hi\"\n", "big": 123456789.0, "half": 0.5, "tiny": 1e-9, "none": nil,
		"deep":  map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": 1.0}}}},
		"items": items, "wide": wide, "X-Api-Key": "k", "long": strings.Repeat("x", 70),
	}
	got, _ = summarizeArgs(mixed, 4096)
	want := `{"X-Api-Key":"[redacted]","big":123456789,"deep":{"a":{"b":{"c":"{…}"}}},"half":0.5,` +
		`"items":[true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,"… 2 more items"],` +
		`"long":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…(70 bytes)","none":null,"quote":"say \"hi\"\n","tiny":1e-09,` +
		`"wide":{"k00":0,"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,"k09":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"…":"2 more keys"}}`
	if string(got) != want || !json.Valid(got) {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
	if got, whole := summarizeArgs(map[string]any{"k": strings.Repeat("é", 100)}, 20); len(got) > 20+len("…") || !strings.HasSuffix(string(got), "…") || whole {
		t.Errorf("capped summary %q (whole %v)", got, whole)
	}
	if got, _ := summarizeArgs(nil, 100); got != nil {
		t.Error("nil args must log nothing")
	}
	if got, _ := summarizeArgs(map[string]any{"a": 1.0}, 0); got != nil {
		t.Error("nil args or a zero cap must log nothing")
	}
}

// TestRequestIDs: every response names its request id, the log lines of
// the request carry it, and a caller's own short id is kept (so a proxy's
// id ties our lines to its own) while anything else is replaced.
func TestRequestIDs(t *testing.T) {
	o := newOpsEnv(t, nil)
	ids := map[string]string{}
	for _, sent := range []string{"", "proxy-7f3a:42", "has space", strings.Repeat("x", 129)} {
		h := map[string]string{}
		if sent != "" {
			h["X-Request-Id"] = sent
		}
		resp, _ := o.call(t, "opstest.echo", `{}`, h)
		got := resp.Header.Get("X-Request-Id")
		switch {
		case sent == "proxy-7f3a:42" && got != sent:
			t.Errorf("caller id %q answered as %q", sent, got)
		case sent != "proxy-7f3a:42" && (got == "" || got == sent || len(got) > 128):
			t.Errorf("sent %q, got %q; want a fresh id", sent, got)
		}
		ids[got] = sent
	}
	if len(ids) != 4 {
		t.Fatalf("ids not unique: %v", ids)
	}
	lines := map[string]int{}
	for _, l := range o.logs.lines(t) {
		if id, _ := l["request_id"].(string); id != "" && (l["message"] == "tool call" || l["message"] == "http request") {
			lines[id]++
		}
	}
	for id := range ids {
		if lines[id] != 2 {
			t.Errorf("request %q has %d of its 2 log lines", id, lines[id])
		}
	}
}

// TestMCPRequestLines: an MCP request logs one HTTP line naming its
// JSON-RPC method (and error, when it failed), and the call its tool-call
// line; mcp-go's own per-message lines stay off. (An unknown tool is a
// tool result, not a JSON-RPC error: a missing prompt stands in for one.) (A method mcp-go does not
// know reaches no hook, so its line names none.)
func TestMCPRequestLines(t *testing.T) {
	o := newOpsEnv(t, nil)
	o.rpc(t, 1, "tools/list", map[string]any{}, nil)
	o.rpc(t, 2, "tools/call", map[string]any{"name": "opstest__echo", "arguments": map[string]any{}}, nil)
	o.rpc(t, 3, "prompts/get", map[string]any{"name": "no_such_prompt"}, nil)
	o.rpc(t, 4, "no/such_method", map[string]any{}, nil)
	var methods, errs []string
	for _, l := range o.logs.lines(t) {
		switch l["message"] {
		case "http request":
			m, _ := l["mcp_method"].(string)
			e, _ := l["mcp_error"].(string)
			methods, errs = append(methods, m), append(errs, e)
		case "mcp.request", "mcp.tool":
			t.Errorf("mcp-go line logged: %v", l)
		}
	}
	if strings.Join(methods, " ") != "tools/list tools/call prompts/get " {
		t.Errorf("methods on the request lines: %q", methods)
	}
	if errs[0] != "" || errs[1] != "" || !strings.Contains(errs[2], "no_such_prompt") || errs[3] != "" {
		t.Errorf("errors on the request lines: %q", errs)
	}
}
