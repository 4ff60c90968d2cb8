package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestSpentRefusesASecondSpendUntilTheTokenExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewSpent(3, func() time.Time { return now })
	ctx := context.Background()
	spend := func(id string, until int64) bool {
		ok, err := s.Spend(ctx, id, time.Unix(until, 0))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	was := func(id string) bool {
		ok, err := s.Was(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !spend("a", 1100) || spend("a", 1100) || !was("a") {
		t.Fatal("a token spends once")
	}
	if was("b") || !spend("b", 1200) {
		t.Fatal("another token is its own")
	}
	// Expired, a is forgotten (Open refuses it by then anyway).
	now = time.Unix(1100, 0)
	if !spend("c", 1300) || was("a") || !was("b") {
		t.Fatalf("after a's expiry: a %v b %v", was("a"), was("b"))
	}
	// Past capacity the oldest is forgotten first, never the newest.
	for i := range 5 {
		spend(fmt.Sprint("n", i), 2000)
	}
	if len(s.seen) > 3 || len(s.order) != len(s.seen) || !was("n4") || was("b") {
		t.Fatalf("capacity 3: %d remembered, n4 %v b %v", len(s.seen), was("n4"), was("b"))
	}
}

func TestSpentIDIsADigestOfTheToken(t *testing.T) {
	a, b := SpentID("token-a"), SpentID("token-b")
	if a == b || len(a) != 64 || a != SpentID("token-a") {
		t.Fatalf("ids %q and %q", a, b)
	}
}
