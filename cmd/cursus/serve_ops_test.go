package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesUnauthenticatedRemoteGates: a non-loopback address,
// destructive tools on and no authentication stop startup, and the
// message names the flag and variable that override it.
func TestServeRefusesUnauthenticatedRemoteGates(t *testing.T) {
	_, errOut, code := runCLI(t, nil, "serve", "--addr", "0.0.0.0:8080", "--enable-destructive")
	if code != 1 || !strings.Contains(errOut, "--allow-unauthenticated-remote") || !strings.Contains(errOut, "CURSUS_LISTEN_ALLOW_UNAUTHENTICATED_REMOTE") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, map[string]string{"CURSUS_MCP_ALLOW_SCRIPT_EXEC": "1"}, "serve", "--addr", "0.0.0.0:8080")
	if code != 1 || !strings.Contains(errOut, "gates.allow_script_exec") {
		t.Fatalf("exec gate: exit %d: %s", code, errOut)
	}
}

func TestServeRefusesBadTokensFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("lonely-field\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": path}, "serve")
	if code != 1 || !strings.Contains(errOut, "line 1") || strings.Contains(errOut, "lonely-field") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestConfigPrintRedactsAndUnknownKeysStop(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	_ = os.WriteFile(good, []byte("telemetry:\n  otlp_headers: {x-api-key: very-secret-key}\nlimits:\n  tool_timeouts: {dag.compile: 2m}\n"), 0o600)
	out, errOut, code := runCLI(t, nil, "config", "print", "--config", good)
	if code != 0 || strings.Contains(out, "very-secret-key") || !strings.Contains(out, "x-api-key: <redacted>") || !strings.Contains(out, "dag.compile: 2m0s") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("limits:\n  rate_per_minit: 5\n"), 0o600)
	_, errOut, code = runCLI(t, nil, "config", "print", "--config", bad)
	if code != 1 || !strings.Contains(errOut, "limits.rate_per_minit") {
		t.Fatalf("unknown key: exit %d: %s", code, errOut)
	}
}

// TestUnknownGateNamesStopStartup: a misspelt deny entry would deny
// nothing, so it stops startup with the name; known names in any case or
// form start fine.
func TestUnknownGateNamesStopStartup(t *testing.T) {
	root := t.TempDir()
	_, errOut, code := runCLI(t, map[string]string{"CURSUS_GATES_DENY": "dag.serialise"}, "mcp", "list-tools", "--workspace-root", root)
	if code != 1 || !strings.Contains(errOut, "dag.serialise") {
		t.Fatalf("deny dag.serialise: exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, map[string]string{"CURSUS_GATES_ALLOW": "catalog,nosuch"}, "mcp", "list-tools", "--workspace-root", root)
	if code != 1 || !strings.Contains(errOut, "nosuch") || strings.Contains(errOut, "catalog") {
		t.Fatalf("allow nosuch: exit %d: %s", code, errOut)
	}
	_, errOut, code = runCLI(t, map[string]string{"CURSUS_GATES_DENY": "DAG.Serialize,dag__serialize,Config"}, "mcp", "list-tools", "--workspace-root", root)
	if code != 0 {
		t.Fatalf("known names: exit %d: %s", code, errOut)
	}
}

// TestUnknownEnvStopsStartup: CURSUS_MCP_BOGUS=1 used to be ignored.
func TestUnknownEnvStopsStartup(t *testing.T) {
	// serve on an address it refuses, so a missed check cannot leave it serving.
	serve := []string{"serve", "--addr", "0.0.0.0:8080", "--enable-destructive"}
	for _, args := range [][]string{serve, {"mcp", "list-tools"}, {"config", "print"}, {"call", "tools.help", "{}"}} {
		_, errOut, code := runCLI(t, map[string]string{"CURSUS_MCP_BOGUS": "1", "CURSUS_MCP_STATEFUL": "1"}, args...)
		if code != 1 || !strings.Contains(errOut, "CURSUS_MCP_BOGUS") || strings.Contains(errOut, "CURSUS_MCP_STATEFUL") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
	_, errOut, code := runCLI(t, map[string]string{"CURSUS_MCP_STATEFULL": "1"}, "config", "print")
	if code != 1 || !strings.Contains(errOut, "did you mean CURSUS_MCP_STATEFUL?") {
		t.Errorf("near miss: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, map[string]string{"CURSUS_TOKEN": "t", "CURSUS_MCP_STATEFUL": "1"}, "config", "print"); code != 0 {
		t.Errorf("known variables: exit %d: %s", code, errOut)
	}
}
