package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// TestPerServiceAWSEndpoints: aws.s3_endpoint and aws.sagemaker_endpoint
// send an upsert's uploads and its pipeline calls to different endpoints
// (VPC endpoints differ per service), each over aws.endpoint.
func TestPerServiceAWSEndpoints(t *testing.T) {
	s3Fake, smFake, shared := sagemakertest.NewFakeAWS(t), sagemakertest.NewFakeAWS(t), sagemakertest.NewFakeAWS(t)
	// Static credentials and no other source, so nothing leaves loopback.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	root := t.TempDir()
	rel := filepath.Join("examples", "xgboost-tabular")
	if err := os.CopyFS(filepath.Join(root, rel), os.DirFS(filepath.Join("..", "..", rel))); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, map[string]string{
		"CURSUS_AWS_REGION": "us-east-1", "CURSUS_AWS_ENDPOINT": shared.URL(),
		"CURSUS_AWS_S3_ENDPOINT": s3Fake.URL(), "CURSUS_AWS_SAGEMAKER_ENDPOINT": smFake.URL(),
	}, "call", "--workspace-root", root, "compile.dag",
		`{"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json", "upsert": true}`)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if s3Fake.Count("PutObject") == 0 || s3Fake.Count("CreatePipeline") != 0 {
		t.Errorf("S3 endpoint: %d uploads, %d pipeline creations; want uploads only", s3Fake.Count("PutObject"), s3Fake.Count("CreatePipeline"))
	}
	if smFake.Count("CreatePipeline") != 1 || smFake.Count("PutObject") != 0 {
		t.Errorf("SageMaker endpoint: %d pipeline creations, %d uploads; want one creation only", smFake.Count("CreatePipeline"), smFake.Count("PutObject"))
	}
	if n := len(shared.Calls()); n != 0 {
		t.Errorf("aws.endpoint got %d calls; the per-service endpoints win", n)
	}
}
