package server

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// stream, session sweeper, tool call, rate-limit janitor or client
// connection that outlives its test shows up here. It also keeps the AWS
// SDK on loopback: no instance metadata lookups, and any S3 or SageMaker
// call a test did not point at the fake goes to a closed local port.
func TestMain(m *testing.M) {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
	goleak.VerifyTestMain(m)
}
