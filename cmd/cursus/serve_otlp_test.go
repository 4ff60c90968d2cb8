package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is stderr written by the server while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestOTLPExportErrorsAreJSONLogLines: with the OTLP endpoint a loopback
// port nothing listens on, the exporter's failures reach the log as JSON
// lines, and nothing else is written to stderr.
func TestOTLPExportErrorsAreJSONLogLines(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + closed.Addr().String()
	closed.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workspace-root", t.TempDir()}, strings.NewReader(""), &bytes.Buffer{}, &stderr, []string{
			"CURSUS_TELEMETRY_OTLP_ENDPOINT=" + endpoint, "CURSUS_LISTEN_DRAIN_DELAY=0s", "OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_EXPORTER_OTLP_TIMEOUT=2000",
		})
	}()
	addr := waitForListening(t, &stderr, done)
	resp, err := http.Post("http://"+addr+"/call/tools.help", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The batch processor exports within its schedule delay and fails.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), `"message":"opentelemetry"`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}

	var exportErrors int
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("stderr line is not JSON: %s", line)
			continue
		}
		if m["message"] == "opentelemetry" && m["level"] == "warn" && strings.Contains(m["error"].(string), closed.Addr().String()) {
			exportErrors++
		}
	}
	if exportErrors == 0 {
		t.Errorf("no export error naming %s in the log:\n%s", closed.Addr(), stderr.String())
	}
}

// waitForListening returns the address serve logged it listens on.
func waitForListening(t *testing.T, stderr *lockedBuffer, done <-chan int) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "listening" {
				return m["addr"].(string)
			}
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start: %s", stderr.String())
	return ""
}
