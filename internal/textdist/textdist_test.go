package textdist

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"num_round", "num_roud", 1}, {"kitten", "sitting", 3}, {"abc", "", 3}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	// Long inputs are not compared: the cost is quadratic.
	if got := Distance(strings.Repeat("a", 300), "a"); got != 300 {
		t.Errorf("long input = %d", got)
	}
}
