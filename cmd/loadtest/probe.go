package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// serverStats is one reading of the server's process. A negative value
// means the reading was not available.
type serverStats struct {
	RSSBytes   float64
	Goroutines float64
	Source     string
}

// probe reads the server's /metrics (process_resident_memory_bytes,
// go_goroutines); with -pid it falls back to /proc for RSS.
type probe struct {
	base string
	pid  int
	hc   *http.Client
}

func newProbe(base string, pid int) *probe {
	return &probe{base: base, pid: pid, hc: &http.Client{Timeout: 5 * time.Second}}
}

// ready waits briefly for /readyz so a freshly started server is not
// measured while it boots.
func (p *probe) ready(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/readyz", nil)
		resp, err := p.hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return fmt.Errorf("server at %s is not ready: %v", p.base, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *probe) sample(ctx context.Context) serverStats {
	s := serverStats{RSSBytes: -1, Goroutines: -1}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/metrics", nil)
	if resp, err := p.hc.Do(req); err == nil {
		if resp.StatusCode == http.StatusOK {
			s = parseMetrics(resp.Body)
			s.Source = "/metrics"
		}
		resp.Body.Close()
	}
	if s.RSSBytes < 0 && p.pid > 0 {
		if rss, err := procRSS(p.pid); err == nil {
			s.RSSBytes, s.Source = rss, "/proc"
		}
	}
	return s
}

// settle polls until the goroutine count is back within a small margin of
// the baseline (idle keep-alive connections and timers account for a few)
// or the wait is over, and returns the last reading.
func (p *probe) settle(ctx context.Context, before serverStats, wait time.Duration) serverStats {
	deadline := time.Now().Add(wait)
	for {
		s := p.sample(ctx)
		if s.Goroutines < 0 || before.Goroutines < 0 || s.Goroutines <= before.Goroutines+goroutineSlack ||
			time.Now().After(deadline) || ctx.Err() != nil {
			return s
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// goroutineSlack is how far above the baseline still counts as "back".
const goroutineSlack = 5

// parseMetrics reads the two gauges from the Prometheus text format.
func parseMetrics(r io.Reader) serverStats {
	s := serverStats{RSSBytes: -1, Goroutines: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			s.RSSBytes = v
		case "go_goroutines":
			s.Goroutines = v
		}
	}
	return s
}

// procRSS reads VmRSS of a local process.
func procRSS(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 2 && fields[1] == "kB" {
				kb, err := strconv.ParseFloat(fields[0], 64)
				return kb * 1024, err
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
