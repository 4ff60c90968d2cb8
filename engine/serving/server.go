package serving

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cursus-dev/cursus/engine/sandbox"
)

//go:embed worker.py
var workerPy []byte

// Limits bound one loaded model. Zero values take the defaults.
type Limits struct {
	// LoadTimeout bounds start-up: unpacking, imports, model_fn (120s).
	LoadTimeout time.Duration
	// InvokeTimeout bounds one request (60s, the model server's default
	// SAGEMAKER_MODEL_SERVER_TIMEOUT).
	InvokeTimeout time.Duration
	// MaxUnpackedBytes bounds the model archive and the source tarball
	// once unpacked (2 GiB).
	MaxUnpackedBytes int64
	// MaxRequestBytes and MaxResponseBytes bound one request's body and
	// one answer's (100 MiB each).
	MaxRequestBytes, MaxResponseBytes int
	// MaxLogBytes is how much of the process's output is kept, its tail
	// (64 KiB).
	MaxLogBytes int
	// MaxMemoryBytes is the serving process's address space (8 GiB:
	// torch maps much more than it uses).
	MaxMemoryBytes int64
	// CPUSeconds is the serving process's CPU time over its whole life
	// (1800).
	CPUSeconds uint64
}

func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.LoadTimeout, 120*time.Second)
	def(&l.InvokeTimeout, 60*time.Second)
	if l.MaxUnpackedBytes <= 0 {
		l.MaxUnpackedBytes = 2 << 30
	}
	if l.MaxRequestBytes <= 0 {
		l.MaxRequestBytes = 100 << 20
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = 100 << 20
	}
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = 64 << 10
	}
	if l.MaxMemoryBytes <= 0 {
		l.MaxMemoryBytes = 8 << 30
	}
	if l.CPUSeconds == 0 {
		l.CPUSeconds = 1800
	}
	return l
}

// Runtime loads models: the interpreter, the sandbox and the limits.
// One Runtime serves any number of models; it is safe for concurrent use.
type Runtime struct {
	// Python is the interpreter (default /usr/bin/python3).
	Python string
	// AllowUnisolated runs the serving process without the OS sandbox
	// where the kernel cannot provide one, instead of failing with
	// KindRuntimeUnavailable.
	AllowUnisolated bool
	Limits          Limits

	once       sync.Once
	python     string
	err        error
	pyDirs     []string
	pyFiles    []string
	sandboxErr error
}

// Model is a model as CreateModel (or a model package's container)
// describes it.
type Model struct {
	// Image is the container image URI; its repository picks the
	// serving stack (ImageFramework).
	Image string
	// ModelData is the content of ModelDataUrl (model.tar.gz), nil when
	// the model has none.
	ModelData []byte
	// Environment is the container's environment.
	Environment map[string]string
	// Fetch reads an s3:// object; Load calls it for a
	// SAGEMAKER_SUBMIT_DIRECTORY that is an S3 URI. nil: such a model
	// fails with KindMissingCode.
	Fetch func(ctx context.Context, uri string) ([]byte, error)
}

// Server is a loaded model answering requests one at a time, as one
// serving container with MaxConcurrentTransforms 1 does.
type Server struct {
	// Framework is the image's serving stack.
	Framework Framework
	// Mode is how it serves: "algorithm" (XGBoost without a program),
	// "script" (a user module) or "default" (PyTorch's default handler).
	Mode string
	// Module is the user module's name in script mode.
	Module string

	lim     Limits
	dir     string
	req     *os.File
	replies chan reply
	done    chan struct{} // closed at shutdown: nobody reads replies any more
	pr      *io.PipeReader
	exited  chan struct{}
	stop    context.CancelFunc
	log     *tailBuffer

	mu     sync.Mutex
	broken error
	closed bool
}

// Response is a model's answer.
type Response struct {
	Body        []byte
	ContentType string
}

type reply struct {
	head map[string]any
	body []byte
	err  error
}

type wireHeader struct {
	OK          bool   `json:"ok"`
	Kind        string `json:"kind"`
	Field       string `json:"field"`
	Message     string `json:"message"`
	Traceback   string `json:"traceback"`
	ContentType string `json:"content_type"`
	Mode        string `json:"mode"`
	Module      string `json:"module"`
}

// Available reports whether models can be loaded here: the interpreter
// runs and the sandbox works (or unisolated runs are allowed).
func (r *Runtime) Available() error {
	r.once.Do(r.probe)
	if r.err != nil {
		return r.err
	}
	if r.sandboxErr != nil && !r.AllowUnisolated {
		return &Error{Kind: KindRuntimeUnavailable, Message: r.sandboxErr.Error()}
	}
	return nil
}

func (r *Runtime) probe() {
	py := r.Python
	if py == "" {
		py = "/usr/bin/python3"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	found, err := sandbox.FindPython(ctx, py, baseEnv(os.TempDir()))
	if err != nil {
		r.err = &Error{Kind: KindRuntimeUnavailable, Message: err.Error()}
		return
	}
	r.python = found.Exe
	r.pyDirs = found.ReadDirs
	r.pyFiles = found.ReadFiles
	r.sandboxErr = sandbox.Check()
}

// baseEnv is what the serving process gets besides the container's
// environment; its answers are framed on stdout, so unbuffered.
func baseEnv(dir string) []string {
	return append(sandbox.PythonEnv(dir), "PYTHONUNBUFFERED=1")
}

// containerEnv is the container's environment as the image sets it up:
// the image's own defaults, then the model's Environment.
func containerEnv(fw Framework, vars map[string]string) []string {
	all := map[string]string{"SM_MODEL_DIR": "/opt/ml/model"}
	if fw == XGBoost {
		all["OMP_NUM_THREADS"] = "1" // the XGBoost container's default
	}
	for k, v := range vars {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			continue
		}
		all[k] = v
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+all[k])
	}
	return out
}

// Load starts a serving process for m and waits until the model is
// loaded (model_fn ran, or the algorithm's booster loaded). The caller
// must Close the Server.
func (r *Runtime) Load(ctx context.Context, m Model) (*Server, error) {
	fw, err := ImageFramework(m.Image)
	if err != nil {
		return nil, err
	}
	program := m.Environment["SAGEMAKER_PROGRAM"]
	if fw == SKLearn && program == "" {
		return nil, errorf(KindNoProgram, "Environment.SAGEMAKER_PROGRAM", "the scikit-learn image serves only through user code and the model's Environment has no SAGEMAKER_PROGRAM (set it to the inference script's file name, with SAGEMAKER_SUBMIT_DIRECTORY pointing at the source tarball)")
	}
	if err := r.Available(); err != nil {
		return nil, err
	}
	lim := r.Limits.withDefaults()
	created, err := os.MkdirTemp("", "cursus-serve-")
	if err != nil {
		return nil, fmt.Errorf("create serving directory: %w", withoutPath(err))
	}
	dir, err := filepath.EvalSymlinks(created)
	if err != nil {
		os.RemoveAll(created)
		return nil, fmt.Errorf("create serving directory: %w", withoutPath(err))
	}
	s, err := r.start(ctx, fw, m, dir, lim)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (r *Runtime) start(ctx context.Context, fw Framework, m Model, dir string, lim Limits) (*Server, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, withoutPath(err)
	}
	defer root.Close()
	for _, d := range []string{".cursus", "home", "tmp", "container/opt/ml/model", "container/opt/ml/code"} {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return nil, withoutPath(err)
		}
	}
	if m.ModelData != nil {
		if err := extractTarGz(ctx, root, "container/opt/ml/model", m.ModelData, lim.MaxUnpackedBytes, "ModelDataUrl"); err != nil {
			return nil, err
		}
	}
	if fw != PyTorch && m.Environment["SAGEMAKER_PROGRAM"] != "" {
		if err := submitDir(ctx, root, m, lim); err != nil {
			return nil, err
		}
	}
	plan, _ := json.Marshal(map[string]string{
		"framework": string(fw),
		"root":      filepath.Join(dir, "container"),
		"requests":  filepath.Join(dir, ".cursus", "requests"),
	})
	if err := root.WriteFile(".cursus/plan.json", plan, 0o600); err != nil {
		return nil, withoutPath(err)
	}
	if err := root.WriteFile(".cursus/worker.py", workerPy, 0o600); err != nil {
		return nil, withoutPath(err)
	}
	fifo := filepath.Join(dir, ".cursus", "requests")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("request channel: %w", err)
	}
	// Read-write: opening never blocks, and the worker sees end of file
	// only when this side closes.
	req, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("request channel: %w", withoutPath(err))
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	pr, pw := io.Pipe()
	s := &Server{Framework: fw, lim: lim, dir: dir, req: req, replies: make(chan reply, 1), done: make(chan struct{}),
		pr: pr, exited: make(chan struct{}), stop: stop, log: &tailBuffer{limit: lim.MaxLogBytes}}
	argv := []string{r.python, "-B", filepath.Join(dir, ".cursus", "worker.py"), filepath.Join(dir, ".cursus", "plan.json")}
	env := append(baseEnv(dir), containerEnv(fw, m.Environment)...)
	go s.readReplies(pr)
	go func() {
		defer close(s.exited)
		var err error
		if r.sandboxErr == nil {
			spec := sandbox.Spec{Path: argv[0], Args: argv, Env: env, Dir: filepath.Join(dir, "tmp"),
				ReadDirs: r.pyDirs, ReadFiles: r.pyFiles, WriteDirs: []string{dir}, WriteFiles: []string{"/dev/null"},
				Limits: sandbox.Limits{CPUSeconds: lim.CPUSeconds, AddressSpace: uint64(lim.MaxMemoryBytes),
					FileSize: uint64(lim.MaxUnpackedBytes), OpenFiles: 1024}}
			_, err = sandbox.Run(runCtx, spec, pw, s.log)
		} else {
			_, err = sandbox.RunUnisolated(runCtx, argv, filepath.Join(dir, "tmp"), env, pw, s.log)
		}
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	ready, err := s.await(ctx, lim.LoadTimeout, "loading the model")
	if err != nil {
		s.shutdown()
		return nil, err
	}
	var h wireHeader
	_ = remarshal(ready.head, &h)
	s.Mode, s.Module = h.Mode, h.Module
	return s, nil
}

// submitDir lays out /opt/ml/code from SAGEMAKER_SUBMIT_DIRECTORY, as
// the XGBoost and scikit-learn images do before importing the program:
// an S3 URI is a gzip tar to unpack; a directory inside the container
// (a repacked model's /opt/ml/model/code) is copied; a tar file inside
// it is unpacked. Unset leaves /opt/ml/code empty.
func submitDir(ctx context.Context, root *os.Root, m Model, lim Limits) error {
	const field = "Environment.SAGEMAKER_SUBMIT_DIRECTORY"
	uri := m.Environment["SAGEMAKER_SUBMIT_DIRECTORY"]
	switch {
	case uri == "":
		return nil
	case strings.HasPrefix(uri, "s3://"):
		if m.Fetch == nil {
			return errorf(KindMissingCode, field, "%s cannot be read here (no object store)", uri)
		}
		data, err := m.Fetch(ctx, uri)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errorf(KindMissingCode, field, "%s cannot be read: %v", uri, err)
		}
		return extractTarGz(ctx, root, "container/opt/ml/code", data, lim.MaxUnpackedBytes, field)
	case path.IsAbs(uri) && strings.HasPrefix(path.Clean(uri)+"/", "/opt/ml/"):
		local := "container" + path.Clean(uri)
		fi, err := root.Stat(local)
		if err != nil {
			return errorf(KindMissingCode, field, "%s does not exist in the container (the model archive unpacks to /opt/ml/model)", uri)
		}
		if fi.IsDir() {
			if local == "container/opt/ml/code" {
				return nil
			}
			return copyTree(root, local, "container/opt/ml/code")
		}
		data, err := root.ReadFile(local)
		if err != nil {
			return withoutPath(err)
		}
		return extractTarGz(ctx, root, "container/opt/ml/code", data, lim.MaxUnpackedBytes, field)
	}
	return errorf(KindInvalid, field, "%q is neither an s3:// URI nor a path inside the container", uri)
}

// readReplies parses the worker's frames: a JSON header, then a body.
func (s *Server) readReplies(r io.Reader) {
	send := func(rep reply) bool {
		select {
		case s.replies <- rep:
			return rep.err == nil
		case <-s.done:
			return false
		}
	}
	for {
		head, err := readFrame(r, 1<<20)
		if err != nil {
			send(reply{err: err})
			return
		}
		body, err := readFrame(r, s.lim.MaxResponseBytes)
		if err != nil {
			send(reply{err: err})
			return
		}
		var h map[string]any
		if err := json.Unmarshal(head, &h); err != nil {
			send(reply{err: fmt.Errorf("bad reply header: %v", err)})
			return
		}
		if !send(reply{head: h, body: body}) {
			return
		}
	}
}

var errTooLarge = errors.New("frame too large")

func readFrame(r io.Reader, limit int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if int64(size) > int64(limit) {
		return nil, errTooLarge
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

func writeFrame(w *bytes.Buffer, b []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	w.Write(n[:])
	w.Write(b)
}

// await waits for the next reply within timeout; what stops the wait
// (timeout, the caller's context, the process dying) breaks the server.
func (s *Server) await(ctx context.Context, timeout time.Duration, doing string) (reply, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case rep := <-s.replies:
		if rep.err != nil {
			return rep, s.workerError(rep.err, doing)
		}
		var h wireHeader
		_ = remarshal(rep.head, &h)
		if !h.OK {
			log := strings.TrimSpace(h.Traceback)
			if log == "" {
				log = s.log.String()
			}
			return rep, &Error{Kind: Kind(h.Kind), Field: h.Field, Message: s.clean(h.Message), Log: s.clean(log)}
		}
		return rep, nil
	case <-timer.C:
		s.kill()
		return reply{}, &Error{Kind: KindTimeout, Message: fmt.Sprintf("%s took longer than %s; the serving process was stopped", doing, timeout), Log: s.Log()}
	case <-ctx.Done():
		s.kill()
		return reply{}, ctx.Err()
	}
}

// workerError explains a reply channel that ended: the process exited
// or sent too much.
func (s *Server) workerError(err error, doing string) error {
	if errors.Is(err, errTooLarge) {
		s.kill()
		return &Error{Kind: KindLimit, Message: fmt.Sprintf("the answer while %s exceeded the %d-byte limit", doing, s.lim.MaxResponseBytes), Log: s.Log()}
	}
	<-s.exited
	msg := fmt.Sprintf("the serving process ended while %s", doing)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg += " (" + describeExit(ee.ProcessState) + ")"
	}
	return &Error{Kind: KindWorker, Message: msg, Log: s.Log()}
}

func describeExit(st *os.ProcessState) string {
	code := st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by %v", ws.Signal())
	}
	if code > 128 && code <= 128+64 {
		return fmt.Sprintf("killed by %v", syscall.Signal(code-128))
	}
	return fmt.Sprintf("exit status %d", code)
}

// Invoke sends one request, as InvokeEndpoint (or a batch transform's
// mini-batch) would, and returns the answer. A failed request leaves the
// server usable unless it timed out, the context ended or the process
// died: then every later call fails with the same error.
func (s *Server) Invoke(ctx context.Context, body []byte, contentType, accept string) (*Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &Error{Kind: KindWorker, Message: "the server is closed"}
	}
	if s.broken != nil {
		return nil, s.broken
	}
	if len(body) > s.lim.MaxRequestBytes {
		return nil, errorf(KindLimit, "", "the request body is %d bytes; the limit is %d", len(body), s.lim.MaxRequestBytes)
	}
	head, _ := json.Marshal(map[string]string{"op": "invoke", "content_type": contentType, "accept": accept})
	var msg bytes.Buffer
	writeFrame(&msg, head)
	writeFrame(&msg, body)
	// The write can block while the worker is busy; a kill closes the
	// channel and ends it.
	go func() { _, _ = s.req.Write(msg.Bytes()) }()
	rep, err := s.await(ctx, s.lim.InvokeTimeout, "answering a request")
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Kind == KindTimeout || e.Kind == KindWorker || e.Kind == KindLimit {
			s.broken = err
		}
		return nil, err
	}
	var h wireHeader
	_ = remarshal(rep.head, &h)
	return &Response{Body: rep.body, ContentType: h.ContentType}, nil
}

// Log is the tail of what the serving process printed.
func (s *Server) Log() string { return s.clean(s.log.String()) }

// clean rewrites the server's paths in text from the process: the
// unpacked container tree reads as the container's own paths
// (/opt/ml/model/...), anything else of the serving directory as
// <serving>.
func (s *Server) clean(text string) string {
	text = strings.ReplaceAll(text, filepath.Join(s.dir, "container")+"/", "/")
	return strings.ReplaceAll(text, s.dir, "<serving>")
}

// Close stops the serving process and removes its files.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.shutdown()
	return nil
}

// shutdown ends the worker (closing its request channel lets it exit by
// itself; the kill is for one that does not) and removes the directory.
func (s *Server) shutdown() {
	close(s.done)
	_ = s.req.Close()
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
	}
	s.kill()
	// Nobody reads the answers any more: let the process's output go.
	_ = s.pr.Close()
	<-s.exited
	_ = os.RemoveAll(s.dir)
}

func (s *Server) kill() {
	s.stop()
	_ = s.req.Close()
}

func remarshal(in any, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// tailBuffer keeps the last limit bytes written.
type tailBuffer struct {
	mu    sync.Mutex
	buf   []byte
	limit int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "\uFFFD")
}
