package sagemaker

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

func fakeClient(t *testing.T, f *sagemakertest.FakeAWS) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), ClientOptions{
		Region: "us-east-1", S3Endpoint: f.URL(), SageMakerEndpoint: f.URL(), MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(sagemakertest.AccessKeyID, sagemakertest.SecretAccessKey, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestUploadSkipsExisting(t *testing.T) {
	f := sagemakertest.NewFakeAWS(t)
	c := fakeClient(t, f)
	ctx := context.Background()
	up, err := c.Upload(ctx, "bucket", "p/code/abc/x.py", []byte("print(1)\n"))
	if err != nil || !up {
		t.Fatalf("first upload: %v %v", up, err)
	}
	if got, ok := f.Object("bucket", "p/code/abc/x.py"); !ok || string(got) != "print(1)\n" {
		t.Fatalf("stored %q %v", got, ok)
	}
	up, err = c.Upload(ctx, "bucket", "p/code/abc/x.py", []byte("print(1)\n"))
	if err != nil || up {
		t.Fatalf("second upload should be skipped: %v %v", up, err)
	}
	if n := f.Count("PutObject"); n != 1 {
		t.Fatalf("PutObject called %d times", n)
	}
}

func TestUpsertCreatesThenUpdates(t *testing.T) {
	f := sagemakertest.NewFakeAWS(t)
	c := fakeClient(t, f)
	ctx := context.Background()
	def, err := Encode(sampleDefinition())
	if err != nil {
		t.Fatal(err)
	}
	req := PipelineRequest{Name: "p-1-0-pipeline", Definition: def, RoleARN: testRole}
	res, err := c.UpsertPipeline(ctx, req)
	if err != nil || !res.Created || res.PipelineARN == "" {
		t.Fatalf("create: %+v %v", res, err)
	}
	res, err = c.UpsertPipeline(ctx, req)
	if err != nil || res.Created {
		t.Fatalf("update: %+v %v", res, err)
	}
	if f.Count("CreatePipeline") != 1 || f.Count("UpdatePipeline") != 1 {
		t.Fatalf("calls: %+v", f.Calls())
	}
	for _, call := range f.Calls() {
		if call.Service == "sagemaker" && call.ContentType != "application/x-amz-json-1.1" {
			t.Errorf("%s sent as %q", call.Operation, call.ContentType)
		}
		if call.Operation != "CreatePipeline" {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(call.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body["RoleArn"] != testRole || body["PipelineDefinition"] != string(def) || body["ClientRequestToken"] == "" {
			t.Fatalf("CreatePipeline body: %v", body)
		}
	}
	stored, _ := f.Pipeline("p-1-0-pipeline")
	sagemakertest.MustValidate(t, []byte(stored))
}

func TestAWSErrorCodeSurfaces(t *testing.T) {
	f := sagemakertest.NewFakeAWS(t)
	f.Fail("DescribePipeline", "AccessDeniedException")
	c := fakeClient(t, f)
	_, err := c.UpsertPipeline(context.Background(), PipelineRequest{Name: "p", Definition: []byte("{}"), RoleARN: testRole})
	var ae *AWSError
	if !errors.As(err, &ae) || ae.Code != "AccessDeniedException" {
		t.Fatalf("want AWSError AccessDeniedException, got %v", err)
	}
	f2 := sagemakertest.NewFakeAWS(t)
	f2.Fail("PutObject", "AccessDenied")
	_, err = fakeClient(t, f2).Upload(context.Background(), "b", "k", []byte("x"))
	if !errors.As(err, &ae) || ae.Code != "AccessDenied" {
		t.Fatalf("want AWSError AccessDenied, got %v", err)
	}
}

// TestUnreachableEndpoint: a closed port is an UnreachableError naming the
// service and the cause, never the endpoint's URL.
func TestUnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close()
	c, err := NewClient(context.Background(), ClientOptions{
		Region: "us-east-1", S3Endpoint: endpoint, SageMakerEndpoint: endpoint, MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, upErr := c.Upload(context.Background(), "bucket", "p/code/x.py", []byte("x"))
	_, smErr := c.UpsertPipeline(context.Background(), PipelineRequest{Name: "p", Definition: []byte("{}"), RoleARN: testRole})
	for service, err := range map[string]error{"S3": upErr, "SageMaker": smErr} {
		u, ok := errors.AsType[*UnreachableError](err)
		if !ok || u.Service != service || u.Reason != "connection refused" {
			t.Errorf("%s: want UnreachableError (connection refused), got %T %v", service, err, err)
		}
		if err != nil && (strings.Contains(err.Error(), "http://") || strings.Contains(err.Error(), l.Addr().String())) {
			t.Errorf("%s: the error names the endpoint: %v", service, err)
		}
	}
}

func TestGetListPut(t *testing.T) {
	f := sagemakertest.NewFakeAWS(t)
	c := fakeClient(t, f)
	ctx := context.Background()
	for _, k := range []string{"d/a", "d/b", "d/c/e", "dx/f"} {
		if err := c.Put(ctx, "bk", k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.Get(ctx, "bk", "d/c/e", 0)
	if err != nil || string(got) != "data of d/c/e" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if _, err := c.Get(ctx, "bk", "d/none", 0); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "s3://bk/d/none") {
		t.Fatalf("missing object: %v", err)
	}
	if _, err := c.Get(ctx, "bk", "d/a", 4); !errors.As(err, new(*ObjectTooLargeError)) {
		t.Fatalf("over the limit: %v", err)
	}
	objs, err := c.List(ctx, "bk", "d/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	// Three keys over the fake's two-key pages: the listing follows them.
	if strings.Join(keys, ",") != "d/a,d/b,d/c/e" || objs[0].Size != int64(len("data of d/a")) || f.Count("ListObjectsV2") != 2 {
		t.Fatalf("List = %+v (%d calls)", objs, f.Count("ListObjectsV2"))
	}
}
