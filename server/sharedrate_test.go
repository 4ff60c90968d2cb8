package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// redisServer is Debian's redis-server on a free loopback port, without
// persistence, in a temporary directory; kill stops it at once.
type redisServer struct {
	addr string
	kill func()
}

func startRedis(t *testing.T) redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if _, statErr := os.Stat("/usr/bin/redis-server"); statErr != nil {
			t.Skip("redis-server is not installed (scripts/test.sh installs it)")
		}
		bin = "/usr/bin/redis-server"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
	}
	t.Cleanup(kill)
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("redis-server exited:\n%s", out.Bytes())
		default:
		}
		if client.Ping(context.Background()).Err() == nil {
			return redisServer{addr: addr, kill: kill}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not answer on %s:\n%s", addr, out.Bytes())
		}
	}
}

// liveStoreTimeout bounds the store calls of replicas whose Redis is up.
// A loaded machine can hold a call for hundreds of milliseconds; a call
// that timed out would fail open onto the replica's own bucket and admit
// calls the shared budget refuses, which is not what these tests measure.
const liveStoreTimeout = 10 * time.Second

// sharedReplica is a replica served on a loopback listener whose rate
// limit is perMinute per caller, kept in the Redis at addr; timeout bounds
// each store call.
func sharedReplica(t *testing.T, addr, prefix string, perMinute int, timeout time.Duration, log zerolog.Logger) string {
	t.Helper()
	srv := loggedReplicaServer(t, "shared-rate-replicas", log, func(c *Config) {
		c.Limits.RatePerMinute = perMinute
		c.Limits.SharedStore = sharedStoreRedis
		c.Redis.Address = addr
		c.Redis.KeyPrefix = prefix
		c.Redis.DialTimeout = timeout
		c.Redis.Timeout = timeout
	})
	if srv.rateStore == nil {
		t.Fatal("limits.shared_store redis made no shared limiter")
	}
	t.Cleanup(srv.rateStore.close)
	return startHTTP(t, srv).URL
}

// helpAs calls tools.help on base as the caller at address caller (the
// replicas trust 127.0.0.1 as a proxy); it returns the status, and fails
// the test on a 429 that is not the rate limit's.
func helpAs(t *testing.T, client *http.Client, base, caller string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/call/tools.help", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", caller)
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests:
		if !strings.Contains(string(body), "limits.rate_per_minute") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 not from the rate limit, or without Retry-After: %s", body)
		}
	default:
		t.Errorf("tools.help: %d %s", resp.StatusCode, body)
	}
	return resp.StatusCode
}

// TestSharedRateLimitAcrossReplicas: three replicas sharing one Redis
// admit each caller's limits.rate_per_minute once between them, not once
// each. Two callers send twice their limit, spread round robin over the
// replicas, from six clients at once; each is admitted the limit plus what
// the bucket refilled between the first call sent and the last (one call
// a second at 60 a minute), within 1% of it (at least one call).
func TestSharedRateLimitAcrossReplicas(t *testing.T) {
	const perMinute, sent = 60, 120
	store := startRedis(t)
	prefix := fmt.Sprintf("test-%d:", time.Now().UnixNano())
	var bases []string
	for range 3 {
		bases = append(bases, sharedReplica(t, store.addr, prefix, perMinute, liveStoreTimeout, zerolog.New(io.Discard)))
	}
	callers := []string{"198.51.100.1", "198.51.100.2"}
	admitted := make([]atomic.Int64, len(callers))
	client := &http.Client{Timeout: 30 * time.Second}
	// The bucket refills while calls are decided, which is after the first
	// call was sent and before the last answer came back; on a loaded
	// machine the two ends can be far apart, so the admitted count must
	// lie between the refills of the shortest and the longest window the
	// decisions can have spanned.
	var mu sync.Mutex
	var firstSent, lastSent, firstAnswer, lastAnswer time.Time
	mark := func(earliest, latest *time.Time) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if earliest.IsZero() || now.Before(*earliest) {
			*earliest = now
		}
		if now.After(*latest) {
			*latest = now
		}
	}
	var wg sync.WaitGroup
	for c, caller := range callers {
		for w := range 3 {
			wg.Go(func() {
				for i := w; i < sent; i += 3 {
					mark(&firstSent, &lastSent)
					code := helpAs(t, client, bases[i%len(bases)], caller)
					mark(&firstAnswer, &lastAnswer)
					if code == http.StatusOK {
						admitted[c].Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	for _, base := range bases {
		if errs := counterAt(t, base, "cursus_rate_store_errors_total"); errs != 0 {
			t.Fatalf("%s: %v store errors: a replica limited on its own part of the time", base, errs)
		}
	}
	perSecond := float64(perMinute) / 60
	least := perMinute + max(0, lastSent.Sub(firstAnswer).Seconds())*perSecond
	most := perMinute + lastAnswer.Sub(firstSent).Seconds()*perSecond
	if most >= sent {
		t.Fatalf("the calls took %v: the bucket could refill for all %d, so sharing cannot be told from not sharing", lastAnswer.Sub(firstSent), sent)
	}
	for c, caller := range callers {
		got := float64(admitted[c].Load())
		t.Logf("caller %s: %v admitted of %d (limit %d, refilled between %.2f and %.2f)", caller, got, sent, perMinute, least-perMinute, most-perMinute)
		if got < math.Floor(least)-1 || got > math.Ceil(most)+1 {
			t.Errorf("caller %s: %v calls admitted by three replicas sharing a %d/min limit, want %.2f to %.2f", caller, got, perMinute, least, most)
		}
	}
}

// TestSharedRateLimitFailsOpenWhenStoreDies: a caller spends its shared
// budget on replica A and is refused on replica B; then Redis is killed.
// Calls go on at once (no hang): B limits the caller on its own, at the
// full limit, logs the outage once and counts it in
// cursus_rate_store_errors_total.
func TestSharedRateLimitFailsOpenWhenStoreDies(t *testing.T) {
	const perMinute = 20
	store := startRedis(t)
	prefix := fmt.Sprintf("test-%d:", time.Now().UnixNano())
	logs := &syncBuffer{}
	a := sharedReplica(t, store.addr, prefix, perMinute, liveStoreTimeout, zerolog.New(io.Discard))
	b := sharedReplica(t, store.addr, prefix, perMinute, liveStoreTimeout, zerolog.New(logs))
	client := &http.Client{Timeout: 30 * time.Second}
	const caller = "198.51.100.7"
	for i := range perMinute {
		if code := helpAs(t, client, a, caller); code != http.StatusOK {
			t.Fatalf("call %d on A: %d, want 200", i+1, code)
		}
	}
	if code := helpAs(t, client, b, caller); code != http.StatusTooManyRequests {
		t.Fatalf("B admitted a call after A spent the shared budget: %d", code)
	}

	store.kill()
	admitted := 0
	for range perMinute + 5 {
		start := time.Now()
		if helpAs(t, client, b, caller) == http.StatusOK {
			admitted++
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("a call with the store down took %v", took)
		}
	}
	// The local bucket refills one call every 3 s meanwhile.
	if admitted < perMinute || admitted > perMinute+1 {
		t.Errorf("with the store down B admitted %d of %d calls, want its own limit %d", admitted, perMinute+5, perMinute)
	}
	if n := strings.Count(logs.String(), "rate limit store unreachable"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, logs.String())
	}
	if errs := counterAt(t, b, "cursus_rate_store_errors_total"); errs < 1 {
		t.Errorf("cursus_rate_store_errors_total = %v after the store died", errs)
	}
}

// TestSharedRateLimitStoreThatHangs: a store that accepts connections and
// never answers costs a call the redis timeouts, not a hang; the call is
// admitted.
func TestSharedRateLimitStoreThatHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var held sync.WaitGroup
	var conns sync.Map
	held.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true) // read nothing, answer nothing
		}
	})
	t.Cleanup(func() {
		ln.Close()
		held.Wait()
		conns.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
	})
	base := sharedReplica(t, ln.Addr().String(), "hang:", 5, 200*time.Millisecond, zerolog.New(io.Discard))
	client := &http.Client{Timeout: 30 * time.Second}
	start := time.Now()
	if code := helpAs(t, client, base, "198.51.100.9"); code != http.StatusOK {
		t.Fatalf("call with a silent store: %d, want 200 (fail open)", code)
	}
	// dial_timeout + timeout are 400ms; leave room for a loaded machine.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("call with a silent store took %v", took)
	}
}

// counterAt reads an unlabelled counter from base's /metrics.
func counterAt(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("%s not in /metrics", name)
	return 0
}
