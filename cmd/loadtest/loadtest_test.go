package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
	"github.com/cursus-dev/cursus/server"
)

func TestLoopbackOnly(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080", "http://127.3.2.1:1/", "http://localhost:9", "http://[::1]:8080"} {
		if _, err := loopbackBase(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.1:8080", "http://192.168.1.2", "http://example.com", "https://127.0.0.1",
		"http://127.0.0.1.example.com", "http://127.0.0.1:8080/mcp", "ftp://127.0.0.1"} {
		if _, err := loopbackBase(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestFlagBounds(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "0s"}, {"-duration", "31m"}, {"-clients", "0"}, {"-clients", "5000"},
		{"-requests", "0"}, {"-mode", "storm"}, {"-args", "[1]"}, {"-url", "http://10.1.1.1"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 95: 95, 99: 99, 100: 100, 1: 1} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("empty percentile")
	}
}

func TestParseMetrics(t *testing.T) {
	s := parseMetrics(strings.NewReader("# HELP go_goroutines x\ngo_goroutines 17\nprocess_resident_memory_bytes 2.5e+07\nother 1\n"))
	if s.Goroutines != 17 || s.RSSBytes != 2.5e7 {
		t.Fatalf("parsed %+v", s)
	}
	if s := parseMetrics(strings.NewReader("")); s.Goroutines != -1 || s.RSSBytes != -1 {
		t.Fatalf("empty input gave %+v", s)
	}
}

// TestRunAgainstServer drives the real router with every mode, bounded by
// a small request budget, and expects no errors at all.
func TestRunAgainstServer(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.Workspace.Root = t.TempDir()
	// All load clients share one address, so the per-caller rate limit
	// would answer with 429s; load runs switch it off the same way.
	cfg.Limits.RatePerMinute = 0
	deps, err := handlers.NewDeps(handlers.Options{WorkspaceRoot: cfg.Workspace.Root})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Policy: cfg.Policy()}, handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.NewServer(server.Deps{Config: cfg, Registry: reg, Logger: zerolog.New(io.Discard)}))
	defer ts.Close()
	for _, mode := range []string{"sessions", "rest", "churn", "mix"} {
		var out bytes.Buffer
		err := run(context.Background(), []string{"-url", ts.URL, "-mode", mode, "-clients", "4", "-requests", "80",
			"-calls", "3", "-duration", "1m", "-settle", "5s"}, &out, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		text := out.String()
		if !strings.Contains(text, "errors: 0 ") {
			t.Errorf("%s: errors reported:\n%s", mode, text)
		}
		m := regexp.MustCompile(`(?m)^all\s+(\d+)`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s: no operations measured:\n%s", mode, text)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n == 0 || n > 80 {
			t.Errorf("%s: want 1..80 operations (the budget):\n%s", mode, text)
		}
		if !strings.Contains(text, "server (/metrics)") {
			t.Errorf("%s: server stats not read from /metrics:\n%s", mode, text)
		}
	}
}
