package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/localrun"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
	"github.com/cursus-dev/cursus/server"
)

// settings are the flags shared by every command that builds the registry.
type settings struct {
	configFile        string
	addr              string
	workspaceRoot     string
	stepDirs          multiFlag
	pipelineDirs      multiFlag
	enableDestructive optionalBool
	allowScriptExec   optionalBool
	allowUnauthRemote optionalBool
	logLevel          string
}

func (s *settings) register(fs *flag.FlagSet, withAddr bool) {
	fs.StringVar(&s.configFile, "config", "", "deployment config file (YAML)")
	if withAddr {
		fs.StringVar(&s.addr, "addr", "", "listen address (default 127.0.0.1:8080)")
		fs.Var(&s.allowUnauthRemote, "allow-unauthenticated-remote", "serve gated tools on a non-loopback address without authentication")
	}
	fs.StringVar(&s.workspaceRoot, "workspace-root", "", "directory every file argument must stay inside (default: working directory)")
	fs.Var(&s.stepDirs, "step-dir", "extra step-interface directory (repeatable)")
	fs.Var(&s.pipelineDirs, "pipeline-dir", "extra shared-DAG directory (repeatable)")
	fs.Var(&s.enableDestructive, "enable-destructive", "let remote callers run destructive and file-writing tools")
	fs.Var(&s.allowScriptExec, "allow-script-exec", "let remote callers run tools that execute scripts")
	fs.StringVar(&s.logLevel, "log-level", "", "debug, info, warn or error")
}

// config is defaults < file < environment < flags.
func (s *settings) config(env func(string) (string, bool)) (server.Config, error) {
	cfg, err := server.LoadConfig(s.configFile, env)
	if err != nil {
		return cfg, err
	}
	if s.addr != "" {
		cfg.Listen.Addr = s.addr
	}
	if s.workspaceRoot != "" {
		cfg.Workspace.Root = s.workspaceRoot
	}
	cfg.Workspace.StepDirs = append(cfg.Workspace.StepDirs, s.stepDirs...)
	cfg.Workspace.PipelineDirs = append(cfg.Workspace.PipelineDirs, s.pipelineDirs...)
	if s.enableDestructive.set {
		cfg.Gates.EnableDestructive = s.enableDestructive.value
	}
	if s.allowScriptExec.set {
		cfg.Gates.AllowScriptExec = s.allowScriptExec.value
	}
	if s.allowUnauthRemote.set {
		cfg.Listen.AllowUnauthenticatedRemote = s.allowUnauthRemote.value
	}
	if s.logLevel != "" {
		cfg.Telemetry.LogLevel = s.logLevel
	}
	return cfg, cfg.Validate()
}

// app is everything a command needs once the config is known.
type app struct {
	cfg      server.Config
	registry *registry.Registry
	// handlers holds the catalogs the MCP prompts and resources read.
	handlers *handlers.Deps
	logger   zerolog.Logger
	// spent is the shared store of spent run tokens (nil without
	// limits.shared_store).
	spent *server.SpentStore
}

func newApp(cfg server.Config, stderr io.Writer) (*app, error) {
	level, _ := zerolog.ParseLevel(strings.ToLower(cfg.Telemetry.LogLevel))
	logger := zerolog.New(stderr).Level(level).With().Timestamp().Logger()
	workflowKey, err := cfg.Workflow.SigningKey()
	if err != nil {
		return nil, err
	}
	previousKeys, err := cfg.Workflow.VerifyKeys()
	if err != nil {
		return nil, err
	}
	// With a shared store every replica refuses a run token spent on any
	// of them; without, each remembers its own.
	var spentStore workflows.SpentStore
	spent := server.NewSpentStore(cfg, logger)
	if spent != nil {
		spentStore = spent
	}
	// The operator's step and pipeline directories load while the registry
	// is built (neither needs the other); newApp returns once both are
	// done, so a bad directory fails start-up or is logged before the
	// server is ready. The built-in catalogs are parsed on first use.
	deps, loaded, err := handlers.StartDeps(handlers.Options{
		WorkspaceRoot:          cfg.Workspace.Root,
		StepDirs:               cfg.Workspace.StepDirs,
		StepReloadInterval:     max(cfg.Workspace.StepReloadInterval, time.Millisecond),
		PipelineDirs:           cfg.Workspace.PipelineDirs,
		Python:                 cfg.Workspace.Python,
		AllowUnisolatedScripts: cfg.Workspace.AllowUnisolatedScripts,
		ScriptMaxProcesses:     cfg.Workspace.ScriptMaxProcesses,
		ScriptMemoryBytes:      cfg.Workspace.ScriptMemoryBytes,
		ScriptCPUWeight:        cfg.Workspace.ScriptCPUWeight,
		LocalRun: localrun.Settings{StepTimeout: cfg.Workspace.RunPipelineStepTimeout, MaxTrials: cfg.Workspace.RunPipelineMaxTrials,
			MaxSampleBytes: cfg.Workspace.RunPipelineMaxSampleBytes, MaxStorageBytes: cfg.Workspace.RunPipelineMaxStorageBytes},
		RunPipelineS3:        cfg.Workspace.RunPipelineS3,
		AWSS3Endpoint:        cfg.AWS.S3(),
		AWSSageMakerEndpoint: cfg.AWS.SageMaker(),
		AWSRegion:            cfg.AWS.Region,
		MaxFileBytes:         cfg.Limits.MaxFileBytes,
		MaxStepTypes:         cfg.Limits.MaxStepTypes,
		MaxStepTypeBytes:     cfg.Limits.MaxStepTypeBytes,
		Inline: handlers.InlineLimits{MaxBytes: cfg.Limits.MaxInlineBytes, MaxFiles: cfg.Limits.MaxInlineFiles,
			MaxFileBytes: cfg.Limits.MaxInlineFileBytes},
		WorkflowKey:          workflowKey,
		WorkflowPreviousKeys: previousKeys,
		WorkflowTTL:          cfg.Workflow.TokenTTL,
		SpentStore:           spentStore,
	})
	if err != nil {
		return nil, err
	}
	reg, regErr := registry.New(registry.Options{
		Policy: cfg.Policy(), GateHints: server.GateHints(), Timeout: cfg.Limits.ToolTimeout, PerToolTimeout: cfg.Limits.ToolTimeouts,
		// Reports HTTP calls to the receiving server's metrics, traces and logs.
		Observer: server.CallObserver(),
	}, handlers.Namespaces(deps)...)
	if err := loaded(); err != nil {
		return nil, err
	}
	for _, p := range deps.LoadProblems() {
		what := "problem in a catalog directory: "
		if p.Level == finding.Warning {
			what = "remark on a catalog directory's file: "
		}
		logger.Warn().Str("catalog", p.Catalog).Str("file", p.File).Str("path", p.Path).Str("rule", p.Rule).Msg(what + p.Message)
	}
	if regErr != nil {
		return nil, regErr
	}
	// A skipped namespace's tools are unknown to the policy check below, so
	// say why first.
	for _, e := range reg.Skipped() {
		logger.Error().Err(e).Msg("tool namespace skipped")
	}
	if unknown := reg.UnknownPolicyNames(); len(unknown) > 0 {
		return nil, fmt.Errorf("gates.allow/gates.deny name no tool or namespace: %s (see `cursus mcp list-tools`)", strings.Join(unknown, ", "))
	}
	if err := server.CheckToolsets(reg, cfg.MCP); err != nil {
		return nil, err
	}
	return &app{cfg: cfg, registry: reg, handlers: deps, logger: logger, spent: spent}, nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// optionalBool is a boolean flag that remembers whether it was given, so an
// absent flag does not override the config file or environment.
type optionalBool struct{ set, value bool }

func (b *optionalBool) String() string   { return fmt.Sprint(b.value) }
func (b *optionalBool) IsBoolFlag() bool { return true }
func (b *optionalBool) Set(v string) error {
	parsed, err := server.ParseBool(v)
	if err != nil {
		return err
	}
	b.set, b.value = true, parsed
	return nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func readArgs(arg string, stdin io.Reader) ([]byte, error) {
	switch {
	case arg == "-":
		return io.ReadAll(stdin)
	case strings.HasPrefix(arg, "@"):
		return os.ReadFile(arg[1:])
	default:
		return []byte(arg), nil
	}
}
