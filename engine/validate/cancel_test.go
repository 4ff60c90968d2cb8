package validate

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestAnalyzeScriptStopsWhenCancelled: a megabyte script is not tokenized
// to its end once the context has ended, and the check of it reports the
// context's error rather than a finding.
func TestAnalyzeScriptStopsWhenCancelled(t *testing.T) {
	src := []byte("import os\n" + strings.Repeat("x = os.environ['A'] + f(1, [2, 3], {'k': \"v\"})  # c\n", 20000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AnalyzeScript(ctx, "big.py", src); !errors.Is(err, context.Canceled) {
		t.Fatalf("AnalyzeScript: %v, want context.Canceled", err)
	}
	if fs, _, err := CheckScriptSource(ctx, mustInterface(t, prepInterface), "big.py", src); !errors.Is(err, context.Canceled) {
		t.Fatalf("CheckScriptSource: %v (findings %v), want context.Canceled", err, fs)
	}
}
