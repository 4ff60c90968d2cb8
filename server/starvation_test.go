package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// heavyAlignmentBody is a validate.alignment call over every step type
// with about 361 KiB of inline scripts: the example project's, each
// padded with functions the analysis must read.
func heavyAlignmentBody(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "examples", "xgboost-tabular", "scripts")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".py") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["scripts/"+e.Name()] = string(b)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	})
	for total, i := 0, 0; total < 361<<10; i++ {
		name := names[i%len(names)]
		pad := fmt.Sprintf("\n\ndef helper_%d(path, env):\n    value = env.get(\"HELPER_%d\", \"default\")\n    return os.path.join(path, value)\n", i, i)
		files[name] += pad
		total = 0
		for _, v := range files {
			total += len(v)
		}
	}
	body, err := json.Marshal(map[string]any{"files": files, "source_dir": "scripts"})
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestHeavyCallerCannotStarveALightOne (issue #34, break 3): one caller
// sends nine heavy validate.alignment calls a second (361 KiB inline
// each, sent together so that they overlap on any machine), within the
// rate limit; another caller's catalog.search keeps a p99 under 50 ms
// while the heavy load runs, and the heavy caller is throttled (429
// naming its fair-share limit). Without fair share the light caller's
// p50 went to 1.66 s. Default fair-share limits, real HTTP, two callers
// told apart by their tokens. -short measures for 3 s, the long
// variant (go test ./server -run TestHeavyCallerCannotStarveALightOne)
// for 15 s; CURSUS_TEST_NO_FAIR_SHARE=1 runs the control with the caps
// off, as the code was before them (heavy caller never throttled, light
// p99 0.1 s on a quiet machine, 1.45 s on a loaded one).
func TestHeavyCallerCannotStarveALightOne(t *testing.T) {
	if raceDetector {
		t.Skip("latency is not measured under the race detector")
	}
	run := 15 * time.Second
	if testing.Short() {
		run = 3 * time.Second
	}
	// Default limits, but a rate limit the light caller's sampling (a
	// call every few milliseconds) stays within; the heavy caller's 540
	// calls a minute are within the default 600 anyway.
	env := map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_LIMITS_RATE_PER_MINUTE": "60000"}
	if os.Getenv("CURSUS_TEST_NO_FAIR_SHARE") != "" { // the control: today's code had none
		env["CURSUS_LIMITS_MAX_CALLS_PER_CALLER"], env["CURSUS_LIMITS_MAX_BYTES_PER_CALLER"] = "0", "0"
	}
	o := newOpsEnv(t, env)
	heavy := heavyAlignmentBody(t)
	post := func(tool, body, token string) (int, time.Duration) {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, o.ts.URL+"/call/"+tool, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	// Warm up both paths (catalog, schema, connection pool).
	if s, _ := post("validate.alignment", heavy, readToken); s != http.StatusOK && s != http.StatusUnprocessableEntity {
		t.Fatalf("heavy call alone: %d", s)
	}
	for range 5 {
		post("catalog.search", `{"query": "xgboost"}`, writeToken)
	}

	bodyFile := filepath.Join(t.TempDir(), "heavy.json")
	if err := os.WriteFile(bodyFile, []byte(heavy), 0o600); err != nil {
		t.Fatal(err)
	}
	// attempt runs the heavy caller and measures the light one; ok says
	// whether the light p99 stayed under 50 ms with the heavy caller
	// throttled.
	attempt := func(n int) (ok bool) {
		// The heavy caller is a process of its own, as a remote caller
		// is: its client work does not share this process's scheduler.
		statsFile := filepath.Join(t.TempDir(), "stats")
		cmd := exec.Command(os.Args[0], "-test.run=^TestHeavyClientProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HEAVY_CALLER_URL="+o.ts.URL+"/call/validate.alignment", "HEAVY_CALLER_TOKEN="+readToken,
			"HEAVY_CALLER_BODY="+bodyFile, "HEAVY_CALLER_STATS="+statsFile)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The heavy load is under way once its first answers are in.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(statsFile); len(b) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the heavy caller got no answer in 30 s:\n%s", out.Bytes())
			}
		}
		var light []time.Duration
		for end := time.Now().Add(run); time.Now().Before(end); {
			s, d := post("catalog.search", `{"query": "xgboost"}`, writeToken)
			if s != http.StatusOK {
				t.Fatalf("light call: %d", s)
			}
			light = append(light, d)
			time.Sleep(5 * time.Millisecond)
		}
		stdin.Close() // the heavy caller stops
		if err := cmd.Wait(); err != nil {
			t.Fatalf("heavy caller: %v\n%s", err, out.Bytes())
		}
		var admitted, throttled, other int
		b, _ := os.ReadFile(statsFile)
		if _, err := fmt.Sscan(string(b), &admitted, &throttled, &other); err != nil {
			t.Fatalf("heavy caller's stats %q: %v", b, err)
		}
		slices.Sort(light)
		p50, p99 := light[len(light)/2], light[len(light)*99/100]
		t.Logf("attempt %d: light caller: %d calls, p50 %v, p99 %v, max %v; heavy caller: %d admitted, %d throttled, %d other",
			n, len(light), p50, p99, light[len(light)-1], admitted, throttled, other)
		if throttled == 0 || admitted == 0 || other != 0 {
			t.Fatalf("heavy caller: %d admitted, %d throttled, %d other answers; want it throttled, not shut out", admitted, throttled, other)
		}
		return p99 < 50*time.Millisecond
	}
	// Other work on a shared machine can delay any request; the light
	// caller's p99 must hold in one of three runs.
	for n := 1; n <= 3; n++ {
		if attempt(n) {
			return
		}
	}
	t.Error("the light caller's p99 was 50 ms or more in each of three runs while the heavy caller ran")
}

// TestHeavyClientProcess is the heavy caller of
// TestHeavyCallerCannotStarveALightOne, run as a process of its own: nine
// calls a second to HEAVY_CALLER_URL, until its stdin closes. It writes
// its counts (admitted, throttled, other) to HEAVY_CALLER_STATS after
// each answer.
func TestHeavyClientProcess(t *testing.T) {
	url := os.Getenv("HEAVY_CALLER_URL")
	if url == "" {
		t.Skip("the heavy caller of TestHeavyCallerCannotStarveALightOne")
	}
	body, err := os.ReadFile(os.Getenv("HEAVY_CALLER_BODY"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	var mu sync.Mutex
	var admitted, throttled, other int
	var wg sync.WaitGroup
	call := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+os.Getenv("HEAVY_CALLER_TOKEN"))
			status := 0
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case http.StatusOK, http.StatusUnprocessableEntity:
				admitted++
			case http.StatusTooManyRequests:
				throttled++
			default:
				other++
			}
			_ = os.WriteFile(os.Getenv("HEAVY_CALLER_STATS"), []byte(fmt.Sprintf("%d %d %d", admitted, throttled, other)), 0o600)
		}()
	}
	// Nine calls each second, sent together: they overlap however fast
	// the machine is.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-stop:
				wg.Wait()
				http.DefaultClient.CloseIdleConnections() // for the leak check
				return
			case <-tick.C:
			}
		}
		for range 9 {
			call()
		}
	}
}
