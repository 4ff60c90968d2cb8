package server

import (
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
	_, _ = o.rpc(t, 1, "tools/call", map[string]any{"name": "opstest__echo", "arguments": map[string]any{"password": password, "payload": map[string]any{"text": long}}}, bearer(readToken))

	logs := o.logs.String()
	for _, secret := range []string{readToken, writeToken, "wrong-token-secret-value", password, "AKIA-SECRET-KEY", "xyz-inner", "TAIL-BEYOND-CAP", long[:200]} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains %.40q", secret)
		}
	}
	var calls, audits, requests int
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
			if args, _ := l["args"].(string); len(args) > 300+len("…") {
				t.Errorf("args summary is %d bytes, over the cap", len(args))
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
	if calls != 4 || requests != 5 {
		t.Errorf("%d tool-call lines and %d request lines, want 4 and 5", calls, requests)
	}
	if strings.Join(decisions, ",") != "alice:refused:forbidden,bob:allowed:ok" {
		t.Errorf("audit decisions %v", decisions)
	}
	if !strings.Contains(logs, `\"password\":\"[redacted]\"`) || !strings.Contains(logs, `abcdefgh…(1615 bytes)`) {
		t.Errorf("summary lacks the redaction or the length marker:\n%s", logs)
	}
}

func TestSummarizeArgs(t *testing.T) {
	got := summarizeArgs(map[string]any{"client_secret": "s", "n": 1.0, "list": []any{"a"}}, 200)
	if got != `{"client_secret":"[redacted]","list":["a"],"n":1}` {
		t.Errorf("summary %s", got)
	}
	if got := summarizeArgs(map[string]any{"k": strings.Repeat("é", 100)}, 20); len(got) > 20+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("capped summary %q", got)
	}
	if summarizeArgs(nil, 100) != "" || summarizeArgs(map[string]any{"a": 1.0}, 0) != "" {
		t.Error("nil args or a zero cap must log nothing")
	}
}
