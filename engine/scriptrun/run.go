// Package scriptrun runs one step script as its SageMaker job would run it:
// in the OS sandbox (engine/sandbox), with its contract's inputs, outputs,
// environment and job arguments laid out under a private /opt/ml, its code
// and sample inputs copied in from fs.FS sources, and the outputs it
// produced collected. It runs; it does not judge: the static checks of a
// script against its contract are engine/validate's, and the use-cases that
// combine the two are engine/verify's.
package scriptrun

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	sandboxpkg "github.com/cursus-dev/cursus/engine/sandbox"
	"github.com/cursus-dev/cursus/engine/steps"
)

//go:embed sandbox_runner.py
var sandboxRunner []byte

// DefaultLimits are the limits of a run that sets none.
func DefaultLimits() Limits { return Limits{}.withDefaults() }

// EntryConvention says how the sandbox runner calls a script.
const EntryConvention = "main(input_paths, output_paths, environ_vars, job_args) when defined, else the script as __main__"

// ErrRuntimeUnavailable means scripts cannot be run: no usable python3,
// or no sandbox to run them in.
var ErrRuntimeUnavailable = errors.New("scripts cannot be run")

// RuntimeUnavailableError wraps ErrRuntimeUnavailable with the reason.
type RuntimeUnavailableError struct {
	Reason string
	// Sandbox is set when python3 works but the kernel cannot confine it.
	Sandbox bool
}

func (e *RuntimeUnavailableError) Error() string {
	if e.Sandbox {
		return e.Reason
	}
	return "python3 is not available on PATH: " + e.Reason
}

func (e *RuntimeUnavailableError) Unwrap() error { return ErrRuntimeUnavailable }

// Limits bound one script run.
type Limits struct {
	Timeout        time.Duration // wall clock; default 60s
	MaxOutputBytes int           // stdout and stderr each; default 64 KiB
	MaxInputBytes  int64         // all files copied in (script, siblings, sample inputs); default 256 MiB
	MaxFileBytes   int64         // largest file the script may write; default 1 GiB
	MaxMemoryBytes int64         // address space of the script; default 4 GiB
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = 64 << 10
	}
	if l.MaxInputBytes <= 0 {
		l.MaxInputBytes = 256 << 20
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 1 << 30
	}
	if l.MaxMemoryBytes <= 0 {
		l.MaxMemoryBytes = 4 << 30
	}
	return l
}

// RunRequest is one step script to run.
type RunRequest struct {
	Interface *steps.Interface
	// Script is the script; the .py files beside it in its directory are
	// copied in with it, so its imports resolve.
	Script Source
	// SampleInputs maps a contract input name to a file or directory
	// copied into the sandbox.
	SampleInputs map[string]Source
	// Env overrides the contract's optional defaults and supplies required
	// variables.
	Env map[string]string
	// JobArgs maps a contract flag (normalised, e.g. "job_type") to its
	// value; they reach the script as job_args and as command-line flags.
	JobArgs map[string]string
	Limits  Limits
	// KeepSandbox leaves the sandbox on disk (the caller removes it).
	KeepSandbox bool
}

// Source is a file or a directory tree that a run copies into its sandbox:
// Path inside FS, slash-separated and relative as fs.ValidPath wants ("."
// is all of FS). Only regular files and directories are copied; a symlink,
// named pipe, device or socket is refused. No one file may be larger than
// MaxFileBytes (0: only the run's MaxInputBytes bounds it).
type Source struct {
	FS           fs.FS
	Path         string
	MaxFileBytes int64
}

// CopyError is a file a run refuses to copy into its sandbox. Path is the
// file's path in its Source's FS, never a server path; Limit is the cap it
// exceeds (0 when it is refused for what it is, not its size).
type CopyError struct {
	Path   string
	Reason string
	Limit  int64
}

func (e *CopyError) Error() string { return e.Path + " " + e.Reason }

// RunResult is what happened.
type RunResult struct {
	Success         bool            `json:"success"`
	ExitCode        int             `json:"exit_code"`
	TimedOut        bool            `json:"timed_out"`
	DurationSeconds float64         `json:"execution_time"`
	Stdout          string          `json:"stdout"`
	Stderr          string          `json:"stderr"`
	OutputTruncated bool            `json:"output_truncated"`
	ErrorMessage    string          `json:"error_message,omitempty"`
	Outputs         []OutputProduct `json:"outputs"`
	MissingOutputs  []string        `json:"missing_outputs"`
	Sandbox         string          `json:"sandbox,omitempty"`
	// Result is main()'s return value as JSON text, when it printed one.
	Result string `json:"main_result,omitempty"`
}

// OutputProduct reports one contract output after the run.
type OutputProduct struct {
	Name          string   `json:"name"`
	ContainerPath string   `json:"container_path"`
	Produced      bool     `json:"produced"`
	Files         []string `json:"files"`
	Bytes         int64    `json:"bytes"`
	// Dir is the sandbox directory holding the output (kept sandboxes only).
	Dir string `json:"dir,omitempty"`
}

// TreeLimits bound the whole process tree of each run, where the kernel
// gives runs a cgroup (sandbox.Containment says whether it does).
type TreeLimits struct {
	MaxProcesses int   // processes and threads alive at once; default 1024
	MemoryBytes  int64 // memory of the whole tree; default 4 GiB
	CPUWeight    int   // share of CPU under contention, 1-10000 (100: a peer); default 50
}

// DefaultTreeLimits are the tree limits of a runner that sets none.
var DefaultTreeLimits = TreeLimits{MaxProcesses: 1024, MemoryBytes: 4 << 30, CPUWeight: 50}

func (l TreeLimits) withDefaults() TreeLimits {
	if l.MaxProcesses <= 0 {
		l.MaxProcesses = DefaultTreeLimits.MaxProcesses
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultTreeLimits.MemoryBytes
	}
	if l.CPUWeight <= 0 {
		l.CPUWeight = DefaultTreeLimits.CPUWeight
	}
	l.CPUWeight = min(l.CPUWeight, 10000)
	return l
}

// Runner runs step scripts with python3, at most N at a time.
type Runner struct {
	sem chan struct{}
	// tree bounds each run's process tree.
	tree TreeLimits
	// configured names the interpreter UseInterpreter chose.
	configured string

	// unisolated lets scripts run without the sandbox when the kernel
	// cannot provide it.
	unisolated bool

	once   sync.Once
	python string
	err    error
	// pyFiles are the interpreter's own files, readable in the sandbox.
	pyDirs, pyFiles []string
	// sandboxErr says why the sandbox cannot run here (nil: it can).
	sandboxErr error
	// LookPath finds the interpreter; tests replace it.
	LookPath func(string) (string, error)
	// ProbeSandbox checks that the interpreter starts in the sandbox (nil:
	// it does); tests replace it to play a kernel that lacks something.
	ProbeSandbox func(context.Context) error
}

// NewRunner makes a runner allowing maxConcurrent runs at once (≥1).
func NewRunner(maxConcurrent int) *Runner {
	if maxConcurrent < 1 {
		maxConcurrent = 1
	}
	r := &Runner{sem: make(chan struct{}, maxConcurrent), LookPath: exec.LookPath, tree: DefaultTreeLimits}
	r.ProbeSandbox = r.probeSandbox
	return r
}

// LimitTrees sets the limits of each run's whole process tree (zero
// fields keep their defaults).
func (r *Runner) LimitTrees(l TreeLimits) { r.tree = l.withDefaults() }

// UseInterpreter makes the runner find python by name (or path) instead of
// python3 on PATH.
func (r *Runner) UseInterpreter(name string) {
	r.configured = name
	r.LookPath = func(string) (string, error) { return exec.LookPath(name) }
}

// AllowUnisolated lets scripts run without the OS sandbox where the
// kernel cannot provide it, instead of answering runtime_unavailable.
// Such scripts can read whatever the server's user can and reach the
// network.
func (r *Runner) AllowUnisolated() { r.unisolated = true }

// Runtime says which interpreter the runner uses.
func (r *Runner) Runtime() string {
	if r.configured != "" {
		return r.configured + " (configured)"
	}
	return "python3 from PATH"
}

// sandboxed and unisolated describe honestly what a run is and is not
// protected from, with and without the OS sandbox.
var (
	sandboxed = map[string][]string{
		"isolated": {
			"the script runs in a fresh temporary directory (cwd) with HOME and TMPDIR inside it, removed afterwards; the script, its .py siblings and the sample inputs are copied in (regular files only, each within a size cap)",
			"Landlock: the script can read only the interpreter's files and the sandbox, and write only the sandbox; native code (ctypes, C extensions) included",
			"no network: socket(2) and io_uring are refused by a seccomp filter, TCP bind/connect also by Landlock",
			"no signals or ptrace to any process outside the sandbox (Landlock scope), no capabilities, no_new_privs",
			"no namespaces and no mounts of its own: unshare, setns, clone with CLONE_NEW* flags and the mount calls are refused by the seccomp filter",
			"the environment is rebuilt from scratch: only PATH, HOME, TMPDIR, locale, the contract's variables and the caller's overrides",
			treeLine,
			"rlimits: CPU time (the time limit), address space, file size, open files, no core dumps",
			"contract container paths (/opt/ml/...) are mapped to directories inside the sandbox",
			"a concurrency cap bounds how many scripts run at once",
		},
		"not_isolated": {
			"the script runs as the server's user (its user namespace, if any, maps only that user)",
			"reads of the interpreter's directories (standard library, site-packages, system libraries) are allowed",
		},
	}
	unisolated = map[string][]string{
		"isolated": {
			"the script runs in a fresh temporary directory (cwd) with HOME and TMPDIR inside it, removed afterwards",
			"writes outside the sandbox and starting processes through Python's APIs are refused (audit hook)",
			"the environment is rebuilt from scratch: no credentials are inherited",
			"wall-clock limit: the process group is killed at the deadline",
		},
		"not_isolated": {
			"UNISOLATED (workspace.allow_unisolated_scripts): this kernel cannot sandbox scripts and the operator chose to run them anyway",
			"native code (ctypes, C extensions) can read and write anything the server's user can, including its credentials in /proc",
			"network access is not blocked",
			"processes that leave the process group (setsid) can outlive the call",
		},
	}
)

// treeLine stands for the line on process trees, which says what this
// kernel offers.
const treeLine = "(process tree)"

// Isolation describes what a run is and is not protected from here.
func (r *Runner) Isolation() map[string][]string {
	if r.Available() == nil && r.sandboxErr != nil {
		return unisolated
	}
	out := map[string][]string{}
	for k, lines := range sandboxed {
		out[k] = append([]string(nil), lines...)
	}
	for i, l := range out["isolated"] {
		if l == treeLine {
			out["isolated"][i] = "the script and everything it starts (setsid and double-forked processes included) are killed when it exits or at the deadline: " + sandboxpkg.Containment()
		}
	}
	if sandboxpkg.Cgroup() == nil {
		out["isolated"] = append(out["isolated"], fmt.Sprintf("its own cgroup: at most %d processes and threads, %d bytes of memory for the whole tree, CPU weight %d", r.tree.MaxProcesses, r.tree.MemoryBytes, r.tree.CPUWeight))
	} else {
		out["not_isolated"] = append(out["not_isolated"], "the number of processes and the memory of the whole tree are bounded by the pod, not per run")
	}
	return out
}

func (r *Runner) interpreter() (string, error) {
	r.once.Do(func() {
		p, err := r.LookPath("python3")
		if err != nil {
			r.err = &RuntimeUnavailableError{Reason: err.Error()}
			return
		}
		// Resolve shims (pyenv and friends) to the real binary once, with
		// the server's environment: inside the sandbox HOME is different
		// and a shim may no longer find its interpreter.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, p, "-c", "import sys; assert sys.version_info >= (3, 8); print(sys.executable)").Output()
		if err != nil {
			r.err = &RuntimeUnavailableError{Reason: fmt.Sprintf("%s does not run a usable Python 3.8+: %v", p, err)}
			return
		}
		r.python = strings.TrimSpace(string(out))
		if r.python == "" {
			r.python = p
		}
		if err := r.interpreterFiles(ctx); err != nil {
			r.err = &RuntimeUnavailableError{Reason: err.Error()}
			return
		}
		r.sandboxErr = r.ProbeSandbox(ctx)
	})
	return r.python, r.err
}

// interpreterFiles asks the interpreter, started as a script will be,
// where its own files are.
func (r *Runner) interpreterFiles(ctx context.Context) error {
	py, err := sandboxpkg.FindPython(ctx, r.python, sandboxEnv(os.TempDir(), nil))
	if err != nil {
		return err
	}
	// r.python, not py.Exe: a script is started by the name it resolved to.
	r.pyDirs = py.ReadDirs
	r.pyFiles = append([]string{r.python}, py.ReadFiles...)
	return nil
}

// probeSandbox starts the interpreter in the sandbox once, so a kernel or
// runtime that cannot confine it is found before any script runs.
func (r *Runner) probeSandbox(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "cursus-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return err
	}
	var stderr bytes.Buffer
	spec := r.sandboxSpec(dir, dir, []string{r.python, "-c", "import json, os, sys"}, sandboxEnv(dir, nil), DefaultLimits())
	_, err = sandboxpkg.Run(ctx, spec, io.Discard, &stderr)
	var unavailable *sandboxpkg.UnavailableError
	switch {
	case errors.As(err, &unavailable):
		return err
	case err != nil:
		return fmt.Errorf("%w: %s cannot start in it: %s", sandboxpkg.ErrUnavailable, filepath.Base(r.python), strings.TrimSpace(firstNonEmpty(lastLines(stderr.String(), 3), err.Error())))
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// sandboxSpec confines a run in sandboxDir: read the interpreter's files,
// read and write the sandbox and /dev/null, nothing else.
func (r *Runner) sandboxSpec(sandboxDir, cwd string, argv, env []string, lim Limits) sandboxpkg.Spec {
	cpu := uint64(lim.Timeout.Seconds()) + 1
	return sandboxpkg.Spec{Path: argv[0], Args: argv, Env: env, Dir: cwd,
		ReadDirs: r.pyDirs, ReadFiles: r.pyFiles,
		WriteDirs: []string{sandboxDir}, WriteFiles: []string{"/dev/null"},
		Limits: sandboxpkg.Limits{CPUSeconds: cpu, AddressSpace: uint64(lim.MaxMemoryBytes), FileSize: uint64(lim.MaxFileBytes), OpenFiles: 1024,
			Processes: uint64(r.tree.MaxProcesses), MemoryBytes: uint64(r.tree.MemoryBytes), CPUWeight: uint64(r.tree.CPUWeight)}}
}

// Available reports whether scripts can be run: python3 works and the
// sandbox does too (or the operator allowed unisolated runs).
func (r *Runner) Available() error {
	if _, err := r.interpreter(); err != nil {
		return err
	}
	if r.sandboxErr != nil && !r.unisolated {
		return &RuntimeUnavailableError{Sandbox: true, Reason: r.sandboxErr.Error() +
			" (workspace.allow_unisolated_scripts runs scripts without it, which is unsafe on a shared server)"}
	}
	return nil
}

// Run executes the script of req in a fresh sandbox.
func (r *Runner) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	if req.Interface == nil {
		return nil, errors.New("run: no step interface")
	}
	if req.Script.FS == nil {
		return nil, errors.New("run: no script")
	}
	for name, src := range req.SampleInputs {
		if src.FS == nil {
			return nil, fmt.Errorf("run: sample input %q has no file system", name)
		}
	}
	python, err := r.interpreter()
	if err != nil {
		return nil, err
	}
	if err := r.Available(); err != nil {
		return nil, err
	}
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	lim := req.Limits.withDefaults()

	created, err := os.MkdirTemp("", "cursus-run-")
	if err != nil {
		return nil, fmt.Errorf("create sandbox: %w", WithoutServerPath(err))
	}
	sandbox, err := filepath.EvalSymlinks(created)
	if err != nil {
		os.RemoveAll(created)
		return nil, fmt.Errorf("create sandbox: %w", WithoutServerPath(err))
	}
	// A kept sandbox is the caller's to remove only once it has its path:
	// a run that fails before answering removes it too.
	kept := false
	defer func() {
		if !kept {
			os.RemoveAll(sandbox)
		}
	}()
	sb, err := os.OpenRoot(sandbox)
	if err != nil {
		return nil, fmt.Errorf("open sandbox: %w", WithoutServerPath(err))
	}
	defer sb.Close()
	plan, err := prepareSandbox(ctx, sb, req, lim)
	if err != nil {
		return nil, err
	}
	pb, _ := json.Marshal(plan)
	if err := sb.WriteFile(".cursus/plan.json", pb, 0o600); err != nil {
		return nil, err
	}
	if err := sb.WriteFile(".cursus/runner.py", sandboxRunner, 0o600); err != nil {
		return nil, err
	}
	planFile := filepath.Join(sandbox, ".cursus", "plan.json")
	runner := filepath.Join(sandbox, ".cursus", "runner.py")

	runCtx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	argv := []string{python, "-B", runner, planFile}
	env := sandboxEnv(sandbox, plan.EnvironVars)
	stdout := &cappedBuffer{limit: lim.MaxOutputBytes}
	stderr := &cappedBuffer{limit: lim.MaxOutputBytes}
	start := time.Now()
	var state *os.ProcessState
	var runErr error
	if r.sandboxErr == nil {
		state, runErr = sandboxpkg.Run(runCtx, r.sandboxSpec(sandbox, filepath.Join(sandbox, "work"), argv, env, lim), stdout, stderr)
	} else {
		state, runErr = sandboxpkg.RunUnisolated(runCtx, argv, filepath.Join(sandbox, "work"), env, stdout, stderr)
	}
	res := &RunResult{DurationSeconds: time.Since(start).Seconds(), Stdout: stdout.String(), Stderr: stderr.String(),
		OutputTruncated: stdout.truncated || stderr.truncated, ExitCode: state.ExitCode()}
	switch {
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		res.TimedOut = true
		res.ErrorMessage = fmt.Sprintf("killed after the %s time limit", lim.Timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case runErr != nil:
		res.ErrorMessage = lastLines(res.Stderr, 5)
		if res.ErrorMessage == "" {
			res.ErrorMessage = runErr.Error()
		}
		if r.sandboxErr == nil {
			res.ErrorMessage += killedBy(res.ExitCode)
		}
	}
	for _, line := range strings.Split(res.Stdout, "\n") {
		if v, ok := strings.CutPrefix(line, "CURSUS_MAIN_RESULT "); ok {
			res.Result = v
		}
	}
	res.Outputs, res.MissingOutputs = collectOutputs(ctx, req.Interface, plan.OutputPaths, req.KeepSandbox)
	if err := ctx.Err(); err != nil {
		return nil, err // the listing was cut short
	}
	res.Success = runErr == nil && !res.TimedOut && len(res.MissingOutputs) == 0
	if runErr == nil && len(res.MissingOutputs) > 0 {
		res.ErrorMessage = "the script exited cleanly but did not produce: " + strings.Join(res.MissingOutputs, ", ")
	}
	if req.KeepSandbox {
		res.Sandbox, kept = sandbox, true
	}
	return res, nil
}

// killedBy explains a sandboxed exit status of 128+n: the supervisor
// reports a script killed by signal n that way.
func killedBy(code int) string {
	if code <= 128 || code > 128+64 {
		return ""
	}
	sig := syscall.Signal(code - 128)
	if sig == syscall.SIGSYS {
		return " (killed by SIGSYS: a system call the sandbox refuses)"
	}
	return fmt.Sprintf(" (killed by signal %d: %v)", int(sig), sig)
}

type runPlan struct {
	Script       string            `json:"script"`
	Sandbox      string            `json:"sandbox"`
	Root         string            `json:"root"`
	InputPaths   map[string]string `json:"input_paths"`
	OutputPaths  map[string]string `json:"output_paths"`
	EnvironVars  map[string]string `json:"environ_vars"`
	JobArgs      map[string]string `json:"job_args"`
	Argv         []string          `json:"argv"`
	MaxFileBytes int64             `json:"max_file_bytes"`
}

// containerPath maps /opt/ml/... to container/opt/ml/... in the sandbox.
func containerPath(p string) (string, error) {
	clean := path.Clean("/" + p)
	if clean != p && clean+"/" != p {
		return "", fmt.Errorf("container path %q is not clean", p)
	}
	if !strings.HasPrefix(clean, "/opt/ml") {
		return "", fmt.Errorf("container path %q is not under /opt/ml", p)
	}
	return "container" + clean, nil
}

// prepareSandbox lays out the sandbox sb and copies the script, its
// siblings and the sample inputs in; every write goes through sb, every
// read through a Source's FS.
func prepareSandbox(ctx context.Context, sb *os.Root, req RunRequest, lim Limits) (*runPlan, error) {
	dir := sb.Name()
	for _, d := range []string{".cursus", "work", "home", "tmp", "code", "container/opt/ml"} {
		if err := sb.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	c := req.Interface.Contract
	for name := range req.SampleInputs {
		if _, ok := c.Inputs.Get(name); !ok {
			return nil, fmt.Errorf("sample input %q is not an input of %s (inputs: %s)", name, req.Interface.StepType, inputList(c.Inputs.Keys()))
		}
	}
	cp := &copier{sandbox: sb, budget: lim.MaxInputBytes, total: lim.MaxInputBytes}
	// Copy the script (and its directory's Python siblings) in, so it can
	// neither be modified in place nor resolve imports outside.
	if err := cp.code(ctx, req.Script); err != nil {
		return nil, err
	}
	plan := &runPlan{Script: filepath.Join(dir, "code", path.Base(req.Script.Path)), Sandbox: dir, Root: filepath.Join(dir, "container"),
		InputPaths: map[string]string{}, OutputPaths: map[string]string{}, EnvironVars: map[string]string{},
		JobArgs: map[string]string{}, MaxFileBytes: lim.MaxFileBytes}
	for _, name := range c.Inputs.Keys() {
		port, _ := c.Inputs.Get(name)
		if port.Path == "" {
			continue
		}
		dst, err := containerPath(port.Path)
		if err != nil {
			return nil, fmt.Errorf("contract.inputs.%s: %w", name, err)
		}
		plan.InputPaths[name] = filepath.Join(dir, dst)
		src, given := req.SampleInputs[name]
		if !given {
			// An absent input still exists as an empty directory, as a
			// SageMaker channel with no data would.
			if path.Ext(dst) == "" {
				if err := sb.MkdirAll(dst, 0o700); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := cp.input(ctx, src, dst); err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
	}
	for _, name := range c.Outputs.Keys() {
		port, _ := c.Outputs.Get(name)
		if port.Path == "" {
			continue
		}
		dst, err := containerPath(port.Path)
		if err != nil {
			return nil, fmt.Errorf("contract.outputs.%s: %w", name, err)
		}
		if err := sb.MkdirAll(dst, 0o700); err != nil {
			return nil, err
		}
		plan.OutputPaths[name] = filepath.Join(dir, dst)
	}
	plan.EnvironVars, plan.JobArgs, plan.Argv = Invocation(c, req.Env, req.JobArgs)
	return plan, nil
}

// Invocation is what a script starts with: the contract's optional
// defaults overlaid with env, and job arguments keyed by normalised flag
// with their command line — the contract's flags in contract order
// (job_type defaults to training), then the others in name order.
func Invocation(c steps.Contract, env, jobArgs map[string]string) (environ, args map[string]string, argv []string) {
	environ, args = map[string]string{}, map[string]string{}
	for _, k := range c.EnvVars.Optional.Keys() {
		environ[k], _ = c.EnvVars.Optional.Get(k)
	}
	for k, v := range env {
		environ[k] = v
	}
	for _, ja := range c.JobArguments {
		key := steps.NormalizeFlag(ja.Flag)
		v, ok := jobArgs[key]
		if !ok && key == "job_type" {
			v, ok = "training", true
		}
		if ok {
			args[key] = v
			argv = append(argv, ja.Flag, v)
		}
	}
	extra := make([]string, 0, len(jobArgs))
	for k := range jobArgs {
		if _, ok := args[steps.NormalizeFlag(k)]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		key := steps.NormalizeFlag(k)
		if _, dup := args[key]; dup {
			continue
		}
		args[key] = jobArgs[k]
		argv = append(argv, "--"+key, jobArgs[k])
	}
	return environ, args, argv
}

// sandboxEnv is the whole environment of the child: nothing is inherited
// but PATH and the locale.
func sandboxEnv(sandbox string, vars map[string]string) []string {
	env := sandboxpkg.PythonEnv(sandbox)
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(vars[k], "\x00") {
			continue
		}
		env = append(env, k+"="+vars[k])
	}
	return env
}

// copier copies files into the sandbox: reads through each Source's FS,
// writes through the sandbox's os.Root (so a symlink raced into the
// sandbox cannot redirect them), all within one byte budget.
type copier struct {
	sandbox *os.Root
	budget  int64 // bytes still allowed
	total   int64 // the whole budget, for errors
}

// code copies the script and the .py files beside it into code/.
func (c *copier) code(ctx context.Context, script Source) error {
	dir, base := path.Dir(script.Path), path.Base(script.Path)
	entries, err := fs.ReadDir(script.FS, dir)
	if err != nil {
		return fmt.Errorf("script directory: %w", err)
	}
	found := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || (name != base && !strings.HasSuffix(name, ".py")) {
			continue
		}
		p := path.Join(dir, name)
		if why := irregular(e.Type()); why != "" {
			return fmt.Errorf("script directory: %w", &CopyError{Path: p, Reason: why})
		}
		if err := c.file(ctx, script, p, "code/"+name); err != nil {
			return fmt.Errorf("script directory: %w", err)
		}
		found = found || name == base
	}
	if !found {
		return fmt.Errorf("script %s: %w", script.Path, fs.ErrNotExist)
	}
	return nil
}

// input copies src, a file or a directory tree, to dst. A container input
// path without an extension is a directory, which a single file goes into.
func (c *copier) input(ctx context.Context, src Source, dst string) error {
	fi, err := fs.Lstat(src.FS, src.Path)
	if err != nil {
		return err
	}
	if why := irregular(fi.Mode()); why != "" {
		return &CopyError{Path: src.Path, Reason: why}
	}
	if !fi.IsDir() {
		parent, target := path.Dir(dst), dst
		if path.Ext(dst) == "" {
			parent, target = dst, path.Join(dst, path.Base(src.Path))
		}
		if err := c.sandbox.MkdirAll(parent, 0o700); err != nil {
			return err
		}
		return c.file(ctx, src, src.Path, target)
	}
	return fs.WalkDir(src.FS, src.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if why := irregular(d.Type()); why != "" {
			return &CopyError{Path: p, Reason: why}
		}
		rel := p
		if src.Path != "." {
			rel = strings.TrimPrefix(strings.TrimPrefix(p, src.Path), "/")
		}
		target := path.Join(dst, rel)
		if d.IsDir() {
			return c.sandbox.MkdirAll(target, 0o700)
		}
		return c.file(ctx, src, p, target)
	})
}

// file copies the regular file name of src to dst, within src's per-file
// cap and what is left of the budget.
func (c *copier) file(ctx context.Context, src Source, name, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in, err := src.FS.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if why := irregular(fi.Mode()); why != "" || fi.IsDir() {
		return &CopyError{Path: name, Reason: firstNonEmpty(why, "became a directory while it was copied")}
	}
	limit, tooBig := c.budget, &CopyError{Path: name, Limit: c.total,
		Reason: fmt.Sprintf("would take the files copied into the sandbox past their %d-byte total limit", c.total)}
	if src.MaxFileBytes > 0 && src.MaxFileBytes <= c.budget {
		limit, tooBig = src.MaxFileBytes, &CopyError{Path: name, Limit: src.MaxFileBytes,
			Reason: fmt.Sprintf("is larger than the %d-byte per-file limit", src.MaxFileBytes)}
	}
	// The size answers most cases before writing anything; the limited
	// copy covers a file that grows meanwhile.
	if fi.Size() > limit {
		return tooBig
	}
	out, err := c.sandbox.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = tooBig
	}
	c.budget -= n
	return err
}

// irregular says why a file of mode m is not copied, "" for a regular
// file or a directory.
func irregular(m fs.FileMode) string {
	switch {
	case m.IsRegular(), m.IsDir():
		return ""
	case m&fs.ModeSymlink != 0:
		return "is a symbolic link; links are not copied into the sandbox"
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe, not a regular file"
	case m&fs.ModeSocket != 0:
		return "is a socket, not a regular file"
	case m&fs.ModeDevice != 0:
		return "is a device, not a regular file"
	}
	return "is not a regular file"
}

// collectOutputs lists what the script wrote to each output directory
// (up to 100 names each, all bytes counted). It stops early when ctx ends.
func collectOutputs(ctx context.Context, iface *steps.Interface, outDirs map[string]string, keep bool) ([]OutputProduct, []string) {
	products := []OutputProduct{}
	missing := []string{}
	for _, name := range iface.Contract.Outputs.Keys() {
		port, _ := iface.Contract.Outputs.Get(name)
		dir, ok := outDirs[name]
		if !ok {
			continue
		}
		p := OutputProduct{Name: name, ContainerPath: port.Path, Files: []string{}}
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return filepath.SkipAll
			}
			if err != nil || d.IsDir() {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				p.Bytes += fi.Size()
			}
			rel, _ := filepath.Rel(dir, path)
			if len(p.Files) < 100 {
				p.Files = append(p.Files, filepath.ToSlash(rel))
			}
			return nil
		})
		p.Produced = p.Bytes > 0 || len(p.Files) > 0
		if keep {
			p.Dir = dir
		}
		if !p.Produced {
			missing = append(missing, name)
		}
		products = append(products, p)
	}
	return products, missing
}

// cappedBuffer keeps the first limit bytes written and drops the rest.
type cappedBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - c.buf.Len()
	if room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(c.buf.String(), "\uFFFD")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// WithoutServerPath is err without the path an *fs.PathError names: the
// error reaches callers, and the path is in the server's own temporary
// directory.
func WithoutServerPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// inputList names a contract's inputs in a message.
func inputList(keys []string) string {
	if len(keys) == 0 {
		return "(none declared)"
	}
	return strings.Join(keys, ", ")
}
