package sagemakertest

import (
	"net/http"
	"strings"
	"testing"
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
