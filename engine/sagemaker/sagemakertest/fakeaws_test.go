package sagemakertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

func TestFakeRefusesUnsignedRequests(t *testing.T) {
	f := NewFakeAWS(t)
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/", strings.NewReader(`{"PipelineName":"p"}`))
	req.Header.Set("X-Amz-Target", "SageMaker.CreatePipeline")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(f.Calls()) != 0 {
		t.Fatalf("status %d, calls %d", resp.StatusCode, len(f.Calls()))
	}
}

func TestSchemaLoads(t *testing.T) {
	if Schema(t) == nil {
		t.Fatal("nil schema")
	}
	if err := Validate(t, []byte(`{"Version":"2020-12-01","Steps":[],"Bogus":1}`)); err == nil {
		t.Fatal("unknown top-level key accepted")
	}
}

// TestFakeVerifiesSageMakerSignatures: a SageMaker request passes only
// with a SigV4 signature of the fake's secret over the request as sent, for
// the sagemaker service.
func TestFakeVerifiesSageMakerSignatures(t *testing.T) {
	f := NewFakeAWS(t)
	const body = `{"PipelineName":"p"}`
	send := func(secret, service, sentBody string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, f.URL()+"/", strings.NewReader(sentBody))
		req.Header.Set("X-Amz-Target", "SageMaker.DescribePipeline")
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		sum := sha256.Sum256([]byte(body))
		creds := aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: secret}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// A signed DescribePipeline of a missing pipeline is answered (400 ResourceNotFound).
	if code := send(SecretAccessKey, "sagemaker", body); code != http.StatusBadRequest || f.Count("DescribePipeline") != 1 {
		t.Fatalf("valid signature: status %d, %d calls", code, f.Count("DescribePipeline"))
	}
	for name, code := range map[string]int{
		"another secret":  send("not-the-secret", "sagemaker", body),
		"another service": send(SecretAccessKey, "s3", body),
		"body changed":    send(SecretAccessKey, "sagemaker", `{"PipelineName":"q"}`),
	} {
		if code != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, code)
		}
	}
	if n := len(f.Calls()); n != 1 {
		t.Fatalf("%d calls recorded; refused requests must not be", n)
	}
}
