package sagemakertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FakeAWS is a local stand-in for the S3 (path-style) and SageMaker APIs.
// It refuses requests without a SigV4 Authorization header and SageMaker
// requests whose signature VerifySigV4 rejects or that are not signed for
// the sagemaker service; it records every call and keeps uploaded objects
// and pipelines in memory.
type FakeAWS struct {
	Server *httptest.Server

	mu        sync.Mutex
	objects   map[string][]byte // "bucket/key" → bytes
	pipelines map[string]string // name → definition
	calls     []Call
	failures  map[string]string // operation → AWS error code to return
}

// Call is one recorded request.
type Call struct {
	Service   string // "s3" | "sagemaker"
	Operation string // HeadObject, PutObject, DescribePipeline, CreatePipeline, …
	Target    string // bucket/key for S3, pipeline name for SageMaker
	Body      []byte // payload (the object for PutObject, the JSON request for SageMaker)
	// ContentType is the request's Content-Type header.
	ContentType string
}

// NewFakeAWS starts the fake; it stops with the test.
func NewFakeAWS(t testing.TB) *FakeAWS {
	f := &FakeAWS{objects: map[string][]byte{}, pipelines: map[string]string{}, failures: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Server.Close)
	return f
}

// URL is the endpoint to give both clients.
func (f *FakeAWS) URL() string { return f.Server.URL }

// Fail makes every later call of operation fail with the AWS error code.
func (f *FakeAWS) Fail(operation, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[operation] = code
}

// Calls returns the recorded calls.
func (f *FakeAWS) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Object returns an uploaded object.
func (f *FakeAWS) Object(bucket, key string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.objects[bucket+"/"+key]
	return b, ok
}

// PutObject stores an object as if someone had uploaded it.
func (f *FakeAWS) PutObject(bucket, key string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[bucket+"/"+key] = data
}

// Keys lists the stored objects' "bucket/key" names in order.
func (f *FakeAWS) Keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.objects))
	for k := range f.objects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Pipeline returns a stored pipeline definition.
func (f *FakeAWS) Pipeline(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.pipelines[name]
	return d, ok
}

// Count returns how many calls of operation were made.
func (f *FakeAWS) Count(operation string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Operation == operation {
			n++
		}
	}
	return n
}

func (f *FakeAWS) serve(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=") || !strings.Contains(auth, "Signature=") {
		writeJSONError(w, http.StatusForbidden, "MissingAuthenticationToken", "request is not SigV4-signed")
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		if sig, err := VerifySigV4(r, body); err != nil || sig.Service != "sagemaker" {
			writeJSONError(w, http.StatusForbidden, "InvalidSignatureException", fmt.Sprintf("signature %+v: %v", sig, err))
			return
		}
		f.serveSageMaker(w, strings.TrimPrefix(target, "SageMaker."), r.Header.Get("Content-Type"), body)
		return
	}
	f.serveS3(w, r, body)
}

// readBody decodes the aws-chunked framing the S3 client uses for
// streaming uploads with trailing checksums.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
		return raw, nil
	}
	var out bytes.Buffer
	br := bufio.NewReader(bytes.NewReader(raw))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("aws-chunked: %w", err)
		}
		sizeHex := strings.TrimSpace(strings.SplitN(line, ";", 2)[0])
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("aws-chunked size %q: %w", sizeHex, err)
		}
		if n == 0 {
			return out.Bytes(), nil
		}
		if _, err := io.CopyN(&out, br, n); err != nil {
			return nil, err
		}
		if _, err := br.ReadString('\n'); err != nil {
			return nil, err
		}
	}
}

func (f *FakeAWS) record(c Call) (failCode string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	return f.failures[c.Operation]
}

func (f *FakeAWS) serveS3(w http.ResponseWriter, r *http.Request, body []byte) {
	target := strings.TrimPrefix(r.URL.Path, "/")
	op := map[string]string{http.MethodHead: "HeadObject", http.MethodPut: "PutObject", http.MethodGet: "GetObject"}[r.Method]
	if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" && target != "" && !strings.Contains(strings.TrimSuffix(target, "/"), "/") {
		op, target = "ListObjectsV2", strings.TrimSuffix(target, "/")
	}
	if op == "" || (op != "ListObjectsV2" && !strings.Contains(target, "/")) {
		http.Error(w, "unsupported S3 request", http.StatusBadRequest)
		return
	}
	if code := f.record(Call{Service: "s3", Operation: op, Target: target, Body: body}); code != "" {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected failure</Message></Error>", code)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "ListObjectsV2":
		f.listObjects(w, target, r.URL.Query().Get("prefix"), r.URL.Query().Get("continuation-token"))
	case "HeadObject", "GetObject":
		data, ok := f.objects[target]
		if !ok {
			if op == "GetObject" {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>")
				return
			}
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if op == "GetObject" {
			_, _ = w.Write(data)
		}
	case "PutObject":
		f.objects[target] = body
		w.Header().Set("ETag", `"etag"`)
	}
}

// listPage is how many keys one ListObjectsV2 answer holds, small so
// that callers' paging is exercised.
const listPage = 2

// listObjects answers ListObjectsV2 for bucket and prefix in key order,
// listPage keys a page; the continuation token is the last key sent.
// The caller holds f.mu.
func (f *FakeAWS) listObjects(w http.ResponseWriter, bucket, prefix, after string) {
	var keys []string
	for k := range f.objects {
		if key, ok := strings.CutPrefix(k, bucket+"/"); ok && strings.HasPrefix(key, prefix) && key > after {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	truncated := len(keys) > listPage
	if truncated {
		keys = keys[:listPage]
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	fmt.Fprintf(&b, "<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><IsTruncated>%t</IsTruncated>", xmlText(bucket), xmlText(prefix), len(keys), truncated)
	for _, k := range keys {
		fmt.Fprintf(&b, "<Contents><Key>%s</Key><Size>%d</Size></Contents>", xmlText(k), len(f.objects[bucket+"/"+k]))
	}
	if truncated {
		fmt.Fprintf(&b, "<NextContinuationToken>%s</NextContinuationToken>", xmlText(keys[len(keys)-1]))
	}
	b.WriteString("</ListBucketResult>")
	w.Header().Set("Content-Type", "application/xml")
	_, _ = io.WriteString(w, b.String())
}

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (f *FakeAWS) serveSageMaker(w http.ResponseWriter, op, contentType string, body []byte) {
	var req struct {
		PipelineName       string
		PipelineDefinition string
		RoleArn            string
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	if code := f.record(Call{Service: "sagemaker", Operation: op, Target: req.PipelineName, Body: body, ContentType: contentType}); code != "" {
		writeJSONError(w, http.StatusBadRequest, code, "injected failure")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	arn := "arn:aws:sagemaker:us-east-1:111122223333:pipeline/" + strings.ToLower(req.PipelineName)
	switch op {
	case "DescribePipeline":
		if _, ok := f.pipelines[req.PipelineName]; !ok {
			writeJSONError(w, http.StatusBadRequest, "ResourceNotFound", "Pipeline "+req.PipelineName+" does not exist")
			return
		}
		writeJSON(w, map[string]any{"PipelineArn": arn, "PipelineName": req.PipelineName})
	case "CreatePipeline":
		if _, ok := f.pipelines[req.PipelineName]; ok {
			writeJSONError(w, http.StatusBadRequest, "ResourceInUse", "Pipeline already exists")
			return
		}
		f.pipelines[req.PipelineName] = req.PipelineDefinition
		writeJSON(w, map[string]any{"PipelineArn": arn})
	case "UpdatePipeline":
		if _, ok := f.pipelines[req.PipelineName]; !ok {
			writeJSONError(w, http.StatusBadRequest, "ResourceNotFound", "Pipeline does not exist")
			return
		}
		f.pipelines[req.PipelineName] = req.PipelineDefinition
		writeJSON(w, map[string]any{"PipelineArn": arn})
	default:
		writeJSONError(w, http.StatusBadRequest, "UnknownOperationException", op)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}
