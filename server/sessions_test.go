package server

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestSessionsBelongToTheirOpener(t *testing.T) {
	var gauge float64
	tab := newSessions(time.Minute, 0, LimitsConfig{}, func(d float64) { gauge += d })
	id := mustStart(t, tab, "principal:alice")
	if !strings.HasPrefix(id, sessionIDPrefix) || len(id) != len(sessionIDPrefix)+32 {
		t.Fatalf("session id %q", id)
	}
	if !tab.use(id, "principal:alice") {
		t.Fatal("the opener cannot use the session")
	}
	if tab.use(id, "principal:bob") || tab.close(id, "principal:bob") {
		t.Fatal("another caller used or ended the session")
	}
	if _, _, ok := tab.attach(context.Background(), id, "principal:bob"); ok {
		t.Fatal("another caller opened a stream on the session")
	}
	if tab.use("mcp-session-unknown", "principal:alice") {
		t.Fatal("an unknown id is live")
	}
	if gauge != 1 {
		t.Fatalf("gauge %v with one session", gauge)
	}
	if !tab.close(id, "principal:alice") || tab.use(id, "principal:alice") || gauge != 0 {
		t.Fatalf("a closed session is still live (gauge %v)", gauge)
	}
}

func TestSessionsExpireWhenIdle(t *testing.T) {
	clock := time.Unix(1_700_000_000, 0)
	tab := newSessions(time.Minute, 0, LimitsConfig{}, func(float64) {})
	tab.now = func() time.Time { return clock }
	idle := mustStart(t, tab, "a")
	streaming := mustStart(t, tab, "a")
	ctx, release, ok := tab.attach(context.Background(), streaming, "a")
	if !ok {
		t.Fatal("attach")
	}
	// Churn: many sessions opened over ten minutes and never closed.
	for range 10_000 {
		clock = clock.Add(60 * time.Millisecond)
		mustStart(t, tab, "b")
	}
	if n := tab.size(); n > 1600 {
		t.Fatalf("%d sessions live after churn; idle ones are not ended", n)
	}
	if tab.use(idle, "a") {
		t.Fatal("a session idle for ten minutes is still live")
	}
	if !tab.use(streaming, "a") || ctx.Err() != nil {
		t.Fatal("a session with an open stream expired")
	}
	if !tab.close(streaming, "a") {
		t.Fatal("close")
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("ending a session left its stream open")
	}
	release()
}

func TestSessionIDsAreUnique(t *testing.T) {
	tab := newSessions(time.Minute, 0, LimitsConfig{}, func(float64) {})
	seen := map[string]bool{}
	for range 1000 {
		id := mustStart(t, tab, "a")
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
}

// size is the number of live sessions.
func (t *sessions) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}

// mustStart opens a session that the caps allow.
func mustStart(t *testing.T, tab *sessions, owner string) string {
	t.Helper()
	id, refusal := tab.start(owner)
	if refusal != nil {
		t.Fatal(refusal.Error)
	}
	return id
}

// TestUnusedSessionsExpireSooner: a session that saw no request after
// initialize ends after the unused TTL and gives its place back; one that
// was used lives to the idle TTL.
func TestUnusedSessionsExpireSooner(t *testing.T) {
	clock := time.Unix(1_700_000_000, 0)
	var gauge float64
	tab := newSessions(10*time.Minute, time.Minute, LimitsConfig{MaxSessionsPerPrincipal: 2}, func(d float64) { gauge += d })
	tab.now = func() time.Time { return clock }
	unused := mustStart(t, tab, "a")
	used := mustStart(t, tab, "a")
	if !tab.use(used, "a") {
		t.Fatal("use")
	}
	if _, refusal := tab.start("a"); refusal == nil {
		t.Fatal("a third session within a cap of 2")
	}
	clock = clock.Add(61 * time.Second)
	third := mustStart(t, tab, "a") // the sweep ended the unused one
	if tab.use(unused, "a") {
		t.Error("a session unused for over the unused TTL is still live")
	}
	if !tab.use(used, "a") || !tab.use(third, "a") {
		t.Error("a used session ended at the unused TTL")
	}
	if gauge != 2 {
		t.Errorf("gauge %v, want 2", gauge)
	}
}
