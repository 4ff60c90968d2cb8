// Package localrun runs a compiled SageMaker pipeline definition on this
// machine: each step's code executes in the script sandbox
// (engine/sandbox) with SageMaker's container layout bind-mounted at
// /opt/ml, S3 is a directory (or the working copy of a real S3, a
// Remote), and property references, Std:Join,
// parameters and execution variables resolve from what each emulated job
// produced. Model, Transform and RegisterModel steps go through
// engine/serving. The result is a typed Report; nothing here knows HTTP,
// MCP or tool names.
package localrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/serving"
)

// Step statuses.
const (
	StatusSucceeded          = "succeeded"
	StatusFailed             = "failed"
	StatusSkipped            = "skipped"
	StatusRuntimeUnavailable = "runtime_unavailable"
)

// Settings bound and shape every run of a Runner.
type Settings struct {
	// Python is the interpreter (a name on PATH or a path; default python3).
	Python string
	// StepTimeout bounds each job's wall clock (default 10 minutes).
	StepTimeout time.Duration
	// MaxTrials is how many training jobs a tuning step runs at most
	// (default 2; a request may ask for fewer or more up to MaxTrialsCap).
	MaxTrials int
	// MaxSampleBytes caps the sample data a request sends (default 16 MiB).
	MaxSampleBytes int64
	// MaxStorageBytes caps what one run writes: objects and job
	// directories together (default 4 GiB).
	MaxStorageBytes int64
	// MaxMemoryBytes is each job's address-space limit (default 16 GiB:
	// PyTorch maps much more than it uses).
	MaxMemoryBytes int64
	// LogTailBytes is how much of each job's log the report keeps
	// (default 4 KiB).
	LogTailBytes int
	// TempDir holds the run's directories (default os.TempDir()).
	TempDir string
	// Processes, TreeMemoryBytes and CPUWeight bound each job's whole
	// process tree where the sandbox gives runs a cgroup (0: unset).
	Processes, TreeMemoryBytes, CPUWeight uint64
}

// MaxTrialsCap is the most tuning trials a request may ask for.
const MaxTrialsCap = 20

func (s Settings) withDefaults() Settings {
	if s.Python == "" {
		s.Python = "python3"
	}
	if s.StepTimeout <= 0 {
		s.StepTimeout = 10 * time.Minute
	}
	if s.MaxTrials <= 0 {
		s.MaxTrials = 2
	}
	if s.MaxSampleBytes <= 0 {
		s.MaxSampleBytes = 16 << 20
	}
	if s.MaxStorageBytes <= 0 {
		s.MaxStorageBytes = 4 << 30
	}
	if s.MaxMemoryBytes <= 0 {
		s.MaxMemoryBytes = 16 << 30
	}
	if s.LogTailBytes <= 0 {
		s.LogTailBytes = 4 << 10
	}
	if s.TempDir == "" {
		s.TempDir = os.TempDir()
	}
	return s
}

// Request is one local run.
type Request struct {
	// Definition is the pipeline definition JSON.
	Definition []byte
	// Code is every code object the definition points at (from
	// CodeFromArtifacts or CodeFromManifest), placed in the object store
	// before the first step.
	Code []Code
	// SampleData are files (name → bytes) placed under every S3 input the
	// definition reads from outside the pipeline; nil uses DefaultSample.
	SampleData map[string][]byte
	// MaxTrials overrides Settings.MaxTrials when positive.
	MaxTrials int
	// ObjectDir keeps the object store there (the caller removes it);
	// empty: a temporary directory removed with the run.
	ObjectDir string
	// Progress is told when each step starts and ends.
	Progress func(done, total int, msg string)
	// Remote, when set, is the real S3 behind the object store: objects
	// the run did not produce are read from it, and what each job
	// produces is written through to it. Code and sample data stay
	// local, and SampleData nil then means no sample data.
	Remote Remote
}

// Code is one code object: its S3 URI and bytes.
type Code struct {
	URI  string
	Data []byte
}

// Report is what a run did.
type Report struct {
	// OK: every step succeeded.
	OK                  bool         `json:"ok"`
	PipelineExecutionID string       `json:"pipeline_execution_id"`
	Steps               []StepReport `json:"steps"`
	// FirstFailure is the first step that did not succeed and how to fix
	// it.
	FirstFailure    *Failure `json:"first_failure,omitempty"`
	DurationSeconds float64  `json:"duration_seconds"`
	// ScriptSeconds is the sum of the jobs' own run times.
	ScriptSeconds float64 `json:"script_seconds"`
	// Storage says where the objects were (s3://… is the local store).
	Storage string `json:"storage"`
}

// StepReport is one step of the run.
type StepReport struct {
	Name            string  `json:"name"`
	Type            string  `json:"type"`
	Status          string  `json:"status"`
	DurationSeconds float64 `json:"duration_seconds"`
	ScriptSeconds   float64 `json:"script_seconds,omitempty"`
	// Objects are the S3 objects the step wrote.
	Objects []Object `json:"objects"`
	LogTail string   `json:"log_tail,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Missing names the package a runtime_unavailable step needs.
	Missing string `json:"missing,omitempty"`
	// Trials are a tuning step's training jobs.
	Trials []Trial `json:"trials,omitempty"`
	// Properties are the step's properties other steps may refer to
	// (the job's name and outputs).
	Properties map[string]any `json:"properties,omitempty"`
}

// Object is one object in the local store.
type Object struct {
	URI   string `json:"uri"`
	Bytes int64  `json:"bytes"`
}

// Trial is one tuning trial.
type Trial struct {
	TrainingJobName string            `json:"training_job_name"`
	HyperParameters map[string]string `json:"hyperparameters"`
	Objective       *float64          `json:"objective,omitempty"`
	Status          string            `json:"status"`
}

// Failure says which step failed, at which field of its arguments, and
// how to fix it.
type Failure struct {
	Step   string `json:"step"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
	Remedy string `json:"remedy"`
}

// InputError is a request the run cannot start from.
type InputError struct{ Field, Reason string }

func (e *InputError) Error() string { return e.Field + " " + e.Reason }

// StorageError is a run that wrote more than it may, or a disk that
// filled.
type StorageError struct {
	Step  string
	What  string
	Limit int64
	Err   error
}

func (e *StorageError) Error() string {
	where := ""
	if e.Step != "" {
		where = "step " + e.Step + ": "
	}
	if e.Limit > 0 {
		return fmt.Sprintf("%s%s would pass the run's %d-byte storage limit", where, e.What, e.Limit)
	}
	return fmt.Sprintf("%s%s: %v", where, e.What, e.Err)
}

func (e *StorageError) Unwrap() error { return e.Err }

// TimeoutError is a job that ran past the step time limit.
type TimeoutError struct {
	Step  string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("step %s ran past the %s step time limit and was killed", e.Step, e.Limit)
}

// NoObjectsError is an input whose S3 location holds nothing.
type NoObjectsError struct{ URI string }

func (e *NoObjectsError) Error() string { return "no S3 objects found under " + e.URI }

// RuntimeUnavailableError means no job can run here: no interpreter, or
// no sandbox with its own mount namespace.
type RuntimeUnavailableError struct{ Reason string }

func (e *RuntimeUnavailableError) Error() string { return "the local run is unavailable: " + e.Reason }

// storageErr turns a full disk into a StorageError.
func storageErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG) {
		return &StorageError{What: "the local object store", Err: err}
	}
	return err
}

// Runner runs definitions; it finds the interpreter once.
type Runner struct {
	set Settings

	once sync.Once
	py   *interpreter
	err  error

	srvOnce sync.Once
	srv     *serving.Runtime
}

// serving is the runtime Model, Transform and RegisterModel steps load
// models with.
func (r *Runner) serving() *serving.Runtime {
	r.srvOnce.Do(func() {
		python := r.set.Python
		if py, err := r.interpreter(context.Background()); err == nil {
			python = py.python
		}
		r.srv = &serving.Runtime{Python: python, Limits: serving.Limits{LoadTimeout: r.set.StepTimeout, InvokeTimeout: r.set.StepTimeout,
			MaxMemoryBytes: r.set.MaxMemoryBytes}}
	})
	return r.srv
}

// NewRunner makes a runner with these settings.
func NewRunner(s Settings) *Runner { return &Runner{set: s.withDefaults()} }

// stepFailure is why one step did not succeed.
type stepFailure struct {
	status  string // failed (default) or runtime_unavailable
	field   string
	reason  string
	remedy  string
	missing string
	fatal   error // a TimeoutError or StorageError that ends the call
}

func (f *stepFailure) Error() string { return f.reason }

func fail(field, remedy, format string, args ...any) *stepFailure {
	return &stepFailure{field: field, remedy: remedy, reason: fmt.Sprintf(format, args...)}
}

// stepResult is what one emulated step produced.
type stepResult struct {
	props   map[string]any
	logTail string
	script  time.Duration
	trials  []Trial
}

// run is the state of one run.
type run struct {
	r       *Runner
	req     Request
	def     *definition
	store   *store
	work    string // job directories live here
	scope   *scope
	execID  string
	jobSeq  int
	sampled map[string]bool // external input URIs the sample data went to
	models  map[string]serving.Model
}

// Run executes the definition. A step that fails is in the report (ok
// false, first_failure); the error is for a run that could not start (an
// *InputError, a *RuntimeUnavailableError), ran past a limit (a
// *TimeoutError, a *StorageError: the report so far comes with it) or
// was cancelled (ctx.Err()).
func (r *Runner) Run(ctx context.Context, req Request) (*Report, error) {
	def, err := parseDefinition(req.Definition)
	if err != nil {
		return nil, err
	}
	order, upstream, err := def.order()
	if err != nil {
		return nil, err
	}
	if req.SampleData == nil && req.Remote == nil {
		req.SampleData = DefaultSample()
	}
	var sampleBytes int64
	for name, b := range req.SampleData {
		if err := checkSampleName(name); err != nil {
			return nil, err
		}
		sampleBytes += int64(len(b))
	}
	if sampleBytes > r.set.MaxSampleBytes {
		return nil, &InputError{Field: "sample_data", Reason: fmt.Sprintf("is %d bytes, more than the %d-byte limit (local_run.max_sample_bytes)", sampleBytes, r.set.MaxSampleBytes)}
	}
	if _, err := r.interpreter(ctx); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(r.set.TempDir, "cursus-localrun-")
	if err != nil {
		return nil, &StorageError{What: "the run's directory", Err: err}
	}
	defer os.RemoveAll(root)
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	objDir := req.ObjectDir
	if objDir == "" {
		objDir = filepath.Join(root, "s3")
	}
	if err := os.MkdirAll(objDir, 0o700); err != nil {
		return nil, &StorageError{What: "the object store", Err: err}
	}
	st := newStore(objDir, r.set.MaxStorageBytes)
	st.ctx, st.remote = ctx, req.Remote
	ru := &run{r: r, req: req, def: def, store: st, work: filepath.Join(root, "jobs"),
		sampled: map[string]bool{}, models: map[string]serving.Model{}}
	if err := os.MkdirAll(ru.work, 0o700); err != nil {
		return nil, &StorageError{What: "the run's directory", Err: err}
	}
	ru.execID = executionID()
	start := time.Now()
	ru.scope = &scope{params: map[string]any{}, props: map[string]map[string]any{}, execution: map[string]any{
		"PipelineExecutionId":          ru.execID,
		"PipelineExecutionArn":         "arn:aws:sagemaker:local:000000000000:pipeline/local/execution/" + ru.execID,
		"PipelineName":                 "local",
		"StartDateTime":                start.UTC().Format(time.RFC3339),
		"CurrentDateTime":              start.UTC().Format(time.RFC3339),
		"PipelineExperimentName":       "local",
		"PipelineExecutionDisplayName": "local-" + ru.execID,
	}}
	for _, p := range def.Parameters {
		ru.scope.params[p.Name] = p.DefaultValue
	}
	for _, c := range req.Code {
		if err := ru.store.putLocal(c.URI, c.Data); err != nil {
			var se *StorageError
			if errors.As(err, &se) {
				return nil, err
			}
			return nil, &InputError{Field: "manifest", Reason: fmt.Sprintf("code object %s: %v", c.URI, err)}
		}
	}
	if err := checkCode(def, req.Code); err != nil {
		return nil, err
	}
	if err := ru.placeSample(); err != nil {
		return nil, err
	}

	rep := &Report{PipelineExecutionID: ru.execID, Steps: make([]StepReport, len(def.Steps)), Storage: "local object store (a temporary directory)"}
	if req.ObjectDir != "" {
		rep.Storage = "local object store at the caller's directory"
	}
	if req.Remote != nil {
		rep.Storage = "S3 (the operator's configured endpoint), through a local working copy"
	}
	for i, s := range def.Steps {
		rep.Steps[i] = StepReport{Name: s.Name, Type: s.Type, Status: StatusSkipped, Objects: []Object{}}
	}
	status := map[string]string{}
	total := len(order)
	var fatal error
	for n, i := range order {
		s := def.Steps[i]
		sr := &rep.Steps[i]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		blocked := rep.FirstFailure != nil || fatal != nil
		for _, up := range upstream[s.Name] {
			if status[up] != StatusSucceeded {
				blocked = true
			}
		}
		if blocked {
			status[s.Name] = StatusSkipped
			continue
		}
		if req.Progress != nil {
			req.Progress(n, total, fmt.Sprintf("running %s (%s)", s.Name, s.Type))
		}
		before := ru.store.objects()
		t0 := time.Now()
		res, err := ru.step(ctx, s)
		sr.DurationSeconds = time.Since(t0).Seconds()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sr.Objects = newObjects(before, ru.store.objects())
		if res != nil {
			sr.LogTail, sr.ScriptSeconds, sr.Trials = res.logTail, res.script.Seconds(), res.trials
			rep.ScriptSeconds += res.script.Seconds()
		}
		if err != nil {
			f := asFailure(err)
			sr.Status = f.status
			sr.Error, sr.Missing = f.reason, f.missing
			if f.status == "" {
				sr.Status = StatusFailed
			}
			status[s.Name] = sr.Status
			if rep.FirstFailure == nil {
				rep.FirstFailure = &Failure{Step: s.Name, Field: f.field, Reason: f.reason, Remedy: f.remedy}
			}
			if f.fatal != nil {
				fatal = f.fatal
			}
		} else {
			sr.Status = StatusSucceeded
			status[s.Name] = StatusSucceeded
			ru.scope.props[s.Name] = res.props
			sr.Properties = summary(res.props)
		}
		if req.Progress != nil {
			req.Progress(n+1, total, fmt.Sprintf("%s %s", s.Name, sr.Status))
		}
	}
	rep.DurationSeconds = time.Since(start).Seconds()
	rep.OK = rep.FirstFailure == nil && fatal == nil
	return rep, fatal
}

// asFailure turns a step's error into a stepFailure.
func asFailure(err error) *stepFailure {
	var f *stepFailure
	if errors.As(err, &f) {
		return f
	}
	var re *RefError
	if errors.As(err, &re) {
		return &stepFailure{field: re.Field, reason: re.Error(),
			remedy: fmt.Sprintf("Fix %s: %s. Refer only to outputs the upstream step declares and writes (its interface lists them).", re.Field, strings.TrimSpace(re.Ref+" "+re.Reason))}
	}
	var rme *RemoteError
	if errors.As(err, &rme) {
		return remoteFailure("", rme)
	}
	var se *StorageError
	if errors.As(err, &se) {
		return &stepFailure{reason: se.Error(), fatal: se, remedy: "Write less: the step's outputs and the run's objects together must stay within the local run's storage limit."}
	}
	return &stepFailure{reason: err.Error(), remedy: "See the step's error and log tail."}
}

// remoteFailure is a step that failed on a call to the configured S3.
func remoteFailure(field string, e *RemoteError) *stepFailure {
	remedy := fmt.Sprintf("The run could not %s %s on the configured S3: check that the object's bucket exists and the server's AWS "+
		"credentials may %s it, or ask the operator to check the S3 endpoint (workspace.run_pipeline_s3); then run again.", e.Op, e.URI, e.Op)
	if _, down := errors.AsType[*sagemaker.UnreachableError](e); down {
		remedy = "The configured S3 could not be reached: ask the operator to check the S3 endpoint and network (aws.s3_endpoint, workspace.run_pipeline_s3), then run again."
	}
	return &stepFailure{field: field, reason: e.Error(), remedy: remedy}
}

// newObjects lists what was written between two snapshots of the store.
func newObjects(before, after map[string]int64) []Object {
	out := []Object{}
	for uri, n := range after {
		if before[uri] != n {
			out = append(out, Object{URI: uri, Bytes: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// summary is the part of a step's properties the report shows.
func summary(props map[string]any) map[string]any {
	keep := []string{"ProcessingJobName", "TrainingJobName", "ModelArtifacts", "HyperParameterTuningJobName", "BestTrainingJob",
		"ModelName", "TransformJobName", "TransformOutput", "ModelPackageArn", "FinalMetricDataList", "ProcessingOutputConfig"}
	out := map[string]any{}
	for _, k := range keep {
		if v, ok := props[k]; ok {
			out[k] = v
		}
	}
	return out
}

// step emulates one step by its type.
func (ru *run) step(ctx context.Context, s rawStep) (*stepResult, error) {
	args, err := ru.scope.resolve(s.Arguments, "Arguments")
	if err != nil {
		return nil, err
	}
	am, _ := args.(map[string]any)
	switch s.Type {
	case "Processing":
		return ru.processing(ctx, s, am)
	case "Training":
		return ru.training(ctx, s, am)
	case "Tuning":
		return ru.tuning(ctx, s, am)
	case "Model":
		return ru.model(ctx, s, am)
	case "Transform":
		return ru.transform(ctx, s, am)
	case "RegisterModel":
		return ru.registerModel(ctx, s, am)
	}
	return nil, &stepFailure{status: StatusRuntimeUnavailable, reason: fmt.Sprintf("step type %s is not emulated by the local run", s.Type),
		missing: s.Type, remedy: "Run the pipeline on SageMaker to exercise this step; the local run covers Processing, Training, Tuning, Model, Transform and RegisterModel."}
}
