package server

import (
	"testing"
	"time"
)

func TestSessionIDsForgetTerminatedSessions(t *testing.T) {
	clock := time.Unix(1_700_000_000, 0)
	m := newSessionIDs(time.Minute)
	m.now = func() time.Time { return clock }

	first := m.Generate()
	if terminated, err := m.Validate(first); terminated || err != nil {
		t.Fatalf("live session: terminated=%v err=%v", terminated, err)
	}
	if _, err := m.Validate("mcp-session-unknown"); err == nil {
		t.Fatal("unknown id validated")
	}
	if _, err := m.Validate("not-ours"); err == nil {
		t.Fatal("foreign id validated")
	}
	m.Terminate(first)
	if terminated, _ := m.Validate(first); !terminated {
		t.Fatal("terminated session not reported as terminated")
	}
	// Churn: many sessions opened and ended over ten minutes.
	for i := 0; i < 10_000; i++ {
		clock = clock.Add(60 * time.Millisecond)
		m.Terminate(m.Generate())
	}
	// Only the last minute's terminated ids (~1000, plus one sweep
	// interval's worth) may remain.
	if n := m.size(); n > 1600 {
		t.Fatalf("%d ids remembered after churn; terminated ids are not forgotten", n)
	}
	if _, err := m.Validate(first); err == nil {
		t.Fatal("an id terminated long ago still validates")
	}
}

func TestSessionIDsAreUnique(t *testing.T) {
	m := newSessionIDs(time.Minute)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := m.Generate()
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
}

// size is the number of ids remembered.
func (m *sessionIDs) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live) + len(m.terminated)
}
