// Command loadtest drives a running cursus server on this machine with
// concurrent MCP agent sessions, REST /call loops and session churn, and
// reports throughput, latency percentiles, errors, and the server's RSS and
// goroutines before and after. It only talks to loopback addresses and
// stops after -duration or -requests operations, whichever comes first.
//
//	go run ./cmd/loadtest -url http://127.0.0.1:8080 -mode mix -clients 64 -duration 60s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

// Upper bounds on what one run may ask for.
const (
	maxDuration = 30 * time.Minute
	maxClients  = 1024
	maxRequests = 50_000_000
)

type options struct {
	url      string
	mode     string
	duration time.Duration
	clients  int
	requests int64
	calls    int
	tool     string
	args     string
	protocol string
	pid      int
	settle   time.Duration
	timeout  time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "base URL of the cursus server (loopback only)")
	fs.StringVar(&o.mode, "mode", "mix", "sessions | rest | churn | mix")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "stop after this long (at most 30m)")
	fs.IntVar(&o.clients, "clients", 16, "concurrent clients")
	fs.Int64Var(&o.requests, "requests", 1_000_000, "stop after this many operations in total")
	fs.IntVar(&o.calls, "calls", 10, "tools/call requests per agent session (sessions mode)")
	fs.StringVar(&o.tool, "tool", "tools__describe_tool", "tool to call (wire name)")
	fs.StringVar(&o.args, "args", `{"name":"tools.help"}`, "tool arguments (JSON object)")
	fs.StringVar(&o.protocol, "protocol", "2025-11-25", "MCP protocol version the sessions negotiate")
	fs.IntVar(&o.pid, "pid", 0, "server process id, to read RSS from /proc when the server has no /metrics")
	fs.DurationVar(&o.settle, "settle", 10*time.Second, "after the run, wait up to this long for server goroutines to return to baseline")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "per-request timeout")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.mode != "sessions" && o.mode != "rest" && o.mode != "churn" && o.mode != "mix":
		return o, fmt.Errorf("-mode must be sessions, rest, churn or mix, got %q", o.mode)
	case o.duration <= 0 || o.duration > maxDuration:
		return o, fmt.Errorf("-duration must be in (0, %s], got %s", maxDuration, o.duration)
	case o.clients < 1 || o.clients > maxClients:
		return o, fmt.Errorf("-clients must be in [1, %d], got %d", maxClients, o.clients)
	case o.requests < 1 || o.requests > maxRequests:
		return o, fmt.Errorf("-requests must be in [1, %d], got %d", maxRequests, o.requests)
	case o.calls < 1:
		return o, fmt.Errorf("-calls must be at least 1, got %d", o.calls)
	case o.timeout <= 0:
		return o, errors.New("-timeout must be positive")
	}
	base, err := loopbackBase(o.url)
	if err != nil {
		return o, err
	}
	o.url = base
	if _, err := decodeArgs(o.args); err != nil {
		return o, fmt.Errorf("-args: %w", err)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	probe := newProbe(o.url, o.pid)
	if err := probe.ready(ctx); err != nil {
		return err
	}
	before := probe.sample(ctx)
	started := time.Now()
	res, err := drive(ctx, o)
	if err != nil {
		return err
	}
	elapsed := time.Since(started)
	after := probe.sample(ctx)
	settled := probe.settle(ctx, before, o.settle)
	report(stdout, o, res, elapsed, before, after, settled)
	return nil
}
