package server

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/internal/textdist"
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
	Workflow  WorkflowConfig  `yaml:"workflow"`
	Redis     RedisConfig     `yaml:"redis"`
}

// RedisConfig is the shared store's Redis server (limits.shared_store:
// redis). The password is password, else password_file's contents (read
// again for every new connection, so a rotated Secret takes effect
// without a restart). Timeout bounds every command, DialTimeout every
// connection attempt: an unreachable store costs a call at most these.
type RedisConfig struct {
	Address      string        `yaml:"address"`
	Password     string        `yaml:"password"`
	PasswordFile string        `yaml:"password_file"`
	DB           int           `yaml:"db"`
	KeyPrefix    string        `yaml:"key_prefix"`
	DialTimeout  time.Duration `yaml:"dial_timeout"`
	Timeout      time.Duration `yaml:"timeout"`
}

// sharedStoreRedis is the one shared store limits.shared_store names.
const sharedStoreRedis = "redis"

// WorkflowConfig signs workflow run tokens. Every replica that continues
// a run needs the same key: set key, or key_file (a mounted Kubernetes
// Secret). With neither, a random key is made at start (with a warning):
// its runs die with the process and no other replica accepts them.
//
// To rotate the key without losing runs in flight: first roll out the new
// key with the old one in previous_keys (or previous_keys_file), then,
// once every replica has both and token_ttl has passed, drop the old one.
// A token signed with a key no longer held is unknown_run_key.
type WorkflowConfig struct {
	Key     string `yaml:"key"`
	KeyFile string `yaml:"key_file"`
	// PreviousKeys still open run tokens they signed; new tokens are
	// signed with key. PreviousKeysFile holds more, one per line.
	PreviousKeys     []string      `yaml:"previous_keys"`
	PreviousKeysFile string        `yaml:"previous_keys_file"`
	TokenTTL         time.Duration `yaml:"token_ttl"`
}

// VerifyKeys are the previous keys still accepted: previous_keys, then
// each non-blank line of previous_keys_file that is not a # comment.
func (w WorkflowConfig) VerifyKeys() ([][]byte, error) {
	var keys [][]byte
	for _, k := range w.PreviousKeys {
		keys = append(keys, []byte(k))
	}
	if w.PreviousKeysFile != "" {
		data, err := os.ReadFile(w.PreviousKeysFile)
		if err != nil {
			return nil, fmt.Errorf("workflow.previous_keys_file: %w", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, []byte(line))
			}
		}
	}
	return keys, nil
}

// SigningKey is the configured key: key, else key_file's contents
// without surrounding blanks; nil when neither is set.
func (w WorkflowConfig) SigningKey() ([]byte, error) {
	switch {
	case w.Key != "" && w.KeyFile != "":
		return nil, errors.New("set workflow.key or workflow.key_file, not both")
	case w.Key != "":
		return []byte(w.Key), nil
	case w.KeyFile != "":
		data, err := os.ReadFile(w.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("workflow.key_file: %w", err)
		}
		return bytes.TrimSpace(data), nil
	}
	return nil, nil
}

// ListenConfig is where the HTTP server listens.
type ListenConfig struct {
	Addr string `yaml:"addr"`
	// AllowUnauthenticatedRemote lets the server listen on a non-loopback
	// address with gated tools enabled and no authentication.
	AllowUnauthenticatedRemote bool          `yaml:"allow_unauthenticated_remote"`
	ShutdownTimeout            time.Duration `yaml:"shutdown_timeout"`
	// DrainDelay is how long the server keeps serving new requests after
	// SIGTERM, with /readyz failing, so load balancers stop sending to it
	// before it stops accepting; ShutdownTimeout counts from its end.
	DrainDelay time.Duration `yaml:"drain_delay"`
	// TrustedProxies are the networks (CIDRs or addresses) of reverse
	// proxies whose X-Forwarded-For / Forwarded headers name the caller.
	// A request from anywhere else is its peer address, whatever it sends.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// MCPConfig configures the MCP transports.
type MCPConfig struct {
	Stateful       bool          `yaml:"stateful"`
	SessionIdleTTL time.Duration `yaml:"session_idle_ttl"`
	// SessionUnusedTTL ends a stateful session that has seen no request
	// since initialize sooner than SessionIdleTTL (0: no sooner).
	SessionUnusedTTL time.Duration `yaml:"session_unused_ttl"`
	LegacySSE        bool          `yaml:"legacy_sse"`
	AllowedOrigins   []string      `yaml:"allowed_origins"`
	BaseURL          string        `yaml:"base_url"`
	HeartbeatPeriod  time.Duration `yaml:"heartbeat_period"`
	// ToolList is how tools/list shows each tool: "lean" (a summary and
	// the shape of a call; tools.describe_tool has the rest) or "full"
	// (description with examples, whole input schema, outputSchema).
	ToolList string `yaml:"tool_list"`
	// Toolsets are the namespaces this server offers over MCP and
	// GET /tools (empty: every one); a request may select fewer.
	Toolsets []string `yaml:"toolsets"`
}

// The values of mcp.tool_list.
const (
	toolListLean = "lean"
	toolListFull = "full"
)

// GatesConfig decides what remote callers may run.
type GatesConfig struct {
	EnableDestructive bool     `yaml:"enable_destructive"`
	AllowScriptExec   bool     `yaml:"allow_script_exec"`
	Allow             []string `yaml:"allow"`
	Deny              []string `yaml:"deny"`
}

// WorkspaceConfig is where file arguments resolve and extra catalogs live.
type WorkspaceConfig struct {
	Root     string   `yaml:"root"`
	StepDirs []string `yaml:"step_dirs"`
	// StepReloadInterval is the least time between two looks at StepDirs
	// and PipelineDirs for changed files; a change is picked up without a
	// restart.
	StepReloadInterval time.Duration `yaml:"step_reload_interval"`
	PipelineDirs       []string      `yaml:"pipeline_dirs"`
	Python             string        `yaml:"python"`
	// AllowUnisolatedScripts runs validate.run_scripts without the OS
	// sandbox where the kernel cannot provide one. Unsafe on a shared
	// server: such scripts can read the server's credentials.
	AllowUnisolatedScripts bool `yaml:"allow_unisolated_scripts"`
	// ScriptMaxProcesses, ScriptMemoryBytes and ScriptCPUWeight bound the
	// whole process tree of each script run (processes and threads alive
	// at once, memory, CPU weight 1-10000 where 100 is a peer), where the
	// kernel gives runs a cgroup.
	ScriptMaxProcesses int   `yaml:"script_max_processes"`
	ScriptMemoryBytes  int64 `yaml:"script_memory_bytes"`
	ScriptCPUWeight    int   `yaml:"script_cpu_weight"`
	// RunPipeline* bound validate.run_pipeline: each job's wall clock,
	// the training jobs of a tuning step, the sample data a call sends,
	// and what one run writes (objects and job files together).
	RunPipelineStepTimeout     time.Duration `yaml:"run_pipeline_step_timeout"`
	RunPipelineMaxTrials       int           `yaml:"run_pipeline_max_trials"`
	RunPipelineMaxSampleBytes  int64         `yaml:"run_pipeline_max_sample_bytes"`
	RunPipelineMaxStorageBytes int64         `yaml:"run_pipeline_max_storage_bytes"`
	// RunPipelineS3 backs the local run's object store with the S3 the
	// aws section configures (region, s3_endpoint or endpoint, the SDK's
	// credential chain): objects the run did not produce, such as the
	// caller's input data, are read from it, and what each job produces
	// is written through to it. Off: S3 is a local directory.
	RunPipelineS3 bool `yaml:"run_pipeline_s3"`
}

// AuthConfig configures bearer-token and OIDC authentication. With
// neither configured, requests are anonymous (and gates still apply).
type AuthConfig struct {
	// TokensFile holds one static token per line: token (or sha256:<hex>),
	// principal, comma-separated scopes. It is re-read when it changes.
	TokensFile string     `yaml:"tokens_file"`
	OIDC       OIDCConfig `yaml:"oidc"`
	// ResourceURL is this server's canonical URL, published in the RFC 9728
	// protected-resource document.
	ResourceURL string `yaml:"resource_url"`
}

// Enabled reports whether any authentication is configured.
func (a AuthConfig) Enabled() bool { return a.TokensFile != "" || a.OIDC.Issuer != "" }

// OIDCConfig validates JWTs from an OpenID Connect issuer.
type OIDCConfig struct {
	Issuer   string `yaml:"issuer"`
	Audience string `yaml:"audience"`
	// JWKSURL is where the signing keys are; empty = OIDC discovery at
	// <issuer>/.well-known/openid-configuration.
	JWKSURL string `yaml:"jwks_url"`
	// JWKSRefresh is how often the keys are refetched in the background (a
	// token with an unknown key id also triggers one, at most every 10s).
	JWKSRefresh time.Duration `yaml:"jwks_refresh"`
}

// LimitsConfig bounds what one client can consume.
type LimitsConfig struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxArgBytes and MaxArgDepth bound a call's arguments object (encoded
	// size, nesting depth); larger or deeper arguments are invalid_input
	// before schema validation runs.
	MaxArgBytes int64         `yaml:"max_arg_bytes"`
	MaxArgDepth int           `yaml:"max_arg_depth"`
	ToolTimeout time.Duration `yaml:"tool_timeout"`
	// ToolTimeouts overrides ToolTimeout by dotted tool name
	// (env: CURSUS_LIMITS_TOOL_TIMEOUTS="dag.compile=5m,validate.run_scripts=10m").
	ToolTimeouts map[string]time.Duration `yaml:"tool_timeouts"`
	// RatePerMinute is each principal's tool-call budget (token bucket of
	// that size refilling over a minute); 0 turns rate limiting off.
	RatePerMinute int `yaml:"rate_per_minute"`
	// SharedStore "redis" makes RatePerMinute one budget per caller across
	// every replica, kept in the redis section's server, and keeps
	// stateful sessions and legacy SSE stream routing there, so that any
	// replica serves them (sharedSessions); "" (the default) has each
	// replica count and keep sessions alone.
	SharedStore string `yaml:"shared_store"`
	// AuthFailuresPerMinute is how many invalid bearer tokens one client
	// address may send (token bucket of that size refilling over a
	// minute); past it the address gets 429 before any token is checked.
	// 0 turns the limit off.
	AuthFailuresPerMinute int `yaml:"auth_failures_per_minute"`
	// ExecConcurrency caps exec_code tools running at once; a call waits up
	// to ExecWait for a slot, then fails with a retry hint.
	ExecConcurrency int           `yaml:"exec_concurrency"`
	ExecWait        time.Duration `yaml:"exec_wait"`
	// Fair share, per caller (principal, or client address without
	// authentication): MaxCallsPerCaller tool calls run at once, up to
	// MaxQueuedPerCaller more wait for one of those slots (each for up to
	// QueueWait), the arguments of its running and waiting calls total at
	// most MaxBytesPerCaller bytes, and it holds at most ExecPerCaller of
	// the ExecConcurrency slots. Over a cap: 429 rate_limited naming it.
	// 0 = no cap (MaxQueuedPerCaller 0: no call waits).
	MaxCallsPerCaller  int           `yaml:"max_calls_per_caller"`
	MaxQueuedPerCaller int           `yaml:"max_queued_per_caller"`
	QueueWait          time.Duration `yaml:"queue_wait"`
	MaxBytesPerCaller  int64         `yaml:"max_bytes_per_caller"`
	ExecPerCaller      int           `yaml:"exec_per_caller"`
	// ReadTimeout bounds reading a whole request, headers and body; it
	// ends once the body is in, so responses, streams and long calls are
	// never cut. ReadHeaderTimout bounds the headers alone.
	ReadTimeout      time.Duration `yaml:"read_timeout"`
	ReadHeaderTimout time.Duration `yaml:"read_header_timeout"`
	// MaxStreams and MaxStreamsPerPrincipal cap open SSE streams (legacy
	// /sse and GET /mcp) in total and per caller (principal, or client
	// address without authentication); MaxSessions and
	// MaxSessionsPerPrincipal cap stateful-mode MCP sessions the same way.
	// Over a cap: 429 with Retry-After. 0 = no cap.
	MaxStreams              int `yaml:"max_streams"`
	MaxStreamsPerPrincipal  int `yaml:"max_streams_per_principal"`
	MaxSessions             int `yaml:"max_sessions"`
	MaxSessionsPerPrincipal int `yaml:"max_sessions_per_principal"`
	// MaxFileBytes caps every file a tool reads from the workspace (DAG,
	// config, scripts, sources); a larger file is invalid_input.
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// MaxStepTypes and MaxStepTypeBytes cap the step_types one call may
	// send: how many .step.yaml documents, and the size of each.
	MaxStepTypes     int   `yaml:"max_step_types"`
	MaxStepTypeBytes int64 `yaml:"max_step_type_bytes"`
	// MaxInlineBytes, MaxInlineFiles and MaxInlineFileBytes cap what one
	// call sends instead of workspace files: its dag, config and files in
	// total, the number of files, and one file. Over a cap is invalid_input
	// naming it.
	MaxInlineBytes     int64 `yaml:"max_inline_bytes"`
	MaxInlineFiles     int   `yaml:"max_inline_files"`
	MaxInlineFileBytes int64 `yaml:"max_inline_file_bytes"`
}

// TelemetryConfig configures logs and traces. Traces are exported over
// OTLP/HTTP when an endpoint is set here or in the standard OTEL_*
// variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, …); OTEL_TRACES_EXPORTER=none turns them off.
type TelemetryConfig struct {
	LogLevel     string `yaml:"log_level"`
	ServiceName  string `yaml:"service_name"`
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// OTLPHeaders are sent with every export (often an API key), so config
	// print redacts their values.
	OTLPHeaders map[string]string `yaml:"otlp_headers"`
	// LogArgBytes caps the argument summary in tool-call logs.
	LogArgBytes int `yaml:"log_arg_bytes"`
}

// AWSConfig configures the SageMaker and S3 clients. A per-service
// endpoint wins over Endpoint; with neither, the SDK's own
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_SAGEMAKER / AWS_ENDPOINT_URL
// apply.
type AWSConfig struct {
	Region            string `yaml:"region"`
	Endpoint          string `yaml:"endpoint"`
	S3Endpoint        string `yaml:"s3_endpoint"`
	SageMakerEndpoint string `yaml:"sagemaker_endpoint"`
}

// S3 is the endpoint the S3 client uses ("" leaves it to the SDK).
func (a AWSConfig) S3() string { return cmp.Or(a.S3Endpoint, a.Endpoint) }

// SageMaker is the endpoint the SageMaker client uses ("" leaves it to the
// SDK).
func (a AWSConfig) SageMaker() string { return cmp.Or(a.SageMakerEndpoint, a.Endpoint) }

// DefaultConfig is the embedded default: loopback only, read-only tools.
func DefaultConfig() Config {
	return Config{
		Listen: ListenConfig{Addr: "127.0.0.1:8080", ShutdownTimeout: 20 * time.Second, DrainDelay: 5 * time.Second},
		MCP: MCPConfig{
			SessionIdleTTL: 10 * time.Minute, SessionUnusedTTL: time.Minute, LegacySSE: true, HeartbeatPeriod: 25 * time.Second, ToolList: toolListLean,
			AllowedOrigins: []string{"http://localhost", "http://127.0.0.1", "https://localhost", "https://127.0.0.1"},
		},
		Workspace: WorkspaceConfig{Root: ".", Python: "python3", StepReloadInterval: 2 * time.Second,
			ScriptMaxProcesses: 1024, ScriptMemoryBytes: 4 << 30, ScriptCPUWeight: 50,
			RunPipelineStepTimeout: 10 * time.Minute, RunPipelineMaxTrials: 2, RunPipelineMaxSampleBytes: 16 << 20, RunPipelineMaxStorageBytes: 4 << 30},
		Auth: AuthConfig{OIDC: OIDCConfig{JWKSRefresh: 15 * time.Minute}},
		Limits: LimitsConfig{
			MaxBodyBytes: 1 << 20, MaxArgBytes: 512 << 10, MaxArgDepth: 32, ToolTimeout: 120 * time.Second,
			RatePerMinute: 600, AuthFailuresPerMinute: 30, ExecConcurrency: 2, ExecWait: 5 * time.Second,
			MaxCallsPerCaller: 4, MaxQueuedPerCaller: 16, QueueWait: 10 * time.Second, MaxBytesPerCaller: 512 << 10, ExecPerCaller: 1,
			ReadTimeout: 30 * time.Second, ReadHeaderTimout: 10 * time.Second,
			MaxStreams: 1000, MaxStreamsPerPrincipal: 32, MaxSessions: 10000, MaxSessionsPerPrincipal: 100,
			MaxFileBytes: 16 << 20, MaxStepTypes: 16, MaxStepTypeBytes: 256 << 10,
			MaxInlineBytes: 8 << 20, MaxInlineFiles: 500, MaxInlineFileBytes: 2 << 20,
		},
		Telemetry: TelemetryConfig{LogLevel: "info", ServiceName: "cursus", LogArgBytes: 512},
		Workflow:  WorkflowConfig{TokenTTL: 24 * time.Hour},
		Redis:     RedisConfig{KeyPrefix: "cursus:", DialTimeout: time.Second, Timeout: 250 * time.Millisecond},
	}
}

// Policy is the registry gate policy these settings describe.
func (c Config) Policy() registry.Policy {
	return registry.Policy{
		EnableDestructive: c.Gates.EnableDestructive, AllowScriptExec: c.Gates.AllowScriptExec,
		Allow: c.Gates.Allow, Deny: c.Gates.Deny,
	}
}

// GateHints name, for each gate, the setting that opens it: the words a
// tool_disabled or forbidden answer gives, and tools.help shows.
func GateHints() map[registry.Gate]string {
	return map[registry.Gate]string{
		registry.GateDeny:  "remove it from gates.deny (CURSUS_GATES_DENY)",
		registry.GateAllow: "add it to gates.allow (CURSUS_GATES_ALLOW)",
		registry.GateExec:  "CURSUS_MCP_ALLOW_SCRIPT_EXEC=1 (config: gates.allow_script_exec)",
		registry.GateWrite: "CURSUS_MCP_ENABLE_DESTRUCTIVE=1 (config: gates.enable_destructive)",
		registry.GateScope: "a token with that scope (auth.tokens_file or the identity provider)",
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
		if err := decodeYAML(data, &cfg); err != nil {
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

// EnvNotConfig are the CURSUS_* variables that are not config keys but are
// read by something else, so CheckEnv lets them pass. Add one here when a
// script, client config or test starts reading a new CURSUS_* variable.
var EnvNotConfig = []string{
	"CURSUS_TOKEN",        // a client's bearer token (deploy/clients, the Helm notes)
	"CURSUS_AUTH_HEADER",  // mcp-remote's header value (deploy/clients/claude-desktop.json)
	"CURSUS_URL",          // the server the interop smoke scripts talk to (interop/)
	"CURSUS_SKIP_INTEROP", // scripts/test.sh
	"CURSUS_TOOLS_DIR",    // scripts/test.sh, scripts/install-helm.sh, scripts/install-promtool.sh
	"CURSUS_FUZZTIME",     // scripts/fuzz.sh
	"CURSUS_TEST_SECRET",  // engine/validate tests: must not reach a script
	"CURSUS_SANDBOX_LONG", // engine/sandbox and engine/validate tests: full-size hostile runs
	// server.TestHeavyCallerCannotStarveALightOne: its control run
	"CURSUS_TEST_NO_FAIR_SHARE",
}

// CheckEnv refuses CURSUS_* variables in environ ("NAME=value" entries, as
// os.Environ gives them) that are neither a config key, an alias nor on
// EnvNotConfig, as decodeYAML refuses unknown keys: a misspelt variable
// would otherwise leave its setting at the default without a word. Each is
// named with the closest known variable, when one is close.
func CheckEnv(environ []string) error {
	known := EnvNames()
	var problems []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "CURSUS_") || slices.Contains(known, name) || slices.Contains(EnvNotConfig, name) {
			continue
		}
		problem := name
		if near := closestName(name, known); near != "" {
			problem += " (did you mean " + near + "?)"
		}
		problems = append(problems, problem)
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return fmt.Errorf("unknown environment variable %s; every config key's variable is CURSUS_<SECTION>_<KEY> (see deploy/cursus.yaml)", strings.Join(problems, ", "))
}

// closestName is the candidate within a few edits of name ("" if none).
func closestName(name string, candidates []string) string {
	best, bestDist := "", 4 // more than 3 edits is another word, not a typo
	for _, c := range candidates {
		if d := textdist.Distance(name, c); d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	return best
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

// decodeYAML applies a config file over cfg key by key, so an unknown key
// or a bad value is reported with its dotted path and line.
func decodeYAML(data []byte, cfg *Config) error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // an empty file is no settings
			return nil
		}
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return decodeNode(doc.Content[0], reflect.ValueOf(cfg).Elem(), "")
}

func decodeNode(n *yaml.Node, v reflect.Value, path string) error {
	where := func() string { return fmt.Sprintf("%s (line %d)", path, n.Line) }
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return nil // "key:" with no value keeps the default
	}
	switch {
	case v.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if path == "" {
				return errors.New("the file must be a mapping of sections (listen, gates, auth, …)")
			}
			return fmt.Errorf("%s: expected a mapping of keys", where())
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			key := strings.TrimPrefix(path+"."+k.Value, ".")
			f, ok := fieldByTag(v, k.Value)
			if !ok {
				return fmt.Errorf("%s (line %d): unknown key; known keys here: %s", key, k.Line, strings.Join(tagsOf(v.Type()), ", "))
			}
			if err := decodeNode(val, f, key); err != nil {
				return err
			}
		}
		return nil
	case v.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: expected a mapping", where())
		}
		m := reflect.MakeMap(v.Type())
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			elem := reflect.New(v.Type().Elem()).Elem()
			if val.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s.%s (line %d): expected a single value", path, k.Value, val.Line)
			}
			if err := setScalar(elem, val.Value); err != nil {
				return fmt.Errorf("%s.%s (line %d): %w", path, k.Value, val.Line, err)
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), elem)
		}
		v.Set(m)
		return nil
	case v.Kind() == reflect.Slice:
		if n.Kind == yaml.ScalarNode { // "a, b" is accepted as in the environment
			break
		}
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: expected a list", where())
		}
		items := make([]string, 0, len(n.Content))
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s (line %d): list items must be strings", path, it.Line)
			}
			items = append(items, it.Value)
		}
		v.Set(reflect.ValueOf(items))
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s: expected a single value", where())
	}
	if err := setScalar(v, n.Value); err != nil {
		return fmt.Errorf("%s: %w", where(), err)
	}
	return nil
}

func fieldByTag(v reflect.Value, tag string) (reflect.Value, bool) {
	for i := 0; i < v.NumField(); i++ {
		if yamlTag(v.Type().Field(i)) == tag {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func tagsOf(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if tag := yamlTag(t.Field(i)); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

func yamlTag(f reflect.StructField) string { return strings.Split(f.Tag.Get("yaml"), ",")[0] }

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
		tag := yamlTag(t.Field(i))
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
	if err := setScalar(f, raw); err != nil {
		return fmt.Errorf("environment variable %s: %w", name, err)
	}
	return nil
}

// setScalar parses one textual setting (an environment value or a YAML
// scalar) into f. Lists are comma-separated; maps are k=v pairs separated
// by commas.
func setScalar(f reflect.Value, raw string) error {
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("%q is not a duration (use e.g. 30s, 5m, 1h)", raw)
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
			return err
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", raw)
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
	case reflect.Map:
		m := reflect.MakeMap(f.Type())
		for _, pair := range strings.Split(raw, ",") {
			if pair = strings.TrimSpace(pair); pair == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("%q is not a key=value pair", pair)
			}
			elem := reflect.New(f.Type().Elem()).Elem()
			if err := setScalar(elem, strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("%s: %w", strings.TrimSpace(k), err)
			}
			m.SetMapIndex(reflect.ValueOf(strings.TrimSpace(k)), elem)
		}
		f.Set(m)
	default:
		return fmt.Errorf("unsupported setting type %s", f.Kind())
	}
	return nil
}

// Validate checks values that parse but make no sense; each error names
// the key.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen.Addr); err != nil {
		return fmt.Errorf("listen.addr %q: %w", c.Listen.Addr, err)
	}
	if _, err := parseTrustedProxies(c.Listen.TrustedProxies); err != nil {
		return err
	}
	if err := c.validateSharedStore(); err != nil {
		return err
	}
	if c.MCP.ToolList != toolListLean && c.MCP.ToolList != toolListFull {
		return fmt.Errorf("mcp.tool_list must be %s or %s, got %q", toolListLean, toolListFull, c.MCP.ToolList)
	}
	positive := []struct {
		key string
		v   int64
	}{
		{"limits.max_body_bytes", c.Limits.MaxBodyBytes},
		{"limits.max_file_bytes", c.Limits.MaxFileBytes},
		{"limits.max_step_types", int64(c.Limits.MaxStepTypes)},
		{"limits.max_step_type_bytes", c.Limits.MaxStepTypeBytes},
		{"limits.max_inline_bytes", c.Limits.MaxInlineBytes},
		{"limits.max_inline_files", int64(c.Limits.MaxInlineFiles)},
		{"limits.max_inline_file_bytes", c.Limits.MaxInlineFileBytes},
		{"limits.max_arg_bytes", c.Limits.MaxArgBytes},
		{"limits.max_arg_depth", int64(c.Limits.MaxArgDepth)},
		{"limits.exec_concurrency", int64(c.Limits.ExecConcurrency)},
		{"workspace.script_max_processes", int64(c.Workspace.ScriptMaxProcesses)},
		{"workspace.script_memory_bytes", c.Workspace.ScriptMemoryBytes},
		{"workspace.script_cpu_weight", int64(c.Workspace.ScriptCPUWeight)},
		{"workspace.run_pipeline_step_timeout", int64(c.Workspace.RunPipelineStepTimeout)},
		{"workspace.run_pipeline_max_trials", int64(c.Workspace.RunPipelineMaxTrials)},
		{"workspace.run_pipeline_max_sample_bytes", c.Workspace.RunPipelineMaxSampleBytes},
		{"workspace.run_pipeline_max_storage_bytes", c.Workspace.RunPipelineMaxStorageBytes},
	}
	for _, p := range positive {
		if p.v < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", p.key, p.v)
		}
	}
	nonNegative := []struct {
		key string
		v   int64
	}{
		{"limits.rate_per_minute", int64(c.Limits.RatePerMinute)},
		{"limits.auth_failures_per_minute", int64(c.Limits.AuthFailuresPerMinute)},
		{"limits.tool_timeout", int64(c.Limits.ToolTimeout)},
		{"limits.exec_wait", int64(c.Limits.ExecWait)},
		{"limits.max_calls_per_caller", int64(c.Limits.MaxCallsPerCaller)},
		{"limits.max_queued_per_caller", int64(c.Limits.MaxQueuedPerCaller)},
		{"limits.queue_wait", int64(c.Limits.QueueWait)},
		{"limits.max_bytes_per_caller", c.Limits.MaxBytesPerCaller},
		{"limits.exec_per_caller", int64(c.Limits.ExecPerCaller)},
		{"limits.read_timeout", int64(c.Limits.ReadTimeout)},
		{"limits.read_header_timeout", int64(c.Limits.ReadHeaderTimout)},
		{"limits.max_streams", int64(c.Limits.MaxStreams)},
		{"limits.max_streams_per_principal", int64(c.Limits.MaxStreamsPerPrincipal)},
		{"limits.max_sessions", int64(c.Limits.MaxSessions)},
		{"limits.max_sessions_per_principal", int64(c.Limits.MaxSessionsPerPrincipal)},
		{"listen.shutdown_timeout", int64(c.Listen.ShutdownTimeout)},
		{"listen.drain_delay", int64(c.Listen.DrainDelay)},
		{"mcp.session_unused_ttl", int64(c.MCP.SessionUnusedTTL)},
		{"telemetry.log_arg_bytes", int64(c.Telemetry.LogArgBytes)},
		{"workspace.step_reload_interval", int64(c.Workspace.StepReloadInterval)},
		{"auth.oidc.jwks_refresh", int64(c.Auth.OIDC.JWKSRefresh)},
	}
	for _, p := range nonNegative {
		if p.v < 0 {
			return fmt.Errorf("%s must not be negative, got %d", p.key, p.v)
		}
	}
	if w := c.Workspace.ScriptCPUWeight; w > 10000 {
		return fmt.Errorf("workspace.script_cpu_weight must be at most 10000, got %d", w)
	}
	for tool, d := range c.Limits.ToolTimeouts {
		if d <= 0 {
			return fmt.Errorf("limits.tool_timeouts.%s must be positive, got %s", tool, d)
		}
	}
	switch strings.ToLower(c.Telemetry.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("telemetry.log_level %q: use debug, info, warn or error", c.Telemetry.LogLevel)
	}
	for key, u := range map[string]string{
		"auth.oidc.issuer": c.Auth.OIDC.Issuer, "auth.oidc.jwks_url": c.Auth.OIDC.JWKSURL,
		"auth.resource_url": c.Auth.ResourceURL, "mcp.base_url": c.MCP.BaseURL,
		"telemetry.otlp_endpoint": c.Telemetry.OTLPEndpoint,
		"aws.endpoint":            c.AWS.Endpoint, "aws.s3_endpoint": c.AWS.S3Endpoint, "aws.sagemaker_endpoint": c.AWS.SageMakerEndpoint,
	} {
		if u == "" {
			continue
		}
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%s %q: want an absolute http(s) URL", key, u)
		}
	}
	if c.Auth.OIDC.Issuer != "" && c.Auth.OIDC.Audience == "" && c.Auth.ResourceURL == "" {
		// RFC 8707 / MCP authorization: a token minted for another service
		// must not be accepted here.
		return errors.New("auth.oidc.audience: required with auth.oidc.issuer (or set auth.resource_url, which is then the audience)")
	}
	if c.Auth.OIDC.Issuer == "" && (c.Auth.OIDC.Audience != "" || c.Auth.OIDC.JWKSURL != "") {
		return errors.New("auth.oidc.issuer: required when auth.oidc.audience or auth.oidc.jwks_url is set")
	}
	return nil
}

// CheckExposure refuses a configuration that would let anyone on the
// network run gated tools: a non-loopback listen address, a gate open and
// no authentication, unless listen.allow_unauthenticated_remote says so.
func (c Config) CheckExposure() error {
	if c.Auth.Enabled() || c.Listen.AllowUnauthenticatedRemote || !(c.Gates.EnableDestructive || c.Gates.AllowScriptExec) {
		return nil
	}
	host, _, err := net.SplitHostPort(c.Listen.Addr)
	if err != nil || isLoopbackHost(host) {
		return err
	}
	var gates []string
	if c.Gates.EnableDestructive {
		gates = append(gates, "gates.enable_destructive")
	}
	if c.Gates.AllowScriptExec {
		gates = append(gates, "gates.allow_script_exec")
	}
	return fmt.Errorf("refusing to listen on %s without authentication while %s is on: anyone who can reach the port could run those tools. "+
		"Configure auth.tokens_file or auth.oidc.issuer, listen on a loopback address, or accept the risk with "+
		"--allow-unauthenticated-remote (CURSUS_LISTEN_ALLOW_UNAUTHENTICATED_REMOTE=1, config: listen.allow_unauthenticated_remote)",
		c.Listen.Addr, strings.Join(gates, " and "))
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redactedValue replaces a secret in printed configuration.
const redactedValue = "<redacted>"

// Redacted is the config with secrets replaced, for `cursus config print`.
// Token files are only named (their contents never load here); OTLP
// header values usually carry API keys; URLs lose any user:password.
func (c Config) Redacted() Config {
	if c.Workflow.Key != "" {
		c.Workflow.Key = redactedValue
	}
	if len(c.Workflow.PreviousKeys) > 0 {
		keys := make([]string, len(c.Workflow.PreviousKeys))
		for i := range keys {
			keys[i] = redactedValue
		}
		c.Workflow.PreviousKeys = keys
	}
	if c.Redis.Password != "" {
		c.Redis.Password = redactedValue
	}
	if len(c.Telemetry.OTLPHeaders) > 0 {
		h := make(map[string]string, len(c.Telemetry.OTLPHeaders))
		for k := range c.Telemetry.OTLPHeaders {
			h[k] = redactedValue
		}
		c.Telemetry.OTLPHeaders = h
	}
	for _, u := range []*string{&c.Auth.OIDC.Issuer, &c.Auth.OIDC.JWKSURL, &c.Auth.ResourceURL, &c.MCP.BaseURL, &c.Telemetry.OTLPEndpoint, &c.AWS.Endpoint, &c.AWS.S3Endpoint, &c.AWS.SageMakerEndpoint} {
		if p, err := url.Parse(*u); err == nil && p.User != nil {
			p.User = url.User(redactedValue)
			*u = p.String()
		}
	}
	return c
}

// validateSharedStore checks limits.shared_store and, when it is redis,
// the redis section.
func (c Config) validateSharedStore() error {
	switch c.Limits.SharedStore {
	case "":
		return nil
	case sharedStoreRedis:
	default:
		return fmt.Errorf("limits.shared_store must be empty or %q, got %q", sharedStoreRedis, c.Limits.SharedStore)
	}
	r := c.Redis
	if _, _, err := net.SplitHostPort(r.Address); err != nil {
		return fmt.Errorf("limits.shared_store is redis: redis.address %q must be host:port: %w", r.Address, err)
	}
	if r.Password != "" && r.PasswordFile != "" {
		return errors.New("set redis.password or redis.password_file, not both")
	}
	if r.PasswordFile != "" {
		if _, err := os.ReadFile(r.PasswordFile); err != nil {
			return fmt.Errorf("redis.password_file: %w", err)
		}
	}
	if r.DB < 0 || r.DialTimeout <= 0 || r.Timeout <= 0 {
		return errors.New("redis.db must be 0 or more, redis.dial_timeout and redis.timeout more than 0")
	}
	return nil
}

// password is the Redis password now: password, else password_file's
// contents without surrounding blanks ("" when it cannot be read; the
// server then refuses the connection and the store counts as down).
func (r RedisConfig) password() string {
	if r.PasswordFile == "" {
		return r.Password
	}
	data, err := os.ReadFile(r.PasswordFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
