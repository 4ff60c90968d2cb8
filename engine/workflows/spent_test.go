package workflows

import (
	"fmt"
	"testing"
	"time"
)

func TestSpentRefusesASecondSpendUntilTheTokenExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewSpent(3, func() time.Time { return now })
	if !s.Spend("a", 1100) || s.Spend("a", 1100) || !s.Was("a") {
		t.Fatal("a token spends once")
	}
	if s.Was("b") || !s.Spend("b", 1200) {
		t.Fatal("another token is its own")
	}
	// Expired, a is forgotten (Open refuses it by then anyway).
	now = time.Unix(1100, 0)
	if !s.Spend("c", 1300) || s.Was("a") || !s.Was("b") {
		t.Fatalf("after a's expiry: a %v b %v", s.Was("a"), s.Was("b"))
	}
	// Past capacity the oldest is forgotten first, never the newest.
	for i := range 5 {
		s.Spend(fmt.Sprint("n", i), 2000)
	}
	if len(s.seen) > 3 || len(s.order) != len(s.seen) || !s.Was("n4") || s.Was("b") {
		t.Fatalf("capacity 3: %d remembered, n4 %v b %v", len(s.seen), s.Was("n4"), s.Was("b"))
	}
}
