package validate

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
	MaxInputBytes  int64         // sample inputs copied in; default 256 MiB
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
	// Script is the absolute path of the script on disk.
	Script string
	// SampleInputs maps a contract input name to a file or directory
	// (absolute, already confined by the caller) copied into the sandbox.
	SampleInputs map[string]string
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

// Runner runs step scripts with python3, at most N at a time.
type Runner struct {
	sem chan struct{}
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
	r := &Runner{sem: make(chan struct{}, maxConcurrent), LookPath: exec.LookPath}
	r.ProbeSandbox = r.probeSandbox
	return r
}

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
			"the script runs in a fresh temporary directory (cwd) with HOME and TMPDIR inside it, removed afterwards; sample inputs are copied in",
			"Landlock: the script can read only the interpreter's files and the sandbox, and write only the sandbox; native code (ctypes, C extensions) included",
			"no network: socket(2) and io_uring are refused by a seccomp filter, TCP bind/connect also by Landlock",
			"no signals or ptrace to any process outside the sandbox (Landlock scope), no_new_privs",
			"the environment is rebuilt from scratch: only PATH, HOME, TMPDIR, locale, the contract's variables and the caller's overrides",
			"the script and everything it starts (setsid and double-forked processes included) are killed when it exits or at the deadline: a subreaper supervisor reaps the whole tree",
			"rlimits: CPU time (the time limit), address space, file size, open files, no core dumps",
			"contract container paths (/opt/ml/...) are mapped to directories inside the sandbox",
			"a concurrency cap bounds how many scripts run at once",
		},
		"not_isolated": {
			"the script runs as the server's user (no user namespace); the number of processes is bounded by the pod, not per run",
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

// Isolation describes what a run is and is not protected from here.
func (r *Runner) Isolation() map[string][]string {
	if r.Available() == nil && r.sandboxErr != nil {
		return unisolated
	}
	return sandboxed
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
// where its own files are: its executable, standard library,
// site-packages and shared libraries.
func (r *Runner) interpreterFiles(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, r.python, "-c", pyFilesQuery)
	cmd.Env = sandboxEnv(os.TempDir(), nil)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("ask %s for its files: %w", filepath.Base(r.python), err)
	}
	var files struct{ Dirs, Files []string }
	if err := json.Unmarshal(out, &files); err != nil {
		return fmt.Errorf("ask %s for its files: %w", filepath.Base(r.python), err)
	}
	r.pyDirs = append(systemLibDirs, files.Dirs...)
	r.pyFiles = append([]string{r.python, "/etc/ld.so.cache"}, files.Files...)
	return nil
}

// pyFilesQuery prints the interpreter's directories and files as JSON.
const pyFilesQuery = `import json, os, sys, sysconfig
dirs = {p for p in sys.path if os.path.isabs(p) and os.path.isdir(p) and p != "/"}
dirs.update(v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib") and os.path.isdir(v))
libdir = sysconfig.get_config_var("LIBDIR")
if libdir and os.path.isdir(libdir) and libdir != "/":
    dirs.add(libdir)
exe = os.path.realpath(sys.executable)
bindir = os.path.dirname(sys.executable)
files = [exe, os.path.join(bindir, "pyvenv.cfg"), os.path.join(os.path.dirname(bindir), "pyvenv.cfg")]
print(json.dumps({"dirs": sorted(dirs), "files": files}))
`

// systemLibDirs hold the C libraries the interpreter and its extensions
// load.
var systemLibDirs = []string{"/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib"}

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
		ReadDirs: r.pyDirs, ReadFiles: append(r.pyFiles, "/dev/urandom", "/dev/zero"),
		WriteDirs: []string{sandboxDir}, WriteFiles: []string{"/dev/null"},
		Limits: sandboxpkg.Limits{CPUSeconds: cpu, AddressSpace: uint64(lim.MaxMemoryBytes), FileSize: uint64(lim.MaxFileBytes), OpenFiles: 1024}}
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

	sandbox, err := os.MkdirTemp("", "cursus-run-")
	if err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	if sandbox, err = filepath.EvalSymlinks(sandbox); err != nil {
		return nil, err
	}
	if !req.KeepSandbox {
		defer os.RemoveAll(sandbox)
	}
	plan, err := prepareSandbox(sandbox, req, lim)
	if err != nil {
		return nil, err
	}
	planFile := filepath.Join(sandbox, ".cursus", "plan.json")
	runner := filepath.Join(sandbox, ".cursus", "runner.py")
	pb, _ := json.Marshal(plan)
	if err := os.WriteFile(planFile, pb, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(runner, sandboxRunner, 0o600); err != nil {
		return nil, err
	}

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
		state, runErr = runUnisolated(runCtx, argv, filepath.Join(sandbox, "work"), env, stdout, stderr)
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
	res.Outputs, res.MissingOutputs = collectOutputs(sandbox, req.Interface, plan.OutputPaths, req.KeepSandbox)
	res.Success = runErr == nil && !res.TimedOut && len(res.MissingOutputs) == 0
	if runErr == nil && len(res.MissingOutputs) > 0 {
		res.ErrorMessage = "the script exited cleanly but did not produce: " + strings.Join(res.MissingOutputs, ", ")
	}
	if req.KeepSandbox {
		res.Sandbox = sandbox
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

// runUnisolated runs argv in its own process group, killed at the
// deadline: what is left when the kernel offers no sandbox and the
// operator allowed running without one.
func runUnisolated(ctx context.Context, argv []string, dir string, env []string, stdout, stderr io.Writer) (*os.ProcessState, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if cmd.Process != nil {
		// Reap anything the script left behind in its group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return cmd.ProcessState, err
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

// containerPath maps /opt/ml/... to <root>/opt/ml/....
func containerPath(root, p string) (string, error) {
	clean := filepath.Clean("/" + p)
	if clean != p && clean+"/" != p {
		return "", fmt.Errorf("container path %q is not clean", p)
	}
	if !strings.HasPrefix(clean, "/opt/ml") {
		return "", fmt.Errorf("container path %q is not under /opt/ml", p)
	}
	return filepath.Join(root, clean), nil
}

func prepareSandbox(sandbox string, req RunRequest, lim Limits) (*runPlan, error) {
	root := filepath.Join(sandbox, "container")
	for _, d := range []string{".cursus", "work", "home", "tmp", "container/opt/ml"} {
		if err := os.MkdirAll(filepath.Join(sandbox, d), 0o700); err != nil {
			return nil, err
		}
	}
	// Copy the script (and its directory's Python siblings) in, so it can
	// neither be modified in place nor resolve imports outside.
	scriptDir := filepath.Join(sandbox, "code")
	if err := os.MkdirAll(scriptDir, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Dir(req.Script))
	if err != nil {
		return nil, fmt.Errorf("read script directory: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".py") {
			if _, err := copyFile(filepath.Join(filepath.Dir(req.Script), e.Name()), filepath.Join(scriptDir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	plan := &runPlan{Script: filepath.Join(scriptDir, filepath.Base(req.Script)), Sandbox: sandbox, Root: root,
		InputPaths: map[string]string{}, OutputPaths: map[string]string{}, EnvironVars: map[string]string{},
		JobArgs: map[string]string{}, MaxFileBytes: lim.MaxFileBytes}
	if _, err := os.Stat(plan.Script); err != nil {
		return nil, fmt.Errorf("script %s: %w", filepath.Base(req.Script), err)
	}

	c := req.Interface.Contract
	budget := lim.MaxInputBytes
	for _, name := range c.Inputs.Keys() {
		port, _ := c.Inputs.Get(name)
		if port.Path == "" {
			continue
		}
		dst, err := containerPath(root, port.Path)
		if err != nil {
			return nil, fmt.Errorf("contract.inputs.%s: %w", name, err)
		}
		plan.InputPaths[name] = dst
		src, given := req.SampleInputs[name]
		if !given {
			// An absent input still exists as an empty directory, as a
			// SageMaker channel with no data would.
			if filepath.Ext(dst) == "" {
				if err := os.MkdirAll(dst, 0o700); err != nil {
					return nil, err
				}
			}
			continue
		}
		n, err := copyInput(src, dst, budget)
		if err != nil {
			return nil, fmt.Errorf("sample input %q: %w", name, err)
		}
		budget -= n
	}
	for name := range req.SampleInputs {
		if _, ok := c.Inputs.Get(name); !ok {
			return nil, fmt.Errorf("sample input %q is not an input of %s (inputs: %s)", name, req.Interface.StepType, keyList(c.Inputs.Keys()))
		}
	}
	for _, name := range c.Outputs.Keys() {
		port, _ := c.Outputs.Get(name)
		if port.Path == "" {
			continue
		}
		dst, err := containerPath(root, port.Path)
		if err != nil {
			return nil, fmt.Errorf("contract.outputs.%s: %w", name, err)
		}
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return nil, err
		}
		plan.OutputPaths[name] = dst
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
		key := NormalizeFlag(ja.Flag)
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
		if _, ok := args[NormalizeFlag(k)]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		key := NormalizeFlag(k)
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
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(sandbox, "home"),
		"TMPDIR=" + filepath.Join(sandbox, "tmp"),
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONNOUSERSITE=1",
		"PYTHONIOENCODING=utf-8",
		"MPLBACKEND=Agg",
	}
	for _, k := range []string{"LANG", "LC_ALL"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
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

// copyInput copies a file or directory tree to dst. Symlinks are skipped:
// a sample input may not smuggle in a link to elsewhere.
func copyInput(src, dst string, budget int64) (int64, error) {
	info, err := os.Lstat(src)
	if err != nil {
		return 0, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return 0, fmt.Errorf("%s is a symbolic link", filepath.Base(src))
	}
	if info.Mode().IsRegular() {
		target := dst
		if filepath.Ext(dst) == "" {
			// Container inputs are directories; the file goes inside.
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return 0, err
			}
			target = filepath.Join(dst, filepath.Base(src))
		} else if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return 0, err
		}
		if info.Size() > budget {
			return 0, fmt.Errorf("sample inputs exceed the %d-byte limit", budget)
		}
		return copyFile(src, target)
	}
	var total int64
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if total+fi.Size() > budget {
				return fmt.Errorf("sample inputs exceed the %d-byte limit", budget)
			}
			n, err := copyFile(p, target)
			total += n
			return err
		}
		return nil // symlinks, devices: skipped
	})
	return total, err
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func collectOutputs(sandbox string, iface *steps.Interface, outDirs map[string]string, keep bool) ([]OutputProduct, []string) {
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
