package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// replicaServer is one replica of a deployment: the production namespaces
// with workflow key key, behind a proxy on 127.0.0.1.
func replicaServer(t testing.TB, key string, tune ...func(*Config)) *Server {
	t.Helper()
	return loggedReplicaServer(t, key, zerolog.New(io.Discard), tune...)
}

// loggedReplicaServer is replicaServer logging to log.
func loggedReplicaServer(t testing.TB, key string, log zerolog.Logger, tune ...func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Workspace.Root = t.TempDir()
	cfg.Listen.TrustedProxies = []string{"127.0.0.1/32"}
	for _, f := range tune {
		f(&cfg)
	}
	deps, err := handlers.NewDeps(handlers.Options{WorkspaceRoot: cfg.Workspace.Root, WorkflowKey: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout}, handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: log})
	t.Cleanup(func() {
		_ = srv.stream.Shutdown(context.Background())
		if srv.shared != nil {
			srv.shared.close()
		}
	})
	return srv
}

// countedReplica serves a replicaServer on a test listener and counts the
// requests it receives.
func countedReplica(t testing.TB, key string, tune ...func(*Config)) (string, *atomic.Int64) {
	t.Helper()
	srv := replicaServer(t, key, tune...)
	hits := &atomic.Int64{}
	inner := srv.handler
	srv.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		inner.ServeHTTP(w, r)
	})
	return startHTTP(t, srv).URL, hits
}

// nginxInFront runs Debian's nginx as a round-robin reverse proxy to
// upstreams on a free loopback port, as the test user, and returns its URL.
func nginxInFront(t testing.TB, upstreams []string) string {
	t.Helper()
	return startNginx(t, upstreams).base
}

// nginx is a running nginx whose upstreams can be replaced, as an Ingress
// controller's are when endpoints change.
type nginx struct {
	base string
	// reload writes the config with these upstreams and has nginx load
	// it (SIGHUP: new workers take new requests, old ones finish theirs).
	reload func(upstreams []string)
}

func startNginx(t testing.TB, upstreams []string) nginx {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/nginx"); statErr != nil {
			t.Skip("nginx is not installed (scripts/test.sh installs it)")
		}
		bin = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	confPath := filepath.Join(dir, "nginx.conf")
	write := func(upstreams []string) {
		var servers strings.Builder
		for _, u := range upstreams {
			fmt.Fprintf(&servers, "    server %s;\n", strings.TrimPrefix(u, "http://"))
		}
		conf := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream cursus {
%[2]s  }
  server {
    listen %[3]s;
    location / {
      proxy_pass http://cursus;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering off;
      proxy_read_timeout 120s;
      client_max_body_size 16m;
      # In memory: as root, nginx workers run as another user that cannot
      # write temp files into the test directory.
      client_body_buffer_size 16m;
    }
  }
}
`, dir, servers.String(), addr)
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(upstreams)
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt) // nginx: fast shutdown
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s%s", err, out.Bytes(), log)
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nginx{base: base, reload: func(upstreams []string) {
					write(upstreams)
					if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
						t.Fatal(err)
					}
				}}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not answer on %s:\n%s", addr, out.Bytes())
		}
	}
}

// TestThreeReplicasBehindNginx: three replicas sharing a workflow key
// behind a real round-robin nginx. Stateless streamable HTTP sessions
// (go-sdk client) and REST calls all succeed, every replica serves some,
// and a workflow started on one replica finishes on another.
func TestThreeReplicasBehindNginx(t *testing.T) {
	const key = "three-replicas-share-this-key"
	var upstreams []string
	var hits []*atomic.Int64
	for range 3 {
		u, h := countedReplica(t, key)
		upstreams = append(upstreams, u)
		hits = append(hits, h)
	}
	base := nginxInFront(t, upstreams)
	sessions := 200
	if testing.Short() {
		sessions = 20
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Stateless streamable HTTP: each session initializes, lists and
	// calls, every request free to land on any replica.
	var failures atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := oneSDKSession(ctx, base+"/mcp"); err != nil {
					failures.Add(1)
					firstErr.Do(func() { t.Errorf("session %d: %v", i, err) })
				}
			}
		}()
	}
	for i := range sessions {
		work <- i
	}
	close(work)
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d of %d streamable HTTP sessions failed through the proxy", n, sessions)
	}

	for i := range sessions {
		resp, err := http.Post(base+"/call/tools.help", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("REST call %d through the proxy: %d", i, resp.StatusCode)
		}
	}
	for i, h := range hits {
		if h.Load() == 0 {
			t.Errorf("replica %d served nothing: the proxy did not spread the load", i)
		}
	}

	// A workflow: note which replica serves each step.
	servedBy := func(step func()) int {
		before := make([]int64, len(hits))
		for i, h := range hits {
			before[i] = h.Load()
		}
		step()
		for i, h := range hits {
			if h.Load() != before[i] {
				return i
			}
		}
		t.Fatal("no replica saw the request")
		return -1
	}
	dag, config := exampleDocument(t, "dag.json"), exampleDocument(t, "config.json")
	var run map[string]any
	started := servedBy(func() {
		run = proxiedCall(t, base, "workflow.start", map[string]any{"workflow": "cursus-configure-pipeline"})
	})
	replicas := map[int]bool{started: true}
	for _, stage := range []struct {
		name    string
		content map[string]any
	}{
		{"Constrain", map[string]any{"dag": dag}},
		{"Validate", map[string]any{"dag": dag, "config": config}},
		{"DagCheck", map[string]any{"dag": dag, "config": config}},
	} {
		replicas[servedBy(func() {
			run = proxiedCall(t, base, "workflow.submit", map[string]any{"run": run["run"], "stage": stage.name, "content": stage.content})
		})] = true
	}
	if run["status"] != "green" {
		t.Fatalf("workflow through the proxy ended %v", run["status"])
	}
	if len(replicas) < 2 {
		t.Errorf("the workflow ran on replicas %v only: want it to move between them", replicas)
	}
	t.Logf("%d sessions and %d REST calls through nginx; requests per replica %d/%d/%d; workflow on replicas %v",
		sessions, sessions, hits[0].Load(), hits[1].Load(), hits[2].Load(), replicas)
}

// TestRollingRestartBehindNginxLosesNothing replays a Deployment replacing
// one of three pods under steady load from 16 clients through nginx. The
// old replica gets SIGTERM (its serve context ends): /readyz fails at once,
// and the endpoint controller's part is played by the test, which sees
// that and reloads nginx without it, while listen.drain_delay keeps the
// replica serving what nginx still sends; then it shuts down gracefully,
// a new replica starts on its address and nginx takes it back. No request
// fails.
func TestRollingRestartBehindNginxLosesNothing(t *testing.T) {
	const key = "rolling-replicas-share-this-key"
	type replica struct {
		addr string
		stop func() error // shuts it down once; later calls return the same
	}
	start := func(addr string, drainDelay time.Duration) replica {
		srv := replicaServer(t, key, func(c *Config) {
			c.Listen.Addr = addr
			c.Listen.DrainDelay = drainDelay
			c.Limits.RatePerMinute = 0
		})
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan net.Addr, 1)
		done := make(chan error, 1)
		go func() { done <- srv.ListenAndServe(ctx, ready) }()
		select {
		case a := <-ready:
			stop := sync.OnceValue(func() error { cancel(); return <-done })
			t.Cleanup(func() { _ = stop() })
			return replica{addr: a.String(), stop: stop}
		case err := <-done:
			cancel()
			t.Fatalf("replica on %s: %v", addr, err)
		}
		return replica{}
	}
	var replicas []replica
	var upstreams []string
	// The replica to be replaced gets a drain delay ample for one nginx
	// reload on a loaded machine; the others none, so the test ends fast.
	for i := range 3 {
		r := start("127.0.0.1:0", map[bool]time.Duration{true: 3 * time.Second}[i == 0])
		replicas = append(replicas, r)
		upstreams = append(upstreams, "http://"+r.addr)
	}
	proxy := startNginx(t, upstreams)
	base := proxy.base

	var okCount, failed atomic.Int64
	var firstFailure sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// A connection per request: an nginx reload closes idle client
	// connections, which Go's client does not retry for a POST; that is
	// the proxy's reload, not the replica under test.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Post(base+"/call/testonly__sleep", "application/json", strings.NewReader(`{"ms": 20}`))
				status := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				// The production namespaces have no testonly tools: 404
				// unknown_tool is the replica's own answer, as good as a
				// 200 for routing; anything else is a lost request.
				if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
					failed.Add(1)
					firstFailure.Do(func() { t.Errorf("a request during the restart: status %d, %v", status, err) })
					continue
				}
				okCount.Add(1)
			}
		}()
	}
	// On any exit, the clients stop before the replicas and nginx do.
	stopClients := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopClients)
	waitFor := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); okCount.Load() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d requests answered", okCount.Load())
			}
		}
	}
	waitFor(200)
	old := replicas[0]
	stopped := make(chan error, 1)
	go func() { stopped <- old.stop() }()
	for {
		resp, err := http.Get("http://" + old.addr + "/readyz")
		if err != nil {
			t.Fatalf("the old replica stopped accepting before its drain delay ended: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	proxy.reload(upstreams[1:])
	if err := <-stopped; err != nil {
		t.Fatalf("the replaced replica's shutdown: %v", err)
	}
	before := okCount.Load()
	start(old.addr, 0)
	proxy.reload(upstreams)
	waitFor(before + 200)
	stopClients()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d requests failed across the restart", n, n+okCount.Load())
	}
	t.Logf("%d requests, none failed, across one replica's restart", okCount.Load())
}

// oneSDKSession is one go-sdk client session: initialize, tools/list and
// a tools/call whose envelope must be ok.
func oneSDKSession(ctx context.Context, url string) error {
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "replicas-test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools__help", Arguments: map[string]any{}})
	if err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !bytes.Contains(raw, []byte(`"ok":true`)) {
		return fmt.Errorf("tools/call envelope: %s", raw)
	}
	return otherSurfaces(ctx, cs)
}

// otherSurfaces asks a session for what is not a tool: prompts/list and
// prompts/get, resources/list and resources/read, and completion/complete
// of a prompt argument, each of which must answer with content.
func otherSurfaces(ctx context.Context, cs *sdk.ClientSession) error {
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 {
		return fmt.Errorf("prompts/list: %v, %w", prompts, err)
	}
	prompt, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "cursus-new-project", Arguments: map[string]string{"name": "demo", "framework": "xgboost"}})
	if err != nil || len(prompt.Messages) == 0 {
		return fmt.Errorf("prompts/get: %v, %w", prompt, err)
	}
	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		return fmt.Errorf("resources/list: %v, %w", resources, err)
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: resources.Resources[0].URI})
	if err != nil || len(read.Contents) == 0 {
		return fmt.Errorf("resources/read %s: %v, %w", resources.Resources[0].URI, read, err)
	}
	done, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "cursus-new-project"},
		Argument: sdk.CompleteParamsArgument{Name: "framework", Value: "x"}})
	if err != nil || len(done.Completion.Values) == 0 {
		return fmt.Errorf("completion/complete: %v, %w", done, err)
	}
	return nil
}

// proxiedCall is a REST tool call whose envelope must be ok; a failure
// shows the status and the body (the proxy's own error page included).
func proxiedCall(t *testing.T, base, tool string, args map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(args)
	resp, err := http.Post(base+"/call/"+tool, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		OK   bool           `json:"ok"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || !env.OK {
		t.Fatalf("%s: %d %.500s", tool, resp.StatusCode, raw)
	}
	return env.Data
}

// BenchmarkReplicasBehindNginx measures REST tool calls from 64 concurrent
// clients through nginx to one and to three replicas (rate limit off):
// latency percentiles and throughput, reported per sub-benchmark.
//
//	go test ./server -run '^$' -bench ReplicasBehindNginx -benchtime 5000x
func BenchmarkReplicasBehindNginx(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			var upstreams []string
			for range n {
				u, _ := countedReplica(b, "bench-replicas-share-this-key", func(c *Config) { c.Limits.RatePerMinute = 0 })
				upstreams = append(upstreams, u)
			}
			base := nginxInFront(b, upstreams)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.Cleanup(client.CloseIdleConnections)
			var mu sync.Mutex
			latencies := make([]time.Duration, 0, b.N)
			var failed atomic.Int64
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					resp, err := client.Post(base+"/call/tools.help", "application/json", strings.NewReader(`{}`))
					if err != nil {
						failed.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						failed.Add(1)
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				latencies = append(latencies, mine...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			if f := failed.Load(); f > 0 {
				b.Fatalf("%d of %d requests failed", f, b.N)
			}
			slices.Sort(latencies)
			pct := func(p float64) float64 {
				return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50_ms")
			b.ReportMetric(pct(0.99), "p99_ms")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
		})
	}
}
