package localrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cursus-dev/cursus/engine/sandbox"
)

// mlRoot is where SageMaker's containers keep their inputs, code and
// outputs; each job's own directory is bind-mounted there.
const mlRoot = "/opt/ml"

// interpreter is the Python the jobs run and the files it reads.
type interpreter struct {
	python      string
	dirs, files []string
	// have caches which modules are importable.
	mu   sync.Mutex
	have map[string]bool
}

// interpreter finds the interpreter once and checks that a job can run
// in a sandbox with its own mount namespace.
func (r *Runner) interpreter(ctx context.Context) (*interpreter, error) {
	r.once.Do(func() {
		r.py, r.err = r.findInterpreter()
	})
	return r.py, r.err
}

func (r *Runner) findInterpreter() (*interpreter, error) {
	if err := sandbox.Check(); err != nil {
		return nil, &RuntimeUnavailableError{Reason: err.Error()}
	}
	if err := sandbox.Namespaces(); err != nil {
		return nil, &RuntimeUnavailableError{Reason: "jobs need a private mount namespace for " + mlRoot + ": " + err.Error()}
	}
	p, err := exec.LookPath(r.set.Python)
	if err != nil {
		return nil, &RuntimeUnavailableError{Reason: fmt.Sprintf("no Python interpreter %q: %v", r.set.Python, err)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	py, err := sandbox.FindPython(ctx, p, []string{"PATH=/usr/bin:/bin", "PYTHONNOUSERSITE=1"})
	if err != nil {
		return nil, &RuntimeUnavailableError{Reason: err.Error()}
	}
	// Numerical libraries size themselves by the machine's CPUs and memory.
	return &interpreter{python: py.Exe, dirs: py.ReadDirs,
		files: append(py.ReadFiles, "/proc/cpuinfo", "/proc/meminfo"), have: map[string]bool{}}, nil
}

// importable reports whether the interpreter can import module.
func (py *interpreter) importable(ctx context.Context, module string) bool {
	py.mu.Lock()
	defer py.mu.Unlock()
	if v, ok := py.have[module]; ok {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py.python, "-c", "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)", module)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONNOUSERSITE=1"}
	ok := cmd.Run() == nil
	py.have[module] = ok
	return ok
}

// job is one container run: dir holds ml/ (seen as /opt/ml), home/ and
// tmp/.
type job struct {
	step string
	dir  string
	argv []string // argv[0] "python"/"python3" is the interpreter
	cwd  string   // a path inside the container
	env  map[string]string
}

// newJob makes a job directory with SageMaker's layout.
func (ru *run) newJob(step string) (*job, error) {
	ru.jobSeq++
	dir := filepath.Join(ru.work, fmt.Sprintf("%03d", ru.jobSeq))
	for _, d := range []string{"ml", "home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, &StorageError{Step: step, What: "the job directory", Err: err}
		}
	}
	return &job{step: step, dir: dir, env: map[string]string{}}, nil
}

// host maps a container path under /opt/ml to the job's directory.
func (j *job) host(containerPath string) (string, error) {
	clean := filepath.Clean(containerPath)
	if clean != mlRoot && !strings.HasPrefix(clean, mlRoot+"/") {
		return "", fmt.Errorf("%s is not under %s, the only container path the local run provides", containerPath, mlRoot)
	}
	return filepath.Join(j.dir, "ml", strings.TrimPrefix(clean, mlRoot)), nil
}

// execResult is how a job ended.
type execResult struct {
	exitCode int
	log      string // the whole log (capped at maxLog, the end kept)
	script   time.Duration
	err      error // nil: exit 0
}

// maxLog is the most of a job's log kept for metric parsing.
const maxLog = 1 << 20

// exec runs the job in the sandbox. A job over its time limit is a
// *TimeoutError, one that fills its storage a *StorageError.
func (ru *run) exec(ctx context.Context, j *job) (*execResult, error) {
	py, err := ru.r.interpreter(ctx)
	if err != nil {
		return nil, err
	}
	argv := append([]string{}, j.argv...)
	if argv[0] == "python" || argv[0] == "python3" || argv[0] == "/usr/bin/python3" || argv[0] == "/usr/local/bin/python3" {
		argv[0] = py.python
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + filepath.Join(j.dir, "home"), "TMPDIR=" + filepath.Join(j.dir, "tmp"),
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1", "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8", "MPLBACKEND=Agg",
		"OMP_NUM_THREADS=2", "LANG=C.UTF-8"}
	keys := make([]string, 0, len(j.env))
	for k := range j.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(j.env[k], "\x00") {
			continue
		}
		env = append(env, k+"="+j.env[k])
	}
	lim := ru.r.set
	spec := sandbox.Spec{Path: argv[0], Args: argv, Env: env, Dir: j.cwd,
		ReadDirs: py.dirs, ReadFiles: py.files,
		WriteDirs: []string{j.dir}, WriteFiles: []string{"/dev/null"},
		Binds: []sandbox.Bind{{Source: filepath.Join(j.dir, "ml"), Target: mlRoot}},
		Limits: sandbox.Limits{CPUSeconds: uint64(lim.StepTimeout.Seconds())*2 + 1, AddressSpace: uint64(lim.MaxMemoryBytes),
			FileSize: uint64(lim.MaxStorageBytes), OpenFiles: 4096, Processes: lim.Processes, MemoryBytes: lim.TreeMemoryBytes, CPUWeight: lim.CPUWeight}}
	jctx, cancel := context.WithTimeout(ctx, lim.StepTimeout)
	defer cancel()
	// A watcher stops a job that writes past the run's storage budget.
	var full bool
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if dirSize(j.dir)+ru.store.usedBytes() > lim.MaxStorageBytes {
					full = true
					cancel()
					return
				}
			}
		}
	}()
	log := &tailBuffer{limit: maxLog}
	t0 := time.Now()
	state, runErr := sandbox.Run(jctx, spec, log, log)
	took := time.Since(t0)
	close(stop)
	wg.Wait()
	res := &execResult{log: log.String(), script: took, err: runErr}
	if state != nil {
		res.exitCode = state.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case full || storageInLog(res.log) && dirSize(j.dir)+ru.store.usedBytes() > lim.MaxStorageBytes*9/10:
		return res, &StorageError{Step: j.step, What: "the job's files", Limit: lim.MaxStorageBytes}
	case errors.Is(jctx.Err(), context.DeadlineExceeded):
		return res, &TimeoutError{Step: j.step, Limit: lim.StepTimeout}
	}
	var unavailable *sandbox.UnavailableError
	if errors.As(runErr, &unavailable) {
		return nil, &RuntimeUnavailableError{Reason: runErr.Error()}
	}
	return res, nil
}

var storageLog = regexp.MustCompile(`Errno (27|28)|No space left on device|File too large`)

func storageInLog(log string) bool { return storageLog.MatchString(log) }

func (s *store) usedBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// tailBuffer keeps the last limit bytes written.
type tailBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.limit; over > 0 {
		b := append([]byte(nil), t.buf.Bytes()[over:]...)
		t.buf.Reset()
		t.buf.Write(b)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(t.buf.String(), "\uFFFD")
}

// tail is the end of a log, at most n bytes, starting at a line.
func tail(log string, n int) string {
	log = strings.TrimRight(log, "\n")
	if len(log) <= n {
		return log
	}
	log = log[len(log)-n:]
	if i := strings.IndexByte(log, '\n'); i >= 0 && i < len(log)-1 {
		log = log[i+1:]
	}
	return strings.ToValidUTF8(log, "")
}

// lastLines is the last n non-empty lines of a log.
func lastLines(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
