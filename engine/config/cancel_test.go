package config

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
)

// TestRequirementsStopsWhenCancelled: a large DAG's requirements and
// configs give the context's error, not a report, once the context ends.
func TestRequirementsStopsWhenCancelled(t *testing.T) {
	s := builtinSchemas(t)
	nodes := make([]string, 2000)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("TabularPreprocessing_j%d", i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := dag.New(nodes, nil)
	if rep, err := Requirements(ctx, g, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("Requirements: %v (report: %v)", err, rep != nil)
	}
	if _, probs, err := s.BuildDAG(ctx, g, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("BuildDAG: %v (%d problems)", err, len(probs))
	}
}
