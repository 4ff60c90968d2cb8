package handlers

import (
	"os"
	"testing"
)

// TestMain keeps the AWS SDK on loopback for every test: no instance
// metadata lookups, and any S3 or SageMaker call a test did not point at
// the fake goes to a closed local port instead of AWS.
func TestMain(m *testing.M) {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
	os.Exit(m.Run())
}
