package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/registry"
)

// Config is the deployment configuration. Every key can be set in the
// config file (YAML), overridden by a CURSUS_<SECTION>_<KEY> environment
// variable, and some by flags. Precedence: defaults < file < env < flags.
type Config struct {
	Listen    ListenConfig    `yaml:"listen"`
	MCP       MCPConfig       `yaml:"mcp"`
	Gates     GatesConfig     `yaml:"gates"`
	Workspace WorkspaceConfig `yaml:"workspace"`
	Auth      AuthConfig      `yaml:"auth"`
	Limits    LimitsConfig    `yaml:"limits"`
	Telemetry TelemetryConfig `yaml:"telemetry"`
	AWS       AWSConfig       `yaml:"aws"`
}

// ListenConfig is where the HTTP server listens.
type ListenConfig struct {
	Addr string `yaml:"addr"`
	// AllowUnauthenticatedRemote lets the server listen on a non-loopback
	// address with gated tools enabled and no authentication.
	AllowUnauthenticatedRemote bool          `yaml:"allow_unauthenticated_remote"`
	ShutdownTimeout            time.Duration `yaml:"shutdown_timeout"`
}

// MCPConfig configures the MCP transports.
type MCPConfig struct {
	Stateful        bool          `yaml:"stateful"`
	SessionIdleTTL  time.Duration `yaml:"session_idle_ttl"`
	LegacySSE       bool          `yaml:"legacy_sse"`
	AllowedOrigins  []string      `yaml:"allowed_origins"`
	BaseURL         string        `yaml:"base_url"`
	HeartbeatPeriod time.Duration `yaml:"heartbeat_period"`
}

// GatesConfig decides what remote callers may run.
type GatesConfig struct {
	EnableDestructive bool     `yaml:"enable_destructive"`
	AllowScriptExec   bool     `yaml:"allow_script_exec"`
	Allow             []string `yaml:"allow"`
	Deny              []string `yaml:"deny"`
}

// WorkspaceConfig is where file arguments resolve and extra catalogs live.
type WorkspaceConfig struct {
	Root         string   `yaml:"root"`
	StepDirs     []string `yaml:"step_dirs"`
	PipelineDirs []string `yaml:"pipeline_dirs"`
	Python       string   `yaml:"python"`
}

// AuthConfig configures bearer-token and OIDC authentication.
type AuthConfig struct {
	TokensFile string     `yaml:"tokens_file"`
	OIDC       OIDCConfig `yaml:"oidc"`
	// ResourceURL is this server's canonical URL, published in the RFC 9728
	// protected-resource document.
	ResourceURL string `yaml:"resource_url"`
}

// OIDCConfig validates JWTs from an OpenID Connect issuer.
type OIDCConfig struct {
	Issuer   string `yaml:"issuer"`
	Audience string `yaml:"audience"`
	JWKSURL  string `yaml:"jwks_url"`
}

// LimitsConfig bounds what one client can consume.
type LimitsConfig struct {
	MaxBodyBytes     int64         `yaml:"max_body_bytes"`
	MaxArgDepth      int           `yaml:"max_arg_depth"`
	ToolTimeout      time.Duration `yaml:"tool_timeout"`
	RatePerMinute    int           `yaml:"rate_per_minute"`
	ExecConcurrency  int           `yaml:"exec_concurrency"`
	ReadHeaderTimout time.Duration `yaml:"read_header_timeout"`
}

// TelemetryConfig configures logs (traces use the standard OTEL_* variables).
type TelemetryConfig struct {
	LogLevel string `yaml:"log_level"`
}

// AWSConfig configures the SageMaker and S3 clients.
type AWSConfig struct {
	Region   string `yaml:"region"`
	Endpoint string `yaml:"endpoint"`
}

// DefaultConfig is the embedded default: loopback only, read-only tools.
func DefaultConfig() Config {
	return Config{
		Listen: ListenConfig{Addr: "127.0.0.1:8080", ShutdownTimeout: 20 * time.Second},
		MCP: MCPConfig{
			SessionIdleTTL: 10 * time.Minute, LegacySSE: true, HeartbeatPeriod: 25 * time.Second,
			AllowedOrigins: []string{"http://localhost", "http://127.0.0.1", "https://localhost", "https://127.0.0.1"},
		},
		Workspace: WorkspaceConfig{Root: ".", Python: "python3"},
		Limits: LimitsConfig{
			MaxBodyBytes: 1 << 20, MaxArgDepth: 32, ToolTimeout: 120 * time.Second,
			ExecConcurrency: 2, ReadHeaderTimout: 10 * time.Second,
		},
		Telemetry: TelemetryConfig{LogLevel: "info"},
	}
}

// Policy is the registry gate policy these settings describe.
func (c Config) Policy() registry.Policy {
	return registry.Policy{
		EnableDestructive: c.Gates.EnableDestructive, AllowScriptExec: c.Gates.AllowScriptExec,
		Allow: c.Gates.Allow, Deny: c.Gates.Deny,
	}
}

// LoadConfig builds the effective configuration from the defaults, the
// optional file at path, and the environment (lookup is os.LookupEnv in
// production; tests pass their own).
func LoadConfig(path string, lookup func(string) (string, bool)) (Config, error) {
	cfg := DefaultConfig()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("config file: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		// An empty file is no settings, not an error.
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return cfg, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, lookup); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// envAliases are the historic variable names the reference project used.
var envAliases = map[string]string{
	"CURSUS_MCP_ENABLE_DESTRUCTIVE": "CURSUS_GATES_ENABLE_DESTRUCTIVE",
	"CURSUS_MCP_ALLOW_SCRIPT_EXEC":  "CURSUS_GATES_ALLOW_SCRIPT_EXEC",
	"CURSUS_MCP_PROJECT_ROOT":       "CURSUS_WORKSPACE_ROOT",
}

// EnvNames lists every environment variable the config reads, for docs and
// tests.
func EnvNames() []string {
	var names []string
	walkFields(reflect.ValueOf(&Config{}).Elem(), "CURSUS", func(name string, _ reflect.Value) error {
		names = append(names, name)
		return nil
	})
	for alias := range envAliases {
		names = append(names, alias)
	}
	return names
}

func applyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	// Aliases first, so the canonical name wins when both are set.
	for alias, canonical := range envAliases {
		if v, ok := lookup(alias); ok {
			if err := setByEnvName(cfg, canonical, v, alias); err != nil {
				return err
			}
		}
	}
	return walkFields(reflect.ValueOf(cfg).Elem(), "CURSUS", func(name string, field reflect.Value) error {
		v, ok := lookup(name)
		if !ok {
			return nil
		}
		return setField(field, v, name)
	})
}

func setByEnvName(cfg *Config, target, value, source string) error {
	return walkFields(reflect.ValueOf(cfg).Elem(), "CURSUS", func(name string, field reflect.Value) error {
		if name == target {
			return setField(field, value, source)
		}
		return nil
	})
}

func walkFields(v reflect.Value, prefix string, fn func(string, reflect.Value) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		name := prefix + "_" + strings.ToUpper(tag)
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := walkFields(f, name, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(name, f); err != nil {
			return err
		}
	}
	return nil
}

// ParseBool accepts exactly 1/true/yes/on and 0/false/no/off (any case);
// anything else is an error, so a typo never silently enables a gate.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (use 1/true/yes/on or 0/false/no/off)", s)
}

func setField(f reflect.Value, raw, name string) error {
	fail := func(err error) error { return fmt.Errorf("environment variable %s: %w", name, err) }
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(raw))
		if err != nil {
			return fail(err)
		}
		f.SetInt(int64(d))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(raw)
	case reflect.Bool:
		b, err := ParseBool(raw)
		if err != nil {
			return fail(err)
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return fail(fmt.Errorf("%q is not an integer", raw))
		}
		f.SetInt(n)
	case reflect.Slice:
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fail(fmt.Errorf("unsupported setting type %s", f.Kind()))
	}
	return nil
}

// Validate checks values that parse but make no sense.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen.Addr); err != nil {
		return fmt.Errorf("listen.addr %q: %w", c.Listen.Addr, err)
	}
	if c.Limits.MaxBodyBytes <= 0 {
		return fmt.Errorf("limits.max_body_bytes must be positive, got %d", c.Limits.MaxBodyBytes)
	}
	if c.Limits.ExecConcurrency < 1 {
		return fmt.Errorf("limits.exec_concurrency must be at least 1, got %d", c.Limits.ExecConcurrency)
	}
	switch strings.ToLower(c.Telemetry.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("telemetry.log_level %q: use debug, info, warn or error", c.Telemetry.LogLevel)
	}
	return nil
}

// Redacted is the config with secrets replaced, for `cursus config print`.
func (c Config) Redacted() Config {
	if c.Auth.TokensFile != "" {
		c.Auth.TokensFile = c.Auth.TokensFile + " (contents not shown)"
	}
	return c
}
