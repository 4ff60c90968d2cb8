package sagemaker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// received is one request a test server got.
type received struct {
	method, path, target, contentType string
	body                              map[string]any
	signature                         sagemakertest.Signature
	signatureErr                      error
}

// recorder is a loopback SageMaker stand-in whose answers the test
// scripts: answer gets the attempt number (1-based, over all operations).
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
}

func newRecorder(t *testing.T, answer func(n int, w http.ResponseWriter, r received)) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		got := received{method: r.Method, path: r.URL.Path, target: r.Header.Get("X-Amz-Target"), contentType: r.Header.Get("Content-Type")}
		got.signature, got.signatureErr = sagemakertest.VerifySigV4(r, data)
		if err := json.Unmarshal(data, &got.body); err != nil {
			t.Errorf("request body %q: %v", data, err)
		}
		rec.mu.Lock()
		rec.got = append(rec.got, got)
		n := len(rec.got)
		rec.mu.Unlock()
		answer(n, w, got)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) requests() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.got...)
}

// answerJSON writes an awsJson answer.
func answerJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// noBackoff retries at once.
var noBackoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })

// testAPI is the client over url with the SDK's standard retryer of
// maxAttempts attempts and backoff.
func testAPI(t *testing.T, url string, maxAttempts int, backoff retry.BackoffDelayer) *sageMakerAPI {
	t.Helper()
	cfg := aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(sagemakertest.AccessKeyID, sagemakertest.SecretAccessKey, ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts, o.Backoff = maxAttempts, backoff })
		}}
	api := newSageMakerAPI(context.Background(), cfg, url)
	if api.err != nil {
		t.Fatal(api.err)
	}
	return api
}

// TestSageMakerRequests: each operation is a signed POST to / with the
// awsJson 1.1 content type, the SageMaker.<operation> target and the
// members the generated client sends.
func TestSageMakerRequests(t *testing.T) {
	rec := newRecorder(t, func(n int, w http.ResponseWriter, r received) {
		switch r.target {
		case "SageMaker.DescribePipeline":
			if n == 1 {
				answerJSON(w, 400, `{"__type":"ResourceNotFound","message":"no such pipeline"}`)
				return
			}
			answerJSON(w, 200, `{"PipelineArn":"arn:p","PipelineName":"p"}`)
		default:
			answerJSON(w, 200, `{"PipelineArn":"arn:aws:sagemaker:us-east-1:111122223333:pipeline/p"}`)
		}
	})
	c := &Client{sm: testAPI(t, rec.srv.URL, 1, noBackoff)}
	req := PipelineRequest{Name: "p", Definition: []byte(`{"Version":"2020-12-01","a":"<&>"}`), RoleARN: testRole,
		Description: "d", Tags: []Tag{{Key: "team", Value: "ml"}}}
	res, err := c.UpsertPipeline(context.Background(), req)
	if err != nil || !res.Created || res.PipelineARN != "arn:aws:sagemaker:us-east-1:111122223333:pipeline/p" {
		t.Fatalf("create: %+v %v", res, err)
	}
	req.DefinitionS3Bucket, req.DefinitionS3Key = "bkt", "defs/p.json"
	if res, err = c.UpsertPipeline(context.Background(), req); err != nil || res.Created {
		t.Fatalf("update: %+v %v", res, err)
	}
	got := rec.requests()
	want := []struct {
		target string
		body   map[string]any
	}{
		{"SageMaker.DescribePipeline", map[string]any{"PipelineName": "p"}},
		{"SageMaker.CreatePipeline", map[string]any{"PipelineName": "p", "PipelineDefinition": string(req.Definition),
			"PipelineDescription": "d", "RoleArn": testRole, "ClientRequestToken": requestToken(PipelineRequest{Name: "p", Definition: req.Definition}),
			"Tags": []any{map[string]any{"Key": "team", "Value": "ml"}}}},
		{"SageMaker.DescribePipeline", map[string]any{"PipelineName": "p"}},
		{"SageMaker.UpdatePipeline", map[string]any{"PipelineName": "p", "PipelineDescription": "d", "RoleArn": testRole,
			"PipelineDefinitionS3Location": map[string]any{"Bucket": "bkt", "ObjectKey": "defs/p.json"}}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.method != http.MethodPost || g.path != "/" || g.contentType != "application/x-amz-json-1.1" || g.target != w.target {
			t.Errorf("request %d: %s %s %q %q, want POST / application/x-amz-json-1.1 %s", i, g.method, g.path, g.contentType, g.target, w.target)
		}
		if g.signatureErr != nil || g.signature.Service != "sagemaker" || g.signature.Region != "us-east-1" {
			t.Errorf("request %d: signature %+v: %v", i, g.signature, g.signatureErr)
		}
		if !reflect.DeepEqual(g.body, w.body) {
			t.Errorf("request %d body:\n got %v\nwant %v", i, g.body, w.body)
		}
	}
}

// TestSageMakerErrorForms: the error code comes from the X-Amzn-ErrorType
// header, else __type (with or without a namespace prefix or a ":" suffix),
// else code; the message from message or Message; the request ID from
// X-Amzn-RequestId.
func TestSageMakerErrorForms(t *testing.T) {
	cases := []struct {
		name, header, body, code, message string
	}{
		{"type", "", `{"__type":"ValidationException","message":"bad role"}`, "ValidationException", "bad role"},
		{"namespaced type", "", `{"__type":"com.amazonaws.sagemaker#ResourceInUse","Message":"in use"}`, "ResourceInUse", "in use"},
		{"type with a suffix", "", `{"__type":"AccessDeniedException:http://internal.amazon.com/coral/","message":"no"}`, "AccessDeniedException", "no"},
		{"header wins", "ResourceLimitExceeded:http://internal.amazon.com/", `{"__type":"Other","message":"limit"}`, "ResourceLimitExceeded", "limit"},
		{"code member", "", `{"code":"ConflictException","Message":"conflict"}`, "ConflictException", "conflict"},
		{"empty body", "", ``, "UnknownError", "UnknownError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ received) {
				if tc.header != "" {
					w.Header().Set("X-Amzn-ErrorType", tc.header)
				}
				w.Header().Set("X-Amzn-RequestId", "req-"+tc.name)
				answerJSON(w, 400, tc.body)
			})
			c := &Client{sm: testAPI(t, rec.srv.URL, 3, noBackoff)}
			_, err := c.UpsertPipeline(context.Background(), PipelineRequest{Name: "p", Definition: []byte("{}"), RoleARN: testRole})
			ae, ok := errors.AsType[*AWSError](err)
			if !ok || ae.Op != "SageMaker DescribePipeline" || ae.Code != tc.code || ae.Message != tc.message || ae.RequestID != "req-"+tc.name {
				t.Fatalf("got %T %+v", err, err)
			}
			if n := len(rec.requests()); n != 1 {
				t.Fatalf("%d attempts: a client error is not retried", n)
			}
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ received) { answerJSON(w, 403, "<html>denied</html>") })
		err := testAPI(t, rec.srv.URL, 1, noBackoff).call(context.Background(), "DescribePipeline", struct{}{}, nil)
		var re interface{ HTTPStatusCode() int }
		if _, ok := errors.AsType[*smithy.DeserializationError](err); !ok || !errors.As(err, &re) || re.HTTPStatusCode() != 403 {
			t.Fatalf("got %T %v", err, err)
		}
	})
}

// TestSageMakerRetries: throttling, 5xx answers and dropped connections
// are retried (each attempt signed again) until one succeeds; a client
// error is not.
func TestSageMakerRetries(t *testing.T) {
	failures := map[string]func(w http.ResponseWriter){
		"throttled": func(w http.ResponseWriter) {
			answerJSON(w, 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
		},
		"service unavailable": func(w http.ResponseWriter) { answerJSON(w, 503, `{"__type":"ServiceUnavailable"}`) },
		"internal error":      func(w http.ResponseWriter) { answerJSON(w, 500, ``) },
		"connection dropped": func(w http.ResponseWriter) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
	}
	for name, fail := range failures {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t, func(n int, w http.ResponseWriter, _ received) {
				if n < 3 {
					fail(w)
					return
				}
				answerJSON(w, 200, `{"PipelineArn":"arn:p"}`)
			})
			var out struct{ PipelineArn string }
			err := testAPI(t, rec.srv.URL, 3, noBackoff).call(context.Background(), "UpdatePipeline", pipelineFields{PipelineName: "p"}, &out)
			got := rec.requests()
			if err != nil || out.PipelineArn != "arn:p" || len(got) != 3 {
				t.Fatalf("err %v, out %+v, %d attempts; want success on the third", err, out, len(got))
			}
			for i, r := range got {
				if r.signatureErr != nil || r.target != "SageMaker.UpdatePipeline" {
					t.Errorf("attempt %d: %s %v", i+1, r.target, r.signatureErr)
				}
			}
		})
	}
}

// TestSageMakerMaxAttempts: a call that keeps being throttled stops after
// the retryer's attempts, with the last error.
func TestSageMakerMaxAttempts(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ received) {
		answerJSON(w, 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
	})
	err := testAPI(t, rec.srv.URL, 4, noBackoff).call(context.Background(), "DescribePipeline", struct{ PipelineName string }{"p"}, nil)
	maxErr, ok := errors.AsType[*retry.MaxAttemptsError](err)
	if api, isAPI := errors.AsType[smithy.APIError](err); !ok || maxErr.Attempt != 4 || !isAPI || api.ErrorCode() != "ThrottlingException" {
		t.Fatalf("got %T %v", err, err)
	}
	if n := len(rec.requests()); n != 4 {
		t.Fatalf("%d attempts, want 4", n)
	}
}

// TestClientOptionsMaxAttempts: ClientOptions.MaxAttempts is the SageMaker
// retryer's bound; 0 leaves the SDK's default of 3.
func TestClientOptionsMaxAttempts(t *testing.T) {
	isolateAWSConfig(t)
	for opt, want := range map[int]int{0: retry.DefaultMaxAttempts, 1: 1, 7: 7} {
		c, err := NewClient(context.Background(), ClientOptions{Region: "us-east-1", SageMakerEndpoint: "http://127.0.0.1:1", MaxAttempts: opt,
			Credentials: credentials.NewStaticCredentialsProvider(sagemakertest.AccessKeyID, sagemakertest.SecretAccessKey, "")})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.sm.retryer.MaxAttempts(); got != want {
			t.Errorf("MaxAttempts %d: retryer allows %d attempts, want %d", opt, got, want)
		}
	}
}

// TestSageMakerCancelStopsRetryWait: cancelling the context ends the wait
// before a retry at once, without another attempt.
func TestSageMakerCancelStopsRetryWait(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ received) { answerJSON(w, 503, `{}`) })
	waiting := make(chan struct{}, 1)
	backoff := retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) {
		waiting <- struct{}{}
		return time.Hour, nil
	})
	api := testAPI(t, rec.srv.URL, 5, backoff)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- api.call(ctx, "DescribePipeline", struct{ PipelineName string }{"p"}, nil) }()
	<-waiting // the first attempt failed and the client is about to wait an hour
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !errors.As(err, new(*aws.RequestCanceledError)) {
		t.Fatalf("got %T %v", err, err)
	}
	if n := len(rec.requests()); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// TestSageMakerEndpoint: the endpoint for each partition, FIPS and
// dual-stack, as the SDK's endpoint rules give them.
func TestSageMakerEndpoint(t *testing.T) {
	cases := []struct {
		region          string
		fips, dualStack bool
		want            string
	}{
		{"us-east-1", false, false, "https://api.sagemaker.us-east-1.amazonaws.com"},
		{"eu-west-2", false, true, "https://api.sagemaker.eu-west-2.api.aws"},
		{"us-east-1", true, false, "https://api-fips.sagemaker.us-east-1.amazonaws.com"},
		{"us-east-1", true, true, "https://api.sagemaker-fips.us-east-1.api.aws"},
		{"cn-north-1", false, false, "https://api.sagemaker.cn-north-1.amazonaws.com.cn"},
		{"cn-northwest-1", true, false, "https://api.sagemaker-fips.cn-northwest-1.amazonaws.com.cn"},
		{"cn-north-1", false, true, "https://api.sagemaker.cn-north-1.api.amazonwebservices.com.cn"},
		{"us-gov-west-1", false, false, "https://api.sagemaker.us-gov-west-1.amazonaws.com"},
		{"us-gov-west-1", true, false, "https://api-fips.sagemaker.us-gov-west-1.amazonaws.com"},
		{"us-gov-east-1", true, true, "https://api.sagemaker-fips.us-gov-east-1.api.aws"},
		{"us-iso-east-1", false, false, "https://api.sagemaker.us-iso-east-1.c2s.ic.gov"},
		{"us-isob-east-1", true, false, "https://api.sagemaker-fips.us-isob-east-1.sc2s.sgov.gov"},
		{"eu-isoe-west-1", false, false, "https://api.sagemaker.eu-isoe-west-1.cloud.adc-e.uk"},
		{"us-isof-south-1", false, true, "https://api.sagemaker.us-isof-south-1.api.aws.hci.ic.gov"},
		{"eusc-de-east-1", false, false, "https://api.sagemaker.eusc-de-east-1.amazonaws.eu"},
		{"aws-cn-global", false, false, "https://api.sagemaker.aws-cn-global.amazonaws.com.cn"},
		{"xx-mars-1", false, false, "https://api.sagemaker.xx-mars-1.amazonaws.com"}, // unknown: the aws partition
		{"fips-us-gov-west-1", false, false, "https://api.sagemaker.us-gov-west-1.amazonaws.com"},
		{"us-east-1-fips", false, false, "https://api.sagemaker.us-east-1.amazonaws.com"},
	}
	for _, tc := range cases {
		if got, err := sageMakerEndpoint(tc.region, "", tc.fips, tc.dualStack); err != nil || got != tc.want {
			t.Errorf("%s fips=%v dualstack=%v: %q %v, want %q", tc.region, tc.fips, tc.dualStack, got, err, tc.want)
		}
	}
	if got, err := sageMakerEndpoint("us-east-1", "http://127.0.0.1:9/base", false, false); err != nil || got != "http://127.0.0.1:9/base" {
		t.Errorf("custom endpoint: %q %v", got, err)
	}
	for name, call := range map[string]func() (string, error){
		"no region":             func() (string, error) { return sageMakerEndpoint("", "", false, false) },
		"bad region":            func() (string, error) { return sageMakerEndpoint("us-east-1/evil", "", false, false) },
		"FIPS and custom":       func() (string, error) { return sageMakerEndpoint("us-east-1", "http://x", true, false) },
		"dual-stack and custom": func() (string, error) { return sageMakerEndpoint("us-east-1", "http://x", false, true) },
	} {
		if got, err := call(); err == nil {
			t.Errorf("%s: %q, want an error", name, got)
		}
	}
}

// isolateAWSConfig leaves the environment as the only configuration
// source, with static credentials.
func isolateAWSConfig(t *testing.T) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", sagemakertest.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", sagemakertest.SecretAccessKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	for _, v := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SAGEMAKER", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_PROFILE", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"} {
		t.Setenv(v, "")
	}
}

// TestConfiguredSageMakerEndpoint: the endpoint settings of the SDK's
// configuration apply: AWS_USE_FIPS_ENDPOINT, AWS_ENDPOINT_URL_SAGEMAKER
// over AWS_ENDPOINT_URL, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS, and
// ClientOptions.SageMakerEndpoint over them all.
func TestConfiguredSageMakerEndpoint(t *testing.T) {
	cases := []struct {
		name   string
		env    map[string]string
		option string
		want   string
	}{
		{"default", nil, "", "https://api.sagemaker.us-gov-west-1.amazonaws.com"},
		{"FIPS", map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"}, "", "https://api-fips.sagemaker.us-gov-west-1.amazonaws.com"},
		{"dual-stack", map[string]string{"AWS_USE_DUALSTACK_ENDPOINT": "true"}, "", "https://api.sagemaker.us-gov-west-1.api.aws"},
		{"global", map[string]string{"AWS_ENDPOINT_URL": "http://global.test"}, "", "http://global.test"},
		{"service", map[string]string{"AWS_ENDPOINT_URL": "http://global.test", "AWS_ENDPOINT_URL_SAGEMAKER": "http://sm.test"}, "", "http://sm.test"},
		{"ignored", map[string]string{"AWS_ENDPOINT_URL_SAGEMAKER": "http://sm.test", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}, "", "https://api.sagemaker.us-gov-west-1.amazonaws.com"},
		{"option", map[string]string{"AWS_ENDPOINT_URL_SAGEMAKER": "http://sm.test"}, "http://option.test", "http://option.test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolateAWSConfig(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := NewClient(context.Background(), ClientOptions{Region: "us-gov-west-1", SageMakerEndpoint: tc.option})
			if err != nil {
				t.Fatal(err)
			}
			if c.sm.err != nil {
				t.Fatal(c.sm.err)
			}
			if got := c.sm.endpoint.String(); got != tc.want {
				t.Fatalf("endpoint %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSageMakerEndpointFromEnvironment: AWS_ENDPOINT_URL_SAGEMAKER sends
// the pipeline calls to that endpoint, signed for the configured region.
func TestSageMakerEndpointFromEnvironment(t *testing.T) {
	isolateAWSConfig(t)
	f := sagemakertest.NewFakeAWS(t)
	t.Setenv("AWS_ENDPOINT_URL_SAGEMAKER", f.URL())
	c, err := NewClient(context.Background(), ClientOptions{Region: "eu-west-1", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.UpsertPipeline(context.Background(), PipelineRequest{Name: "p", Definition: []byte(`{"Version":"2020-12-01"}`), RoleARN: testRole})
	if err != nil || !res.Created || f.Count("CreatePipeline") != 1 {
		t.Fatalf("%+v %v %+v", res, err, f.Calls())
	}
}

// TestSageMakerConfigurationErrorsFailCalls: a configuration the endpoint
// rules refuse fails the SageMaker calls, not the client's construction
// (S3 may still be usable), and nothing is sent.
func TestSageMakerConfigurationErrorsFailCalls(t *testing.T) {
	f := sagemakertest.NewFakeAWS(t)
	cases := map[string]struct {
		env    map[string]string
		opts   ClientOptions
		reason string
	}{
		"no region":       {map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": ""}, ClientOptions{}, "no AWS region"},
		"FIPS and custom": {map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"}, ClientOptions{Region: "us-east-1", SageMakerEndpoint: f.URL()}, "FIPS"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			isolateAWSConfig(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := NewClient(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.UpsertPipeline(context.Background(), PipelineRequest{Name: "p", Definition: []byte("{}"), RoleARN: testRole})
			if err == nil || !strings.Contains(err.Error(), "SageMaker DescribePipeline") || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("got %v", err)
			}
		})
	}
	if n := len(f.Calls()); n != 0 {
		t.Fatalf("%d calls sent", n)
	}
}

// TestRetryAfter: an answer's X-Amz-Retry-After (milliseconds) sets the
// wait before the retry, within [backoff, backoff + 5 s]; a missing or
// malformed header leaves the backoff.
func TestRetryAfter(t *testing.T) {
	failed := func(header string) error {
		resp := &http.Response{StatusCode: 503, Header: http.Header{}}
		if header != "" {
			resp.Header.Set("X-Amz-Retry-After", header)
		}
		return &retry.MaxAttemptsError{Err: &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: resp}, Err: &smithy.GenericAPIError{Code: "ServiceUnavailable"}}}}
	}
	backoff := 200 * time.Millisecond
	for header, want := range map[string]time.Duration{
		"":      backoff,
		"x":     backoff,
		"-5":    backoff,
		"1500":  1500 * time.Millisecond,
		"50":    backoff,
		"60000": backoff + 5*time.Second,
	} {
		if got := retryAfter(backoff, failed(header)); got != want {
			t.Errorf("X-Amz-Retry-After %q: wait %v, want %v", header, got, want)
		}
	}
	if got := retryAfter(backoff, errors.New("no answer")); got != backoff {
		t.Errorf("no answer: wait %v", got)
	}
}

// TestSageMakerAnswerSizeCap: an answer over maxAnswerBytes is refused
// after reading the cap, not read whole into memory.
func TestSageMakerAnswerSizeCap(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ received) {
		answerJSON(w, 200, `{"PipelineArn":"`+strings.Repeat("a", maxAnswerBytes)+`"}`)
	})
	c := &Client{sm: testAPI(t, rec.srv.URL, 1, noBackoff)}
	_, err := c.UpsertPipeline(context.Background(), PipelineRequest{Name: "p", Definition: []byte("{}"), RoleARN: testRole})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over %d bytes", maxAnswerBytes)) {
		t.Fatalf("got %v, want the answer refused as over the cap", err)
	}
}
