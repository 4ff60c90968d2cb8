package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// stream, session sweeper, tool call, rate-limit janitor or client
// connection that outlives its test shows up here.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
