package sagemaker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ClientOptions configure the AWS client. Endpoints are for tests and
// private endpoints; empty means the AWS default for the region.
type ClientOptions struct {
	Region            string
	S3Endpoint        string
	SageMakerEndpoint string
	// Credentials overrides the default credential chain (environment,
	// shared config, instance role).
	Credentials aws.CredentialsProvider
	// MaxAttempts bounds retries of throttled or failed calls (0: SDK default).
	MaxAttempts int
}

// Client uploads code artifacts to S3 and creates or updates pipelines.
type Client struct {
	s3 *s3.Client
	sm *sageMakerAPI
}

// NewClient loads the AWS configuration and builds the S3 client (the
// SDK's) and the SageMaker one (sageMakerAPI, over the SDK's signer and
// retryer).
func NewClient(ctx context.Context, o ClientOptions) (*Client, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(o.Region)}
	if o.Credentials != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(o.Credentials))
	}
	if o.MaxAttempts > 0 {
		opts = append(opts, awsconfig.WithRetryMaxAttempts(o.MaxAttempts))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	s3c := s3.NewFromConfig(cfg, func(so *s3.Options) {
		// An endpoint that sends no checksum is not worth a log line per read.
		so.DisableLogOutputChecksumValidationSkipped = true
		if o.S3Endpoint != "" {
			so.BaseEndpoint = aws.String(o.S3Endpoint)
			so.UsePathStyle = true
		}
	})
	return &Client{s3: s3c, sm: newSageMakerAPI(ctx, cfg, o.SageMakerEndpoint)}, nil
}

// AWSError is a failed AWS call with its error code (e.g. AccessDenied,
// ValidationException).
type AWSError struct {
	Op      string
	Code    string
	Message string
	// RequestID is the ID AWS gave the failed request ("" when unknown),
	// what AWS support asks for.
	RequestID string
}

func (e *AWSError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Op, e.Code, e.Message)
}

// UnreachableError is an AWS call whose request never got an answer: the
// endpoint refused or dropped the connection, or its name did not resolve.
// It says which service, never the endpoint's URL, which is the operator's
// business and not the caller's.
type UnreachableError struct {
	Service string // "S3" or "SageMaker"
	Op      string
	Reason  string // e.g. "connection refused"
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("could not reach %s (%s): %s", e.Service, e.Op, e.Reason)
}

func wrapAWS(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		ae := &AWSError{Op: op, Code: api.ErrorCode(), Message: api.ErrorMessage()}
		var withID interface{ ServiceRequestID() string }
		if errors.As(err, &withID) {
			ae.RequestID = withID.ServiceRequestID()
		}
		return ae
	}
	if _, unsent := errors.AsType[*smithyhttp.RequestSendError](err); unsent {
		service, call, _ := strings.Cut(op, " ")
		call, _, _ = strings.Cut(call, " ") // drop the object's s3:// address
		return &UnreachableError{Service: service, Op: call, Reason: transportReason(err)}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// transportReason is the innermost cause of a failed send ("connection
// refused", "no such host", "i/o timeout"): the outer layers name the URL.
func transportReason(err error) string {
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return dns.Err
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Err != nil {
		err = op.Err
	}
	for inner := errors.Unwrap(err); inner != nil; inner = errors.Unwrap(err) {
		err = inner
	}
	return err.Error()
}

// Upload puts data at s3://bucket/key unless an object is already there.
// Keys are content-addressed, so an existing object has the same bytes.
// It reports whether it uploaded.
func (c *Client) Upload(ctx context.Context, bucket, key string, data []byte) (bool, error) {
	_, err := c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err == nil {
		return false, nil
	}
	var api smithy.APIError
	if !errors.As(err, &api) || (api.ErrorCode() != "NotFound" && api.ErrorCode() != "NoSuchKey") {
		return false, wrapAWS("S3 HeadObject s3://"+bucket+"/"+key, err)
	}
	_, err = c.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return false, wrapAWS("S3 PutObject s3://"+bucket+"/"+key, err)
	}
	return true, nil
}

// PipelineRequest is what CreatePipeline / UpdatePipeline need.
type PipelineRequest struct {
	Name        string
	Definition  []byte
	RoleARN     string
	Description string
	// DefinitionS3 (bucket and key), when set, is sent instead of the
	// definition body: SageMaker caps inline definitions at 100 KB.
	DefinitionS3Bucket, DefinitionS3Key string
	// Tags are attached when the pipeline is created (UpdatePipeline takes
	// none).
	Tags []Tag
}

// UpsertResult tells what happened.
type UpsertResult struct {
	PipelineARN string
	Created     bool // false: an existing pipeline was updated
}

// UpsertPipeline creates the pipeline, or updates it when it already exists.
func (c *Client) UpsertPipeline(ctx context.Context, r PipelineRequest) (UpsertResult, error) {
	p := pipelineFields{PipelineName: r.Name, RoleArn: r.RoleARN, PipelineDescription: r.Description}
	if r.DefinitionS3Key != "" {
		p.PipelineDefinitionS3Location = &pipelineS3Location{Bucket: r.DefinitionS3Bucket, ObjectKey: r.DefinitionS3Key}
	} else {
		p.PipelineDefinition = string(r.Definition)
	}
	var out struct{ PipelineArn string }
	err := c.sm.call(ctx, "DescribePipeline", struct{ PipelineName string }{r.Name}, nil)
	if err != nil {
		if api, ok := errors.AsType[smithy.APIError](err); !ok || api.ErrorCode() != "ResourceNotFound" {
			return UpsertResult{}, wrapAWS("SageMaker DescribePipeline", err)
		}
		in := createPipelineInput{pipelineFields: p, ClientRequestToken: requestToken(r), Tags: r.Tags}
		if err := c.sm.call(ctx, "CreatePipeline", in, &out); err != nil {
			return UpsertResult{}, wrapAWS("SageMaker CreatePipeline", err)
		}
		return UpsertResult{PipelineARN: out.PipelineArn, Created: true}, nil
	}
	if err := c.sm.call(ctx, "UpdatePipeline", p, &out); err != nil {
		return UpsertResult{}, wrapAWS("SageMaker UpdatePipeline", err)
	}
	return UpsertResult{PipelineARN: out.PipelineArn}, nil
}

// pipelineFields are the members CreatePipeline and UpdatePipeline share
// (UpdatePipeline takes just these).
type pipelineFields struct {
	PipelineName                 string
	PipelineDefinition           string              `json:",omitempty"`
	PipelineDefinitionS3Location *pipelineS3Location `json:",omitempty"`
	PipelineDescription          string              `json:",omitempty"`
	RoleArn                      string
}

type pipelineS3Location struct{ Bucket, ObjectKey string }

type createPipelineInput struct {
	pipelineFields
	ClientRequestToken string
	Tags               []Tag `json:",omitempty"`
}

// requestToken makes CreatePipeline idempotent for one name and definition:
// a retried call does not create a second pipeline.
func requestToken(r PipelineRequest) string {
	h := sha256.New()
	h.Write([]byte(r.Name))
	h.Write([]byte{0})
	h.Write(r.Definition)
	h.Write([]byte(r.DefinitionS3Key))
	return hex.EncodeToString(h.Sum(nil))
}

// ObjectInfo is one object of a listing.
type ObjectInfo struct {
	Key  string
	Size int64
}

// NoSuchKeyError is an object that is not there. It is fs.ErrNotExist.
type NoSuchKeyError struct{ Bucket, Key string }

func (e *NoSuchKeyError) Error() string {
	return fmt.Sprintf("no object at s3://%s/%s", e.Bucket, e.Key)
}

// Is makes errors.Is(err, fs.ErrNotExist) true.
func (e *NoSuchKeyError) Is(target error) bool { return target == fs.ErrNotExist }

// ObjectTooLargeError is an object bigger than the caller may read.
type ObjectTooLargeError struct {
	Bucket, Key string
	Limit       int64
}

func (e *ObjectTooLargeError) Error() string {
	return fmt.Sprintf("object s3://%s/%s is larger than %d bytes", e.Bucket, e.Key, e.Limit)
}

// Get reads the object at s3://bucket/key, at most limit bytes (0: no
// limit); a bigger object is an *ObjectTooLargeError, a missing one a
// *NoSuchKeyError.
func (c *Client) Get(ctx context.Context, bucket, key string, limit int64) ([]byte, error) {
	out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		if api, ok := errors.AsType[smithy.APIError](err); ok && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound") {
			return nil, &NoSuchKeyError{Bucket: bucket, Key: key}
		}
		return nil, wrapAWS("S3 GetObject s3://"+bucket+"/"+key, err)
	}
	defer out.Body.Close()
	if limit > 0 && aws.ToInt64(out.ContentLength) > limit {
		return nil, &ObjectTooLargeError{Bucket: bucket, Key: key, Limit: limit}
	}
	r := io.Reader(out.Body)
	if limit > 0 {
		r = io.LimitReader(out.Body, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, wrapAWS("S3 GetObject s3://"+bucket+"/"+key, err)
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, &ObjectTooLargeError{Bucket: bucket, Key: key, Limit: limit}
	}
	return data, nil
}

// List returns every object of bucket whose key starts with prefix, in
// key order, following the listing's pages.
func (c *Client) List(ctx context.Context, bucket, prefix string) ([]ObjectInfo, error) {
	var out []ObjectInfo
	p := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrapAWS("S3 ListObjectsV2 s3://"+bucket+"/"+prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, ObjectInfo{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}

// Put writes data as the object at s3://bucket/key, replacing what is
// there.
func (c *Client) Put(ctx context.Context, bucket, key string, data []byte) error {
	_, err := c.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return wrapAWS("S3 PutObject s3://"+bucket+"/"+key, err)
	}
	return nil
}
