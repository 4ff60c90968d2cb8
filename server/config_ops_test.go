package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func loadYAML(t *testing.T, yaml string, env map[string]string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cursus.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func TestConfigFileEverySection(t *testing.T) {
	cfg, err := loadYAML(t, `
listen: {addr: "0.0.0.0:9000", allow_unauthenticated_remote: yes}
gates: {enable_destructive: true, deny: [validate.run_scripts]}
auth:
  tokens_file: /run/secrets/tokens
  oidc: {issuer: "https://id.example", audience: cursus, jwks_refresh: 5m}
limits:
  rate_per_minute: 30
  tool_timeouts: {dag.compile: 2m}
  max_arg_depth: 10
telemetry: {log_level: debug, otlp_headers: {x-api-key: k}}
`, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "45"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen.Addr != "0.0.0.0:9000" || !cfg.Listen.AllowUnauthenticatedRemote || !cfg.Gates.EnableDestructive ||
		cfg.Auth.OIDC.JWKSRefresh != 5*time.Minute || cfg.Limits.ToolTimeouts["dag.compile"] != 2*time.Minute ||
		cfg.Limits.MaxArgDepth != 10 || cfg.Telemetry.OTLPHeaders["x-api-key"] != "k" || cfg.Gates.Deny[0] != "validate.run_scripts" {
		t.Fatalf("file not applied: %+v", cfg)
	}
	if cfg.Limits.RatePerMinute != 45 {
		t.Errorf("environment did not override the file: %d", cfg.Limits.RatePerMinute)
	}
	if cfg.Limits.ExecConcurrency != 2 {
		t.Errorf("an unset key lost its default: %d", cfg.Limits.ExecConcurrency)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"limits:\n  rate_per_minut: 5\n", "limits.rate_per_minut (line 2): unknown key"},
		{"auth:\n  oidc:\n    issuer_url: x\n", "auth.oidc.issuer_url (line 3): unknown key"},
		{"listen:\n  addr: [1]\n", "listen.addr (line 2): expected a single value"},
		{"limits:\n  tool_timeout: soon\n", `limits.tool_timeout (line 2): "soon" is not a duration`},
		{"gates:\n  enable_destructive: maybe\n", `gates.enable_destructive (line 2): "maybe" is not a boolean`},
		{"limits:\n  tool_timeouts: {dag.compile: forever}\n", "limits.tool_timeouts.dag.compile (line 2)"},
		{"limits:\n  max_arg_depth: 0\n", "limits.max_arg_depth must be at least 1"},
		{"workspace:\n  script_max_processes: 0\n", "workspace.script_max_processes must be at least 1"},
		{"workspace:\n  script_memory_bytes: -1\n", "workspace.script_memory_bytes must be at least 1"},
		{"workspace:\n  script_cpu_weight: 10001\n", "workspace.script_cpu_weight must be at most 10000"},
		{"telemetry:\n  log_level: loud\n", "telemetry.log_level"},
		{"auth:\n  oidc: {issuer: 'https://id.example'}\n", "auth.oidc.audience: required"},
		{"auth:\n  oidc: {issuer: 'id.example', audience: a}\n", "auth.oidc.issuer"},
		{"- just\n- a list\n", "mapping of sections"},
	} {
		_, err := loadYAML(t, c.yaml, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.yaml, err, c.want)
		}
	}
	for env, want := range map[string]string{
		"CURSUS_LIMITS_TOOL_TIMEOUTS":                "environment variable CURSUS_LIMITS_TOOL_TIMEOUTS",
		"CURSUS_LISTEN_ALLOW_UNAUTHENTICATED_REMOTE": "CURSUS_LISTEN_ALLOW_UNAUTHENTICATED_REMOTE",
	} {
		_, err := LoadConfig("", func(k string) (string, bool) { return "x=y=z", k == env })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v", env, err)
		}
	}
	if _, err := loadYAML(t, "", nil); err != nil {
		t.Errorf("an empty file is an error: %v", err)
	}
}

func TestEnvMapSetting(t *testing.T) {
	cfg, err := LoadConfig("", func(k string) (string, bool) {
		return "dag.compile=30s, validate.run_scripts=10m", k == "CURSUS_LIMITS_TOOL_TIMEOUTS"
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.ToolTimeouts["dag.compile"] != 30*time.Second || cfg.Limits.ToolTimeouts["validate.run_scripts"] != 10*time.Minute {
		t.Fatalf("tool_timeouts %v", cfg.Limits.ToolTimeouts)
	}
}

func TestRedacted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Telemetry.OTLPHeaders = map[string]string{"authorization": "Bearer abc"}
	cfg.Telemetry.OTLPEndpoint = "https://user:pw@collector.example"
	r := cfg.Redacted()
	if r.Telemetry.OTLPHeaders["authorization"] != redactedValue || strings.Contains(r.Telemetry.OTLPEndpoint, "pw") {
		t.Fatalf("secrets survive: %+v", r.Telemetry)
	}
	if cfg.Telemetry.OTLPHeaders["authorization"] != "Bearer abc" {
		t.Error("Redacted changed the original")
	}
}

func TestCheckExposure(t *testing.T) {
	remote := DefaultConfig()
	remote.Listen.Addr = "0.0.0.0:8080"
	remote.Gates.EnableDestructive = true
	err := remote.CheckExposure()
	if err == nil || !strings.Contains(err.Error(), "--allow-unauthenticated-remote") || !strings.Contains(err.Error(), "CURSUS_LISTEN_ALLOW_UNAUTHENTICATED_REMOTE") {
		t.Fatalf("error %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"loopback":        func(c *Config) { c.Listen.Addr = "127.0.0.1:8080" },
		"localhost":       func(c *Config) { c.Listen.Addr = "localhost:8080" },
		"ipv6 loopback":   func(c *Config) { c.Listen.Addr = "[::1]:8080" },
		"read-only":       func(c *Config) { c.Gates.EnableDestructive = false },
		"tokens":          func(c *Config) { c.Auth.TokensFile = "/t" },
		"oidc":            func(c *Config) { c.Auth.OIDC.Issuer = "https://i" },
		"explicit opt-in": func(c *Config) { c.Listen.AllowUnauthenticatedRemote = true },
	} {
		c := remote
		mutate(&c)
		if err := c.CheckExposure(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	exec := DefaultConfig()
	exec.Listen.Addr = ":8080"
	exec.Gates.AllowScriptExec = true
	if err := exec.CheckExposure(); err == nil || !strings.Contains(err.Error(), "gates.allow_script_exec") {
		t.Errorf("all-interfaces exec: %v", err)
	}
}

// TestUnknownEnvStopsStartup: an unknown CURSUS_* variable is refused like
// an unknown config key, with the near miss named; config keys, aliases,
// the documented non-config variables and other prefixes pass.
func TestUnknownEnvStopsStartup(t *testing.T) {
	err := CheckEnv([]string{"CURSUS_MCP_BOGUS=1", "CURSUS_LIMITS_RATE_PER_MINIT=5", "PATH=/bin"})
	if err == nil || !strings.Contains(err.Error(), "CURSUS_MCP_BOGUS") ||
		!strings.Contains(err.Error(), "CURSUS_LIMITS_RATE_PER_MINIT (did you mean CURSUS_LIMITS_RATE_PER_MINUTE?)") {
		t.Fatalf("CheckEnv: %v", err)
	}
	if strings.Contains(err.Error(), "CURSUS_MCP_BOGUS (did you mean") {
		t.Errorf("a far-off name got a suggestion: %v", err)
	}
	ok := []string{"CURSUS_MCP_STATEFUL=1", "CURSUS_MCP_PROJECT_ROOT=/w", "CURSUS_TOKEN=t", "CURSUS_SKIP_INTEROP=1", "CURSUSX=1", "CURSUS=1", "HOME=/root"}
	ok = append(ok, EnvNames()...)
	for _, name := range EnvNotConfig {
		ok = append(ok, name+"=x")
	}
	if err := CheckEnv(ok); err != nil {
		t.Errorf("known names refused: %v", err)
	}
}
