// Command cursus serves the cursus tool registry over HTTP (MCP + REST),
// over MCP stdio, and runs tools from the command line.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cursus-dev/cursus/server"
)

const usage = `cursus builds Amazon SageMaker pipelines from DAGs of step types, as tools for AI agents.

Usage:
  cursus serve [--addr HOST:PORT] [--config FILE] [flags]   serve MCP (/mcp, /sse) and REST (/call, /tools) over HTTP
  cursus mcp serve [--config FILE]                          serve MCP over stdio (stdout carries only JSON-RPC)
  cursus mcp help [--namespace NS] [--phase P] [--schema] [--examples] [--format text|json]
  cursus mcp list-tools [--namespace NS] [--format text|json]
  cursus call TOOL [JSON | @FILE | -]                       run one tool in-process and print its envelope
  cursus workflow run NAME --input DIR [--arg NAME=VALUE]   run a workflow's gates over a local project
  cursus run-pipeline --dag-file F --config-file F | --definition F [--manifest F] [--sample FILE] [--max-trials N] [--format text|json]
                                                            run a pipeline locally, step by step (validate.run_pipeline)
  cursus config print [--config FILE]                       print the effective configuration
  cursus version

'cursus call' runs in-process as the trusted local user: the gates that keep remote
callers read-only do not apply to it. Exit status: 0 when the envelope is ok, 1 when not,
2 for usage errors. 'cursus workflow run' prints every finding and the remedy of the
first gate that does not pass, and exits 1;
'cursus run-pipeline' exits 1 when a step did not succeed.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// errUsage marks errors that should print the usage text.
var errUsage = errors.New("usage")

// run is main without the process: tests call it directly. environ is the
// process environment as os.Environ gives it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	env := lookupIn(environ)
	var err error
	var code int
	switch args[0] {
	case "serve", "mcp", "call", "config", "workflow", "run-pipeline":
		err = server.CheckEnv(environ)
	}
	switch {
	case err != nil:
	case args[0] == "serve":
		err = cmdServe(ctx, args[1:], stderr, env)
	case args[0] == "mcp":
		code, err = cmdMCP(ctx, args[1:], stdin, stdout, stderr, env)
	case args[0] == "call":
		code, err = cmdCall(ctx, args[1:], stdin, stdout, stderr, env)
	case args[0] == "workflow":
		code, err = cmdWorkflow(ctx, args[1:], stdout, stderr, env)
	case args[0] == "run-pipeline":
		code, err = cmdRunPipeline(ctx, args[1:], stdout, stderr, env)
	case args[0] == "config":
		err = cmdConfig(args[1:], stdout, env)
	case args[0] == "version":
		err = cmdVersion(stdout)
	case args[0] == "help", args[0] == "-h", args[0] == "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "cursus: %v\n\n%s", err, usage)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "cursus: %v\n", err)
		return 1
	}
	return code
}

// lookupIn looks a variable up in environ; the first entry wins, as in
// os.LookupEnv.
func lookupIn(environ []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
}
