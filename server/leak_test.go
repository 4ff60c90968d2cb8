package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// stream, tool call, rate-limit janitor or client connection that outlives
// its test shows up here.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// A stateful StreamableHTTPServer sweeps idle sessions until its
		// Shutdown, which ListenAndServe calls on exit; the test helpers
		// that build stateful servers without ListenAndServe
		// (newTestEnv, newOpsEnv) do not call it yet. Remove this once
		// they shut the stream down in t.Cleanup.
		goleak.IgnoreTopFunction("github.com/mark3labs/mcp-go/server.(*StreamableHTTPServer).startSessionSweeper.func1"),
	)
}
