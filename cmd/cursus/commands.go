package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus"
	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
	"github.com/cursus-dev/cursus/server"
)

// parseCommand parses a command's flags: the shared settings plus its own
// (registered by extra, which may be nil). It returns the effective config
// and the flag set, whose remaining arguments are the command's.
func parseCommand(name string, args []string, withAddr bool, stderr io.Writer, env func(string) (string, bool), extra func(*flag.FlagSet)) (server.Config, *flag.FlagSet, error) {
	var s settings
	fs := newFlagSet(name, stderr)
	s.register(fs, withAddr)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return server.Config{}, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	cfg, err := s.config(env)
	return cfg, fs, err
}

func checkFormat(format string) error {
	if format != "text" && format != "json" {
		return fmt.Errorf("%w: --format must be text or json", errUsage)
	}
	return nil
}

func cmdServe(ctx context.Context, args []string, stderr io.Writer, env func(string) (string, bool)) error {
	cfg, _, err := parseCommand("serve", args, true, stderr, env, nil)
	if err != nil {
		return err
	}
	// Refuse unsafe exposure and bad credentials before loading anything.
	if err := cfg.CheckExposure(); err != nil {
		return err
	}
	if err := server.CheckAuth(cfg.Auth); err != nil {
		return err
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return err
	}
	if a.spent != nil {
		defer a.spent.Close()
	}
	if a.handlers.DevelopmentWorkflowKey {
		a.logger.Warn().Msg("no workflow.key or workflow.key_file: workflow run tokens are signed with a random development key; they die with this process and no other replica accepts them")
	}
	deps := server.Deps{Config: cfg, Registry: a.registry, Prompts: handlers.Prompts(a.handlers),
		Resources: handlers.Resources(a.handlers), Logger: a.logger,
		PodState: func() server.PodState {
			return server.PodState{CatalogDigest: a.handlers.CatalogDigest(), WorkflowKeyID: a.handlers.WorkflowKeyID()}
		}}
	server.LogOTelErrors(a.logger)
	tp, shutdownTracing, err := server.SetupTracing(ctx, cfg.Telemetry, env)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	if tp != nil {
		deps.Tracing = tp
		defer func() {
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdownTracing(flushCtx); err != nil {
				a.logger.Warn().Err(err).Msg("tracing: could not flush the last spans")
			}
		}()
	}
	srv := server.NewServer(deps)
	return srv.ListenAndServe(ctx, nil)
}

func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool)) (int, error) {
	if len(args) == 0 {
		return 0, fmt.Errorf("%w: mcp needs a subcommand: serve, help or list-tools", errUsage)
	}
	switch args[0] {
	case "serve":
		return 0, cmdMCPServe(ctx, args[1:], stdin, stdout, stderr, env)
	case "help":
		return cmdMCPHelp(ctx, args[1:], stdout, stderr, env)
	case "list-tools":
		return cmdListTools(args[1:], stdout, stderr, env)
	}
	return 0, fmt.Errorf("%w: unknown mcp subcommand %q", errUsage, args[0])
}

// cmdMCPServe serves MCP over stdio. Logs go to stderr; stdout carries only
// JSON-RPC. Gates apply as for remote callers; tool calls are logged like
// HTTP ones.
func cmdMCPServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool)) error {
	cfg, _, err := parseCommand("mcp serve", args, false, stderr, env, nil)
	if err != nil {
		return err
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return err
	}
	deps := server.Deps{Config: cfg, Registry: a.registry, Prompts: handlers.Prompts(a.handlers),
		Resources: handlers.Resources(a.handlers), Logger: a.logger,
		PodState: func() server.PodState {
			return server.PodState{CatalogDigest: a.handlers.CatalogDigest(), WorkflowKeyID: a.handlers.WorkflowKeyID()}
		}}
	return server.ServeStdio(ctx, deps, stdin, stdout, newStdLogger(stderr))
}

func cmdMCPHelp(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) (int, error) {
	var namespace, phase, format string
	var schema, examples bool
	cfg, _, err := parseCommand("mcp help", args, false, stderr, env, func(fs *flag.FlagSet) {
		fs.StringVar(&namespace, "namespace", "", "only this namespace")
		fs.StringVar(&phase, "phase", "", "only this phase: planner, validator or programmer")
		fs.BoolVar(&schema, "schema", false, "include each tool's JSON input schema")
		fs.BoolVar(&examples, "examples", false, "print examples (always on with --namespace)")
		fs.StringVar(&format, "format", "text", "text or json")
	})
	if err == nil {
		err = checkFormat(format)
	}
	if err != nil {
		return 0, err
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return 0, err
	}
	// The whole listing, by namespace: a terminal is not an agent's context.
	helpArgs := map[string]any{"include_schema": schema, "detail": "full"}
	if namespace != "" {
		helpArgs["namespace"] = namespace
	}
	if phase != "" {
		helpArgs["phase"] = strings.ToLower(phase)
	}
	// The help text is the tools.help result itself, so it cannot drift
	// from what agents see.
	res := a.registry.Call(ctx, "tools.help", helpArgs)
	if !res.OK {
		fmt.Fprintf(stderr, "cursus: %s\n", res.Error)
		return 1, nil
	}
	if format == "json" {
		return 0, writeIndented(stdout, res.Data)
	}
	writeHelpText(stdout, res.Data, examples || namespace != "")
	return 0, nil
}

func writeHelpText(w io.Writer, data any, withExamples bool) {
	// Round-trip through JSON to read the payload generically.
	var help struct {
		Overview   string `json:"overview"`
		TotalTools int    `json:"total_tools"`
		Shown      int    `json:"shown"`
		Phases     map[string]struct {
			Description string `json:"description"`
			Count       int    `json:"count"`
		} `json:"phases"`
		Namespaces []struct {
			Namespace   string `json:"namespace"`
			Description string `json:"description"`
			Count       int    `json:"count"`
			Tools       []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Tags        []string        `json:"tags"`
				Flags       []string        `json:"flags"`
				When        string          `json:"when"`
				Examples    []string        `json:"examples"`
				Schema      json.RawMessage `json:"schema"`
			} `json:"tools"`
		} `json:"namespaces"`
	}
	b, _ := json.Marshal(data)
	_ = json.Unmarshal(b, &help)
	fmt.Fprintf(w, "%s\n\n%d of %d tool(s) shown.\n\nPhases:\n", help.Overview, help.Shown, help.TotalTools)
	for _, p := range registry.Phases {
		fmt.Fprintf(w, "  %-10s (%2d)  %s\n", p.Name, help.Phases[p.Name].Count, p.Description)
	}
	fmt.Fprintln(w)
	for _, ns := range help.Namespaces {
		fmt.Fprintf(w, "%s (%d) — %s\n", ns.Namespace, ns.Count, ns.Description)
		for _, t := range ns.Tools {
			line := "  " + t.Name
			for _, f := range t.Flags {
				line += " [" + f + "]"
			}
			if len(t.Tags) > 0 {
				line += "  [" + strings.Join(t.Tags, ", ") + "]"
			}
			fmt.Fprintln(w, line)
			fmt.Fprintf(w, "      %s\n", t.Description)
			if t.When != "" {
				fmt.Fprintf(w, "      When: %s\n", t.When)
			}
			if withExamples && len(t.Examples) > 0 {
				fmt.Fprintln(w, "      Examples:")
				for _, ex := range t.Examples {
					fmt.Fprintf(w, "        %s\n", ex)
				}
			}
			if len(t.Schema) > 0 {
				var schema bytes.Buffer
				_ = json.Indent(&schema, t.Schema, "        ", "  ")
				fmt.Fprintf(w, "      Input schema:\n        %s\n", schema.Bytes())
			}
		}
		fmt.Fprintln(w)
	}
}

// cmdListTools lists the registered tools; a namespace that does not
// exist exits 1, as mcp help does.
func cmdListTools(args []string, stdout, stderr io.Writer, env func(string) (string, bool)) (int, error) {
	var namespace, format string
	cfg, _, err := parseCommand("mcp list-tools", args, false, stderr, env, func(fs *flag.FlagSet) {
		fs.StringVar(&namespace, "namespace", "", "only this namespace")
		fs.StringVar(&format, "format", "text", "text or json")
	})
	if err == nil {
		err = checkFormat(format)
	}
	if err != nil {
		return 0, err
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return 0, err
	}
	if namespaces := a.registry.Namespaces(); namespace != "" {
		if _, ok := namespaces[namespace]; !ok {
			fmt.Fprintf(stderr, "cursus: unknown namespace: '%s' (namespaces: %s)\n", namespace, strings.Join(slices.Sorted(maps.Keys(namespaces)), ", "))
			return 1, nil
		}
	}
	tools := a.registry.Tools(namespace)
	if format == "json" {
		type row struct {
			Name        string   `json:"name"`
			WireName    string   `json:"wire_name"`
			Description string   `json:"description"`
			Tags        []string `json:"tags"`
			Flags       []string `json:"flags"`
			Destructive bool     `json:"destructive"`
		}
		rows := []row{}
		for _, t := range tools {
			tags := t.Tags
			if tags == nil {
				tags = []string{}
			}
			rows = append(rows, row{t.Name, t.WireName(), t.Description, tags, t.Flags(), t.Destructive})
		}
		return 0, writeIndented(stdout, rows)
	}
	if len(tools) == 0 {
		fmt.Fprintln(stdout, "No tools registered.")
		return 0, nil
	}
	fmt.Fprintf(stdout, "%d tool(s):\n\n", len(tools))
	for _, t := range tools {
		line := "  " + t.Name
		for _, f := range t.Flags() {
			line += " [" + f + "]"
		}
		fmt.Fprintln(stdout, line)
		fmt.Fprintf(stdout, "      %s\n", t.Description)
	}
	return 0, nil
}

// cmdCall runs one tool in-process as the trusted local user and prints
// the envelope. Progress of long tools goes to stderr.
func cmdCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool)) (int, error) {
	cfg, fs, err := parseCommand("call", args, false, stderr, env, nil)
	if err != nil {
		return 0, err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return 0, fmt.Errorf("%w: call needs a tool name and optional arguments (JSON, @file or -)", errUsage)
	}
	raw := []byte("{}")
	if fs.NArg() == 2 {
		if raw, err = readArgs(fs.Arg(1), stdin); err != nil {
			return 0, err
		}
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return 0, err
	}
	ctx = registry.WithCaller(ctx, registry.Caller{Transport: "cli"})
	ctx = registry.WithProgress(ctx, func(done, total float64, message string) {
		if total > 0 {
			fmt.Fprintf(stderr, "progress: %.0f/%.0f %s\n", done, total, message)
		} else {
			fmt.Fprintf(stderr, "progress: %.0f %s\n", done, message)
		}
	})
	args2, bad := registry.DecodeArgs(raw)
	res := bad
	if bad == nil {
		res = a.registry.Call(ctx, fs.Arg(0), args2)
	}
	// Indent the wire bytes rather than re-encoding them, which would
	// lose the envelope's field order.
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, res.Encode(), "", "  "); err != nil {
		return 1, err
	}
	pretty.WriteByte('\n')
	if _, err := stdout.Write(pretty.Bytes()); err != nil {
		return 1, err
	}
	if !res.OK {
		return 1, nil
	}
	return 0, nil
}

func cmdConfig(args []string, stdout io.Writer, env func(string) (string, bool)) error {
	if len(args) == 0 || args[0] != "print" {
		return fmt.Errorf("%w: config needs the subcommand print", errUsage)
	}
	cfg, _, err := parseCommand("config print", args[1:], true, os.Stderr, env, nil)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(stdout)
	enc.SetIndent(2)
	return enc.Encode(cfg.Redacted())
}

func cmdVersion(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "cursus %s\n", cursus.Version)
	return err
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
