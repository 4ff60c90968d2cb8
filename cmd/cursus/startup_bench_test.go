package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/server"
)

// BenchmarkBuildApp is start-up without the process: build the registry
// and the HTTP/MCP server, as `cursus serve` does before it binds (the
// built-in catalogs and the tool schemas are left for their first use, so
// neither is in it). Profile it with -cpuprofile and -memprofile;
// allocs/op is what start-up leaves for the GC.
func BenchmarkBuildApp(b *testing.B) {
	cfg, err := server.LoadConfig("", func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	cfg.Workspace.Root = b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		a, err := newApp(cfg, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		server.NewServer(server.Deps{Config: cfg, Registry: a.registry, Logger: zerolog.Nop()})
	}
}

// BenchmarkStdioInitialize starts `cursus mcp serve` and times it until
// the answer to `initialize` (ns/op); the floor is `cursus version`, the
// process start-up alone, in alternating rounds of the same run.
func BenchmarkStdioInitialize(b *testing.B) {
	dir := b.TempDir()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	stdio := func() error {
		cmd := exec.Command(binary, "mcp", "serve", "--workspace-root", dir)
		cmd.Stderr = io.Discard
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		defer func() { _ = in.Close(); _ = cmd.Wait() }()
		if _, err := io.WriteString(in, initialize); err != nil {
			return err
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.Contains(line, `"serverInfo"`) {
			return fmt.Errorf("no initialize answer: %q, %v", line, err)
		}
		return nil
	}
	alternate(b, stdio)
}

// BenchmarkListTools is `cursus mcp list-tools` against `cursus version`.
func BenchmarkListTools(b *testing.B) {
	dir := b.TempDir()
	alternate(b, func() error {
		cmd := exec.Command(binary, "mcp", "list-tools")
		cmd.Dir = dir
		return cmd.Run()
	})
}

// alternate runs ours and the `cursus version` floor in turn and reports
// both per operation and their ratio (ours ÷ floor: the multiple of a bare
// process start).
func alternate(b *testing.B, ours func() error) {
	version := func() error { return exec.Command(binary, "version").Run() }
	var tOurs, tFloor time.Duration
	for range b.N {
		start := time.Now()
		if err := version(); err != nil {
			b.Fatal(err)
		}
		tFloor += time.Since(start)
		start = time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		tOurs += time.Since(start)
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(perOp(tOurs), "ns/op")
	b.ReportMetric(perOp(tFloor), "floor-ns/op")
	b.ReportMetric(float64(tOurs)/float64(tFloor), "x-floor")
}
