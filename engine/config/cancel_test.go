package config

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
)

// TestRequirementsStopsWhenCancelled: a large DAG's requirements give the
// context's error, not a report, once the context ends.
func TestRequirementsStopsWhenCancelled(t *testing.T) {
	s := builtinSchemas(t)
	nodes := make([]string, 2000)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("TabularPreprocessing_j%d", i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, err := Requirements(ctx, dag.New(nodes, nil), s); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v (report: %v)", err, rep != nil)
	}
}
