package sagemaker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sageMakerAPI calls SageMaker's awsJson1_1 API: a signed POST of a JSON
// document to the regional endpoint, the operation named by the
// X-Amz-Target header. It serves the three operations cursus uses
// (DescribePipeline, CreatePipeline, UpdatePipeline).
//
// It is written here rather than taken from the SDK's generated
// service/sagemaker package because that package, which covers every one of
// SageMaker's few hundred operations, cost every cursus process (even
// `cursus version`) 3.9 MB in 20,000 allocations and a median 8 ms (6–16
// ms on a loaded 2-core machine) of package initialisation for its
// operation schemas, and 11.4 MB of the stripped binary (53.9 MB, 42.4 MB
// without it), which an idle server largely maps: its VmRSS fell from 65.9
// to 56.9 MB (docs/PERFORMANCE.md). Everything that is not
// SageMaker-specific still comes from the SDK's core packages: the
// configuration (credential chain, region, retry settings, HTTP client,
// configured endpoints) from config.LoadDefaultConfig, the SigV4 signer,
// the retryer that decides which failures are retried and how long to wait,
// and smithy's error types, so callers see the same errors as from the
// generated client. The endpoint rules and the error decoding follow the
// generated client's (endpoints.go and the awsJson protocol in smithy-go).
type sageMakerAPI struct {
	http     aws.HTTPClient
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	retryer  aws.Retryer
	endpoint *url.URL
	region   string // the signing region
	now      func() time.Time
	// err, when set, is why the client cannot call SageMaker (no region, a
	// bad endpoint): every call returns it, as the generated client fails
	// its calls, not its construction.
	err error
}

// sageMakerService is SageMaker's SDK ID: the suffix of its endpoint
// environment variable (AWS_ENDPOINT_URL_SAGEMAKER) and, lower-cased, its
// section in the shared config file's services.
const sageMakerService = "SageMaker"

// newSageMakerAPI builds the client from a loaded configuration; endpoint,
// when set, wins over every configured one.
func newSageMakerAPI(ctx context.Context, cfg aws.Config, endpoint string) *sageMakerAPI {
	c := &sageMakerAPI{http: cfg.HTTPClient, creds: cfg.Credentials, signer: v4.NewSigner(),
		retryer: configuredRetryer(cfg), region: cfg.Region, now: time.Now}
	if c.http == nil {
		c.http = awshttp.NewBuildableClient()
	}
	if c.creds == nil {
		c.err = errors.New("no AWS credentials provider configured")
	}
	if endpoint == "" {
		endpoint = configuredEndpoint(ctx, cfg)
	}
	var fips, dualStack bool
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error)
		}); ok {
			if v, found, err := p.GetUseFIPSEndpoint(ctx); err != nil || found {
				fips = err == nil && v == aws.FIPSEndpointStateEnabled
				break
			}
		}
	}
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error)
		}); ok {
			if v, found, err := p.GetUseDualStackEndpoint(ctx); err != nil || found {
				dualStack = err == nil && v == aws.DualStackEndpointStateEnabled
				break
			}
		}
	}
	raw, err := sageMakerEndpoint(cfg.Region, endpoint, fips, dualStack)
	if err != nil {
		c.err = err
		return c
	}
	if c.endpoint, err = url.Parse(raw); err != nil || c.endpoint.Host == "" || (c.endpoint.Scheme != "http" && c.endpoint.Scheme != "https") {
		c.err = errors.New("the SageMaker endpoint is not an http(s) URL")
	}
	return c
}

// configuredEndpoint is the SageMaker endpoint the configuration names, as
// the generated client reads it: AWS_ENDPOINT_URL_SAGEMAKER or the shared
// config's sagemaker services section wins over the global endpoint_url or
// AWS_ENDPOINT_URL, except that AWS_ENDPOINT_URL set without
// AWS_ENDPOINT_URL_SAGEMAKER wins over the shared config's section, and
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS (or ignore_configured_endpoint_urls)
// turns them all off. "" is the region's default endpoint.
func configuredEndpoint(ctx context.Context, cfg aws.Config) string {
	base := aws.ToString(cfg.BaseEndpoint) // "" when configured endpoints are ignored
	for _, src := range cfg.ConfigSources {
		if env, ok := src.(awsconfig.EnvConfig); ok && env.BaseEndpoint != "" {
			if _, own, _ := env.GetServiceBaseEndpoint(ctx, sageMakerService); !own {
				return base
			}
		}
	}
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error)
		}); ok {
			if ignore, found, err := p.GetIgnoreConfiguredEndpoints(ctx); err != nil || found {
				if err == nil && ignore {
					return base
				}
				break
			}
		}
	}
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
		}); ok {
			if v, found, err := p.GetServiceBaseEndpoint(ctx, sageMakerService); err != nil || found {
				if err == nil {
					return v
				}
				break
			}
		}
	}
	return base
}

// configuredRetryer is the retryer the configuration asks for, built as the
// generated clients build theirs: the configured one, or the standard (or
// adaptive) mode with the configured number of attempts.
func configuredRetryer(cfg aws.Config) aws.Retryer {
	var r aws.Retryer
	switch {
	case cfg.Retryer != nil:
		r = cfg.Retryer()
	case cfg.RetryMode == aws.RetryModeAdaptive:
		r = retry.NewAdaptiveMode()
	default:
		r = retry.NewStandard()
	}
	if cfg.RetryMaxAttempts != 0 {
		r = retry.AddWithMaxAttempts(r, cfg.RetryMaxAttempts)
	}
	return r
}

// partition is an AWS partition's part of the SDK's endpoint data: the
// regions it holds and its DNS suffixes. Every partition supports FIPS and
// dual-stack endpoints.
type partition struct {
	id, regionPattern, dnsSuffix, dualStackSuffix string
}

// partitions are the SDK's partitions (aws-sdk-go-v2
// internal/endpoints/awsrulesfn/partitions.json), in its order.
var partitions = []partition{
	{"aws", `^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$`, "amazonaws.com", "api.aws"},
	{"aws-cn", `^cn\-\w+\-\d+$`, "amazonaws.com.cn", "api.amazonwebservices.com.cn"},
	{"aws-eusc", `^eusc\-(de)\-\w+\-\d+$`, "amazonaws.eu", "api.amazonwebservices.eu"},
	{"aws-iso", `^us\-iso\-\w+\-\d+$`, "c2s.ic.gov", "api.aws.ic.gov"},
	{"aws-iso-b", `^us\-isob\-\w+\-\d+$`, "sc2s.sgov.gov", "api.aws.scloud"},
	{"aws-iso-e", `^eu\-isoe\-\w+\-\d+$`, "cloud.adc-e.uk", "api.cloud-aws.adc-e.uk"},
	{"aws-iso-f", `^us\-isof\-\w+\-\d+$`, "csp.hci.ic.gov", "api.aws.hci.ic.gov"},
	{"aws-us-gov", `^us\-gov\-\w+\-\d+$`, "amazonaws.com", "api.aws"},
}

// partitionPatterns are compiled on first use, not at start-up.
var partitionPatterns = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(partitions))
	for i, p := range partitions {
		out[i] = regexp.MustCompile(p.regionPattern)
	}
	return out
})

// partitionOf is region's partition: the one naming it (its "<id>-global"
// pseudo-region), else the first whose pattern matches, else aws.
func partitionOf(region string) partition {
	for _, p := range partitions {
		if region == p.id+"-global" {
			return p
		}
	}
	for i, re := range partitionPatterns() {
		if re.MatchString(region) {
			return partitions[i]
		}
	}
	return partitions[0]
}

// validRegion is the SDK's check of a region: dot-separated labels of 1 to
// 63 letters, digits and hyphens, none starting or ending with a hyphen.
func validRegion(region string) bool {
	for label := range strings.SplitSeq(region, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// sageMakerEndpoint is the URL SageMaker's endpoint rules give for the
// region, a custom endpoint (which wins, and rules out FIPS and dual-stack)
// and the FIPS and dual-stack settings. Pseudo-regions naming FIPS
// ("fips-us-gov-west-1", "us-east-1-fips") stand for the plain region, as
// in the SDK.
func sageMakerEndpoint(region, custom string, fips, dualStack bool) (string, error) {
	if region != "" && !validRegion(region) {
		return "", fmt.Errorf("invalid AWS region %q", region)
	}
	if custom != "" {
		switch {
		case fips:
			return "", errors.New("a custom SageMaker endpoint cannot be combined with FIPS endpoints (AWS_USE_FIPS_ENDPOINT)")
		case dualStack:
			return "", errors.New("a custom SageMaker endpoint cannot be combined with dual-stack endpoints (AWS_USE_DUALSTACK_ENDPOINT)")
		}
		return custom, nil
	}
	if region == "" {
		return "", errors.New("no AWS region configured (aws.region, AWS_REGION or the shared config's region)")
	}
	region = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(region, "-fips-", "-"), "fips-", ""), "-fips", "")
	p := partitionOf(region)
	suffix := p.dnsSuffix
	if dualStack {
		suffix = p.dualStackSuffix
	}
	switch {
	case fips && !dualStack && (p.id == "aws" || p.id == "aws-us-gov"):
		return "https://api-fips.sagemaker." + region + ".amazonaws.com", nil
	case fips:
		return "https://api.sagemaker-fips." + region + "." + suffix, nil
	}
	return "https://api.sagemaker." + region + "." + suffix, nil
}

// call runs operation with input as its JSON request and decodes the
// answer into output (nil: the answer is read and dropped), retrying as the
// retryer says. Errors are the generated client's: a failed answer is a
// smithy.APIError inside an *awshttp.ResponseError (status, request ID), an
// unsent request a *smithyhttp.RequestSendError, the last of too many
// attempts a *retry.MaxAttemptsError, a cancelled wait an
// *aws.RequestCanceledError.
func (c *sageMakerAPI) call(ctx context.Context, operation string, input, output any) error {
	if c.err != nil {
		return c.err
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(input); err != nil {
		return &smithy.SerializationError{Err: err}
	}
	payload := bytes.TrimSuffix(body.Bytes(), []byte("\n"))
	sum := sha256.Sum256(payload)
	payloadHash := hex.EncodeToString(sum[:])

	maxAttempts := c.retryer.MaxAttempts()
	releaseRetry := func(error) error { return nil }
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var releaseAttempt func(error) error
		if v2, ok := c.retryer.(aws.RetryerV2); ok {
			var err error
			if releaseAttempt, err = v2.GetAttemptToken(ctx); err != nil {
				return fmt.Errorf("get retry send token: %w", err)
			}
		} else {
			releaseAttempt = c.retryer.GetInitialToken()
		}
		err := c.attempt(ctx, operation, payload, payloadHash, output)
		_ = releaseRetry(err)
		_ = releaseAttempt(err)
		if err == nil {
			return nil
		}
		if !c.retryer.IsErrorRetryable(err) {
			return err
		}
		if maxAttempts > 0 && attempt >= maxAttempts {
			return &retry.MaxAttemptsError{Attempt: attempt, Err: err}
		}
		var quotaErr error
		if releaseRetry, quotaErr = c.retryer.GetRetryToken(ctx, err); quotaErr != nil {
			return errors.Join(err, quotaErr)
		}
		delay, delayErr := c.retryer.RetryDelay(attempt, err)
		if delayErr != nil {
			return delayErr
		}
		if err := sleep(ctx, retryAfter(delay, err)); err != nil {
			return &aws.RequestCanceledError{Err: err}
		}
	}
}

// retryAfter is the backoff delay adjusted to the X-Amz-Retry-After header
// (milliseconds) of the failed answer, if any, as the SDK's retry
// middleware adjusts it: never shorter than delay nor more than 5 s longer.
func retryAfter(delay time.Duration, err error) time.Duration {
	re, ok := errors.AsType[*smithyhttp.ResponseError](err)
	if !ok || re.Response == nil || re.Response.Response == nil {
		return delay
	}
	ms, perr := strconv.ParseInt(re.Response.Header.Get("X-Amz-Retry-After"), 10, 64)
	if perr != nil || ms < 0 {
		return delay
	}
	return min(max(time.Duration(ms)*time.Millisecond, delay), delay+5*time.Second)
}

// sleep waits d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// attempt sends one signed request and reads its answer.
func (c *sageMakerAPI) attempt(ctx context.Context, operation string, payload []byte, payloadHash string, output any) error {
	u := *c.endpoint
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(payload))
	if err != nil {
		return &smithy.SerializationError{Err: err}
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "SageMaker."+operation)
	req.Header.Set("User-Agent", "cursus")
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("retrieve AWS credentials: %w", err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, payloadHash, "sagemaker", c.region, c.now().UTC()); err != nil {
		return fmt.Errorf("sign request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return &smithy.CanceledError{Err: ctx.Err()}
		}
		return &smithyhttp.RequestSendError{Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err == nil && len(data) > maxAnswerBytes {
		err = fmt.Errorf("the answer is over %d bytes", maxAnswerBytes)
	}
	if err == nil && (resp.StatusCode < 200 || resp.StatusCode >= 300) {
		err = decodeError(resp.Header, data)
	} else if err == nil && output != nil && len(bytes.TrimSpace(data)) > 0 {
		if jerr := json.Unmarshal(data, output); jerr != nil {
			err = &smithy.DeserializationError{Err: jerr, Snapshot: data[:min(len(data), 1024)]}
		}
	} else if err != nil {
		err = &smithy.DeserializationError{Err: fmt.Errorf("read response body: %w", err)}
	}
	if err != nil {
		return &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: err},
			RequestID:     requestID(resp.Header),
		}
	}
	return nil
}

// maxAnswerBytes bounds the body of a SageMaker answer read into memory.
// The largest cursus reads is DescribePipeline's, whose definition
// SageMaker caps at 1 MB.
const maxAnswerBytes = 16 << 20

// requestID is the request ID of an AWS answer.
func requestID(h http.Header) string {
	if id := h.Get("X-Amzn-Requestid"); id != "" {
		return id
	}
	return h.Get("X-Amz-Request-Id")
}

// decodeError is the error of a failed awsJson answer, read as the SDK
// reads it: the code from the X-Amzn-ErrorType header, else the body's
// __type, else its code; stripped of a "namespace#" prefix and of a ":"
// and what follows; the body's message (any capitalisation).
func decodeError(h http.Header, body []byte) error {
	var info struct {
		Type    string `json:"__type"`
		Message string
		Code    any
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &info); err != nil {
			return &smithy.DeserializationError{Err: fmt.Errorf("decode error response: %w", err), Snapshot: body[:min(len(body), 1024)]}
		}
	}
	code := "UnknownError"
	if v := h.Get("X-Amzn-ErrorType"); v != "" {
		code = v
	} else if info.Type != "" {
		code = info.Type
	} else if s, ok := info.Code.(string); ok && s != "" {
		code = s
	}
	code, _, _ = strings.Cut(code, ":")
	if i := strings.Index(code, "#"); i >= 0 {
		code = code[i+1:]
	}
	msg := info.Message
	if msg == "" {
		msg = "UnknownError"
	}
	return &smithy.GenericAPIError{Code: code, Message: msg}
}
