package compiler

import (
	"context"
	"errors"
	"testing"
)

// TestCompilerStopsWhenCancelled: binding nodes to configs, the preview,
// the validation report and the compile give the context's error once it
// has ended.
func TestCompilerStopsWhenCancelled(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := map[string]func() error{
		"Compile":           func() error { _, err := Compile(ctx, in); return err },
		"PreviewResolution": func() error { _, err := PreviewResolution(ctx, in); return err },
		"Bind":              func() error { _, err := Bind(ctx, in); return err },
	}
	for name, run := range runs {
		if err := run(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
		}
	}
	if v := Validate(ctx, in); v.IsValid {
		t.Errorf("Validate with a cancelled context passed: %+v", v)
	}
}
