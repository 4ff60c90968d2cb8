package compiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cursus-dev/cursus/engine/sagemaker"
)

// Deployer is what an upsert needs from AWS; *sagemaker.Client is one.
type Deployer interface {
	Upload(ctx context.Context, bucket, key string, data []byte) (uploaded bool, err error)
	UpsertPipeline(ctx context.Context, r sagemaker.PipelineRequest) (sagemaker.UpsertResult, error)
}

// MaxInlineDefinition is SageMaker's limit on a definition sent in the
// request body; larger ones go through S3.
const MaxInlineDefinition = 100 * 1000

// UpsertReport says what an upsert did.
type UpsertReport struct {
	PipelineName string   `json:"pipeline_name"`
	PipelineARN  string   `json:"pipeline_arn"`
	Created      bool     `json:"created"`
	Uploaded     []string `json:"uploaded"`
	Existing     []string `json:"existing"`
	DefinitionS3 string   `json:"definition_s3,omitempty"`
}

// Upsert uploads every artifact once (objects already in S3 are kept: keys
// are content addresses) and then creates or updates the pipeline.
func Upsert(ctx context.Context, d Deployer, res *Result, role string, opts ...Option) (*UpsertReport, error) {
	o := collect(opts)
	if role == "" {
		role = res.Role
	}
	if role == "" {
		return nil, errors.New("a role ARN is required to upsert a pipeline")
	}
	rep := &UpsertReport{PipelineName: res.PipelineName, Uploaded: []string{}, Existing: []string{}}
	total := len(res.Artifacts) + 1
	for i, a := range res.Artifacts {
		up, err := d.Upload(ctx, a.Bucket, a.Key, a.Data)
		if err != nil {
			return rep, err
		}
		if up {
			rep.Uploaded = append(rep.Uploaded, a.S3URI)
		} else {
			rep.Existing = append(rep.Existing, a.S3URI)
		}
		o.progress(i+1, total, "uploaded "+a.S3URI)
	}
	req := sagemaker.PipelineRequest{Name: res.PipelineName, Definition: res.JSON, RoleARN: role,
		Description: fmt.Sprintf("Compiled by cursus (%d steps)", len(res.Steps)), Tags: res.Tags}
	if len(res.JSON) > MaxInlineDefinition {
		bucket := res.Bucket
		if bucket == "" {
			return rep, fmt.Errorf("definition is %d bytes (over %d) and no bucket is known to stage it", len(res.JSON), MaxInlineDefinition)
		}
		sum := sha256.Sum256(res.JSON)
		key := res.PipelineName + "/definition/" + hex.EncodeToString(sum[:]) + ".json"
		if _, err := d.Upload(ctx, bucket, key, res.JSON); err != nil {
			return rep, err
		}
		req.DefinitionS3Bucket, req.DefinitionS3Key = bucket, key
		rep.DefinitionS3 = "s3://" + bucket + "/" + key
	}
	out, err := d.UpsertPipeline(ctx, req)
	if err != nil {
		return rep, err
	}
	rep.PipelineARN, rep.Created = out.PipelineARN, out.Created
	o.progress(total, total, "pipeline "+res.PipelineName+" upserted")
	return rep, nil
}
