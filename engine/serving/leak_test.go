package serving

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// closed, timed-out or cancelled server must stop its reader, its
// request writer and its process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
