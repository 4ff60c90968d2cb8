package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/localrun"
	"github.com/cursus-dev/cursus/registry"
)

// ---- validate.run_pipeline ---------------------------------------------------

type validateRunPipelineIn struct {
	Definition definitionDoc `json:"definition,omitempty"`
	Manifest   codeManifest  `json:"manifest,omitempty"`
	compileSource
	SampleData inlineSample `json:"sample_data,omitempty"`
	MaxTrials  int          `json:"max_trials,omitempty" jsonschema:"Training jobs per tuning step (default: the server's local_run setting, 2)." schema:"minimum=1,maximum=20"`
}

// definitionDoc is a pipeline definition as compile.with_report returns it.
type definitionDoc map[string]any

func (definitionDoc) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: "A SageMaker pipeline definition, as compile.with_report returns it (data.definition). " +
		"Give it with manifest, or give dag and config to compile first."}
}

// codeManifest is local source → S3 URI of each code artifact.
type codeManifest map[string]string

func (codeManifest) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(500), AdditionalProperties: &jsonschema.Schema{Type: "string", MaxLength: ptr(2048)},
		Description: "The definition's code artifacts, local source → S3 URI, as compile.with_report returns them (data.manifest): " +
			"builtin: sources come from the built-in code, the others from files over the workspace; each must match its content address."}
}

// inlineSample is the sample data a run reads: file name → text.
type inlineSample map[string]string

func (inlineSample) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(20), AdditionalProperties: &jsonschema.Schema{Type: "string"},
		PropertyNames: &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(256)},
		Description: "Sample data files (name → CSV/JSON text) placed under every S3 input the pipeline reads from outside it. " +
			"Default: the built-in tabular data set (id, label, num_1..num_6, cat_1..cat_3; 1,500 rows), or none where the server " +
			"reads the pipeline's inputs from S3 (workspace.run_pipeline_s3)."}
}

func validateRunPipelineTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.run_pipeline",
		Description: "Run a compiled pipeline definition locally, emulating SageMaker's containers: each step's code in the script " +
			"sandbox with /opt/ml laid out as the job would see it (processing inputs/outputs, training channels, hyperparameters.json, " +
			"SM_* environment, model.tar.gz), tuning trials, models served as their image would, batch transform with DataProcessing, " +
			"S3 as a local store (or the operator's S3, read from and written through), properties and Std:Join resolved. Reports each step's status, objects and log tail, and a remedy " +
			"for the first failure.",
		When: "The definition compiles and you want to see it run end to end before deploying.",
		Examples: []string{
			`validate.run_pipeline {` + inlineCompileArgs + `}`,
			`validate.run_pipeline {"definition": {"Version": "2020-12-01", "Steps": []}, "manifest": {}}  # definition and manifest as compile.with_report returns them`,
		},
		Tags:     []string{registry.PhaseValidator},
		ExecCode: true,
		// With workspace.run_pipeline_s3 the run reads and writes the
		// configured S3. Network is a flag, not a gate: the gate stays
		// exec_code and the operator opts in with the setting.
		Network:     d.Opts.RunPipelineS3,
		Alternative: &registry.Alternative{Tool: "compile.validate", How: "it checks the definition statically, running nothing."},
	}, d.validateRunPipeline)
}

func (d *Deps) validateRunPipeline(ctx context.Context, in validateRunPipelineIn) (registry.Reply[*localrun.Report], error) {
	var reply registry.Reply[*localrun.Report]
	compileGiven := in.DAG != nil || in.DAGFile != "" || in.Config != nil || in.ConfigFile != ""
	var req localrun.Request
	switch {
	case in.Definition != nil && compileGiven:
		reply.Out = nil
		return reply, registry.Errorf(registry.CodeInvalidInput, "give definition and manifest, or dag and config to compile, not both")
	case in.Definition != nil:
		if in.Manifest == nil {
			reply.Out = nil
			return reply, registry.Errorf(registry.CodeInvalidInput, "definition needs its manifest (data.manifest of compile.with_report): the run reads each step's code from it")
		}
		call, err := d.sources(ctx, in.Files, in.stepTypesArg)
		if err != nil {
			reply.Out = nil
			return reply, err
		}
		reply.Warn(call.cat.Warnings...)
		code, err := localrun.CodeFromManifest(ctx, in.Manifest, call.fs)
		if err != nil {
			reply.Out = nil
			return reply, runPipelineError(err)
		}
		def, err := json.Marshal(map[string]any(in.Definition))
		if err != nil {
			reply.Out = nil
			return reply, registry.Errorf(registry.CodeInvalidInput, "definition: %v", err)
		}
		req = localrun.Request{Definition: def, Code: code}
	case compileGiven:
		input, _, stepWarns, err := d.compileInput(ctx, in.compileSource, "")
		if err != nil {
			reply.Out = nil
			return reply, err
		}
		reply.Warn(stepWarns...)
		res, err := compiler.Compile(ctx, input)
		if err != nil {
			reply.Out = nil
			return reply, compileError(err)
		}
		reply.Warn(res.Warnings...)
		req = localrun.Request{Definition: res.JSON, Code: localrun.CodeFromArtifacts(res.Artifacts)}
	default:
		reply.Out = nil
		return reply, registry.Errorf(registry.CodeInvalidInput, "give definition and manifest (as compile.with_report returns them), or dag and config to compile").
			Suggest("Compile first, then pass data.definition and data.manifest.", "compile.with_report")
	}
	if in.SampleData != nil {
		req.SampleData = map[string][]byte{}
		for name, text := range in.SampleData {
			req.SampleData[name] = []byte(text)
		}
	}
	req.MaxTrials = in.MaxTrials
	req.Progress = progressTo(ctx)
	if d.Opts.RunPipelineS3 {
		client, err := d.awsClient(ctx, d.Opts.AWSRegion)
		if err != nil {
			reply.Out = nil
			return reply, registry.Errorf(registry.CodeRuntimeUnavailable, "the local run's S3 (workspace.run_pipeline_s3): AWS client: %v", err).
				Suggest("Ask the operator to check the server's AWS configuration (aws.region, credentials).")
		}
		req.Remote = client
	}
	rep, err := d.LocalRun.Run(ctx, req)
	if err != nil {
		reply.Out = nil
		return reply, runPipelineError(err, rep)
	}
	reply.WithMeta("step_count", len(rep.Steps))
	if f := rep.FirstFailure; f != nil {
		reply.Warn(fmt.Sprintf("step %s did not succeed: %s", f.Step, f.Reason))
		reply.Next(registry.NextStep{Tool: "compile.with_report", When: "you fixed what first_failure.remedy says", Why: "compile again and rerun"})
	} else {
		reply.Next(registry.NextStep{Tool: "compile.dag", When: "deploying is allowed", Why: "every step ran locally; upsert the pipeline",
			ArgsHint: map[string]any{"upsert": true}})
	}
	reply.Out = rep
	return reply, nil
}

// runPipelineError maps the local run's errors to tool errors; a report
// cut short by a limit travels in the details.
func runPipelineError(err error, rep ...*localrun.Report) error {
	details := map[string]any{}
	if len(rep) > 0 && rep[0] != nil {
		details["report"] = rep[0]
	}
	var ie *localrun.InputError
	var te *localrun.TimeoutError
	var se *localrun.StorageError
	var ue *localrun.RuntimeUnavailableError
	switch {
	case errors.As(err, &ie):
		details["argument"] = ie.Field
		return registry.Errorf(registry.CodeInvalidInput, "%s", ie.Error()).WithDetails(details)
	case errors.As(err, &te):
		details["step"] = te.Step
		return registry.Errorf(registry.CodeTimeout, "%s", te.Error()).WithDetails(details).
			Suggest(fmt.Sprintf("Make step %s finish on the sample data within the limit (a smaller sample, fewer rounds), then run again.", te.Step))
	case errors.As(err, &se):
		details["step"] = se.Step
		return registry.Errorf(registry.CodeStorageError, "%s", se.Error()).WithDetails(details).
			Suggest("Make the steps write less on the sample data (or send a smaller sample_data), then run again.")
	case errors.As(err, &ue):
		return registry.Errorf(registry.CodeRuntimeUnavailable, "%s", ue.Error()).
			Suggest("Ask the operator for a Linux 6.12+ kernel with user namespaces and workspace.python set to an interpreter with the ML libraries; meanwhile compile.validate checks the definition statically.", "compile.validate")
	}
	return err
}

// newLocalRunner makes the local pipeline runner with the configured
// interpreter and the script runs' process-tree bounds.
func newLocalRunner(opts Options) *localrun.Runner {
	s := opts.LocalRun
	if s.Python == "" {
		s.Python = opts.Python
	}
	s.Processes, s.TreeMemoryBytes, s.CPUWeight = uint64(max(opts.ScriptMaxProcesses, 0)), uint64(max(opts.ScriptMemoryBytes, 0)), uint64(max(opts.ScriptCPUWeight, 0))
	return localrun.NewRunner(s)
}
