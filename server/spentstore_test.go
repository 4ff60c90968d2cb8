package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// spentReplica serves the production namespaces with workflow key key;
// with a Redis address its spent run tokens are kept there (as cmd wires
// limits.shared_store: redis), else in its own memory.
func spentReplica(t *testing.T, key, redisAddr, prefix string, log zerolog.Logger) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Workspace.Root = t.TempDir()
	opts := handlers.Options{WorkspaceRoot: cfg.Workspace.Root, WorkflowKey: []byte(key)}
	if redisAddr != "" {
		cfg.Limits.SharedStore = sharedStoreRedis
		cfg.Redis.Address, cfg.Redis.KeyPrefix = redisAddr, prefix
		cfg.Redis.DialTimeout, cfg.Redis.Timeout = 200*time.Millisecond, 200*time.Millisecond
		store := NewSpentStore(cfg, log)
		if store == nil {
			t.Fatal("limits.shared_store redis made no spent token store")
		}
		t.Cleanup(func() { _ = store.Close() })
		opts.SpentStore = store
	}
	deps, err := handlers.NewDeps(opts)
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
		// The shared store also carries this replica's sessions.
		if srv.shared != nil {
			srv.shared.close()
		}
	})
	return startHTTP(t, srv).URL
}

// submitRaw posts workflow.submit and returns the status, the envelope's
// code and data.
func submitRaw(t *testing.T, base string, run any) (int, string, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"run": run, "stage": "Constrain", "content": map[string]any{"dag": exampleDocument(t, "dag.json")}})
	client := &http.Client{Timeout: 30 * time.Second}
	start := time.Now()
	resp, err := client.Post(base+"/call/workflow.submit", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("workflow.submit took %v", took)
	}
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Code string         `json:"code"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("workflow.submit answered %d %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, env.Code, env.Data
}

// TestSpentRunTokensSharedAcrossReplicas: with limits.shared_store redis,
// a run token spent by a submission on replica A is refused on replica B
// as run_token_spent (409), and two submissions of one token on A and B
// at once move the run once between them. Without the shared store B
// does not know A spent the token (the check that the store is what
// refuses it). When the store dies, a submission is refused at once as
// run_store_unavailable (503), never admitted unchecked.
func TestSpentRunTokensSharedAcrossReplicas(t *testing.T) {
	const key = "replicas-share-this-key-0123"
	store := startRedis(t)
	prefix := fmt.Sprintf("test-%d:", time.Now().UnixNano())
	logs := &syncBuffer{}
	a := spentReplica(t, key, store.addr, prefix, zerolog.New(io.Discard))
	b := spentReplica(t, key, store.addr, prefix, zerolog.New(logs))
	alone := spentReplica(t, key, "", "", zerolog.New(io.Discard))

	started := restWorkflowCall(t, a, "workflow.start", map[string]any{"workflow": "cursus-configure-pipeline"})
	status, code, passed := submitRaw(t, a, started["run"])
	if status != http.StatusOK || passed["status"] != "passed" {
		t.Fatalf("Constrain on A: %d %s %v", status, code, passed)
	}
	if status, code, _ := submitRaw(t, b, started["run"]); status != http.StatusConflict || code != registry.CodeRunTokenSpent {
		t.Fatalf("the token A spent, replayed on B: %d %s, want 409 %s", status, code, registry.CodeRunTokenSpent)
	}
	if status, code, _ := submitRaw(t, a, started["run"]); status != http.StatusConflict || code != registry.CodeRunTokenSpent {
		t.Fatalf("the token A spent, replayed on A: %d %s, want 409 %s", status, code, registry.CodeRunTokenSpent)
	}
	// A replica without the store knows nothing of it.
	if status, code, _ := submitRaw(t, alone, started["run"]); status != http.StatusOK {
		t.Fatalf("a replica with its own memory refused a token it never saw spent: %d %s", status, code)
	}

	// One fresh token sent to A and B at once: one submission wins.
	fresh := restWorkflowCall(t, b, "workflow.start", map[string]any{"workflow": "cursus-configure-pipeline"})["run"]
	type answer struct {
		status int
		code   string
	}
	answers := make(chan answer, 2)
	for _, base := range []string{a, b} {
		go func() {
			status, code, _ := submitRaw(t, base, fresh)
			answers <- answer{status, code}
		}()
	}
	won, refused := 0, 0
	for range 2 {
		switch got := <-answers; {
		case got.status == http.StatusOK:
			won++
		case got.status == http.StatusConflict && got.code == registry.CodeRunTokenSpent:
			refused++
		default:
			t.Errorf("racing submission: %d %s", got.status, got.code)
		}
	}
	if won != 1 || refused != 1 {
		t.Errorf("one token on two replicas at once: %d passed, %d refused; want 1 and 1", won, refused)
	}

	// The store dies: B refuses rather than admits unchecked.
	next := restWorkflowCall(t, b, "workflow.start", map[string]any{"workflow": "cursus-configure-pipeline"})["run"]
	store.kill()
	for range 2 {
		if status, code, _ := submitRaw(t, b, next); status != http.StatusServiceUnavailable || code != registry.CodeRunStoreUnavailable {
			t.Fatalf("with the store down B answered %d %s, want 503 %s", status, code, registry.CodeRunStoreUnavailable)
		}
	}
	if n := strings.Count(logs.String(), "spent run token store unreachable"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestSpentStoreKeyLivesAsLongAsTheToken: the store keeps a spent id
// under its prefix until the token would expire, and no longer; a second
// Spend of it is refused.
func TestSpentStoreKeyLivesAsLongAsTheToken(t *testing.T) {
	store := startRedis(t)
	cfg := DefaultConfig()
	cfg.Limits.SharedStore = sharedStoreRedis
	cfg.Redis.Address, cfg.Redis.KeyPrefix = store.addr, fmt.Sprintf("test-%d:", time.Now().UnixNano())
	s := NewSpentStore(cfg, zerolog.New(io.Discard))
	defer s.Close()
	ctx := t.Context()
	id := workflows.SpentID("some token")
	until := time.Now().Add(time.Hour)
	if ok, err := s.Spend(ctx, id, until); err != nil || !ok {
		t.Fatalf("first spend: %v %v", ok, err)
	}
	if ok, err := s.Spend(ctx, id, until); err != nil || ok {
		t.Fatalf("second spend: %v %v, want refused", ok, err)
	}
	if was, err := s.Was(ctx, id); err != nil || !was {
		t.Fatalf("was: %v %v", was, err)
	}
	if was, err := s.Was(ctx, workflows.SpentID("another token")); err != nil || was {
		t.Fatalf("another token was spent: %v %v", was, err)
	}
	ttl, err := s.client.TTL(ctx, cfg.Redis.KeyPrefix+"spent:"+id).Result()
	if err != nil || ttl > time.Hour || ttl < 59*time.Minute {
		t.Fatalf("key TTL %v (%v), want the token's remaining hour", ttl, err)
	}
}
