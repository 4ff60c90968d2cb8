package deps

import (
	"strings"
	"testing"
)

// Explain remembers short pairs and answers as explain does, both times;
// long names are scored each time and not kept.
func TestExplainRemembers(t *testing.T) {
	a, b := "processed_data_memo_test", "input_data_memo"
	first, want := Explain(a, b), explain(a, b)
	explained.Lock()
	kept, ok := explained.m[[2]string{a, b}]
	explained.Unlock()
	if !ok || kept != want || first != want || Explain(a, b) != want {
		t.Fatalf("kept %v (%v), first %+v, want %+v", ok, kept, first, want)
	}
	long := strings.Repeat("x", maxExplainedName)
	Explain(long, b)
	explained.Lock()
	_, ok = explained.m[[2]string{long, b}]
	explained.Unlock()
	if ok {
		t.Fatal("a pair longer than maxExplainedName was kept")
	}
}
