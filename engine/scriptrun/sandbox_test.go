package scriptrun

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/sandbox"
)

// needSandbox is needPython plus a kernel that can confine scripts. In CI
// (which runs on the project's own machine kind, where both exist) their
// absence fails, so the hostile suite cannot pass by skipping.
func needSandbox(t *testing.T) *Runner {
	t.Helper()
	r := needPython(t)
	if err := sandbox.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the script sandbox is required in CI: %v", err)
		}
		t.Skipf("this kernel cannot sandbox scripts (set CI to make this a failure): %v", err)
	}
	return r
}

// hostileScript tries every escape it knows; each attempt prints one
// line, "<label> ALLOWED <detail>" or "<label> DENIED <error>". Native
// calls go through ctypes, past Python's audit hooks.
const hostileScript = `import ctypes, ctypes.util, json, os, socket

libc = ctypes.CDLL(None, use_errno=True)
E = os.environ


def attempt(label, fn):
    try:
        got = fn()
        print(label, "ALLOWED", repr(got)[:200], flush=True)
    except BaseException as e:
        print(label, "DENIED", type(e).__name__, e, flush=True)


def native(rc):
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc


def read(path):
    with open(path, "rb") as f:
        return f.read()


def tcp():
    s = socket.create_connection(("127.0.0.1", int(E["HOSTILE_TCP_PORT"])), timeout=2)
    s.sendall(b"escaped")
    s.close()


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"escaped", ("127.0.0.1", int(E["HOSTILE_UDP_PORT"])))


def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(E["HOSTILE_UNIX_PATH"])
    s.sendall(b"escaped")


def native_socket():
    # socket(AF_INET, SOCK_STREAM, 0) straight from libc.
    return native(libc.socket(2, 1, 0))


def native_write():
    fd = native(libc.open(E["HOSTILE_OUTSIDE"].encode() + b"/ctypes.txt", os.O_WRONLY | os.O_CREAT, 0o644))
    native(libc.write(fd, b"escaped", 7))


def native_symlink():
    return native(libc.symlink(b"/etc/passwd", E["HOSTILE_WORKSPACE"].encode() + b"/planted"))


def ancestors():
    pids, pid = [], os.getpid()
    for _ in range(10):
        with open("/proc/%d/stat" % pid) as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
        if pid <= 1:
            break
        pids.append(pid)
    return pids


def ancestor_environ():
    leaked = {}
    for pid in [os.getppid(), int(E["HOSTILE_SERVER_PID"])]:
        try:
            leaked[pid] = read("/proc/%d/environ" % pid)
        except OSError:
            pass
    if not leaked:
        raise PermissionError("no ancestor environment readable")
    return leaked


def own_environ():
    leaked = [k for k in os.environ if k.startswith(("AWS", "CURSUS_"))]
    if not leaked:
        raise PermissionError("nothing inherited")
    return leaked


def kill_server():
    os.kill(int(E["HOSTILE_SERVER_PID"]), 0)


def main(input_paths, output_paths, environ_vars, job_args):
    attempt("own_environ", own_environ)
    attempt("proc_ancestor_environ", ancestor_environ)
    attempt("proc_server_environ_native", lambda: native(libc.open(("/proc/%s/environ" % E["HOSTILE_SERVER_PID"]).encode(), os.O_RDONLY)))
    attempt("proc_walk", ancestors)
    attempt("tokens_file", lambda: read(E["HOSTILE_TOKENS"]))
    attempt("read_outside", lambda: read(E["HOSTILE_OUTSIDE"] + "/secret.txt"))
    attempt("list_outside", lambda: os.listdir(E["HOSTILE_OUTSIDE"]))
    attempt("write_outside", lambda: open(E["HOSTILE_OUTSIDE"] + "/python.txt", "w").write("escaped"))
    attempt("ctypes_write_outside", native_write)
    attempt("ctypes_symlink_in_workspace", native_symlink)
    attempt("symlink_in_workspace", lambda: os.symlink("/etc/passwd", E["HOSTILE_WORKSPACE"] + "/planted2"))
    attempt("tcp_connect", tcp)
    attempt("udp_send", udp)
    attempt("unix_connect", unix)
    attempt("ctypes_socket", native_socket)
    attempt("signal_server", kill_server)
    attempt("unshare_user", lambda: native(libc.unshare(0x10000000)))
    attempt("unshare_net", lambda: native(libc.unshare(0x40000000)))
    open(os.path.join(output_paths["processed_data"], "done.txt"), "w").write("ran")
`

// hostileAttempts are the labels hostileScript prints, each of which must
// be denied.
var hostileAttempts = []string{"own_environ", "proc_ancestor_environ", "proc_server_environ_native", "proc_walk",
	"tokens_file", "read_outside", "list_outside", "write_outside", "ctypes_write_outside",
	"ctypes_symlink_in_workspace", "symlink_in_workspace", "tcp_connect", "udp_send", "unix_connect",
	"ctypes_socket", "signal_server", "unshare_user", "unshare_net"}

// TestSandboxRefusesEveryEscape runs hostileScript through the real
// runner with credentials in the server's environment, a tokens file and
// listeners (TCP, UDP, unix) outside: every attempt is denied, nothing
// reaches a listener, nothing lands outside, and the script still ran.
func TestSandboxRefusesEveryEscape(t *testing.T) {
	r := needSandbox(t)
	const secret = "wJalrXUtnFEMI-cursus-test-secret"
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIACURSUSTEST")
	outside, workspace := t.TempDir(), t.TempDir()
	tokens := filepath.Join(outside, "tokens.txt")
	for name, body := range map[string]string{"tokens.txt": "tok-write-" + secret + " admin write,exec\n", "secret.txt": secret} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CURSUS_AUTH_TOKENS_FILE", tokens)

	var reached atomic.Int32
	tcpL, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcpL.Close()
	go acceptAll(tcpL, &reached)
	unixPath := filepath.Join(outside, "s.sock")
	unixL, err := net.Listen("unix", unixPath)
	if err != nil {
		t.Fatal(err)
	}
	defer unixL.Close()
	go acceptAll(unixL, &reached)
	udpC, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udpC.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udpC.ReadFrom(buf); err != nil {
				return
			}
			reached.Add(1)
		}
	}()

	env := map[string]string{"LABEL_FIELD": "y",
		"HOSTILE_TCP_PORT":   strconv.Itoa(tcpL.Addr().(*net.TCPAddr).Port),
		"HOSTILE_UDP_PORT":   strconv.Itoa(udpC.LocalAddr().(*net.UDPAddr).Port),
		"HOSTILE_UNIX_PATH":  unixPath,
		"HOSTILE_OUTSIDE":    outside,
		"HOSTILE_TOKENS":     tokens,
		"HOSTILE_WORKSPACE":  workspace,
		"HOSTILE_SERVER_PID": strconv.Itoa(os.Getpid()),
	}
	res, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface),
		Script: writeScript(t, hostileScript), Env: env, Limits: Limits{Timeout: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success {
		t.Fatalf("the hostile script did not run to its end: %+v", res)
	}
	var allowed []string
	for _, label := range hostileAttempts {
		if !strings.Contains("\n"+res.Stdout, "\n"+label+" DENIED") {
			allowed = append(allowed, label)
		}
	}
	if len(allowed) > 0 {
		t.Errorf("%d of %d escapes were not denied: %s\n%s", len(allowed), len(hostileAttempts), strings.Join(allowed, ", "), res.Stdout)
	}
	if strings.Contains(res.Stdout+res.Stderr, secret) || strings.Contains(res.Stdout+res.Stderr, "AKIACURSUSTEST") {
		t.Errorf("a secret reached the script:\n%s", res.Stdout)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d connections or datagrams reached the test's listeners", n)
	}
	for _, dir := range []string{outside, workspace} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if name := e.Name(); name != "tokens.txt" && name != "secret.txt" && name != "s.sock" {
				t.Errorf("the script left %s in %s", name, dir)
			}
		}
	}
}

func acceptAll(l net.Listener, reached *atomic.Int32) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		reached.Add(1)
		c.Close()
	}
}

// survivorScript forks (through libc, past the audit hook) a child that
// calls setsid, double-forks, records its pid, sleeps and then writes a
// marker in the sandbox; the script itself then returns (mode "exit") or
// spins until the deadline (mode "timeout").
const survivorScript = `import ctypes, os, time

libc = ctypes.CDLL(None, use_errno=True)


def main(input_paths, output_paths, environ_vars, job_args):
    out = output_paths["processed_data"]
    open(os.path.join(out, "started.txt"), "w").write("1")
    if libc.fork() == 0:
        libc.setsid()
        if libc.fork() == 0:
            with open(os.path.join(out, "survivor.pid"), "w") as f:
                f.write(str(os.getpid()))
            time.sleep(float(environ_vars["SURVIVOR_SLEEP"]))
            open(os.path.join(out, "marker.txt"), "w").write("survived")
        libc._exit(0)
    for _ in range(200):
        if os.path.exists(os.path.join(out, "survivor.pid")):
            break
        time.sleep(0.05)
    if environ_vars["SURVIVOR_MODE"] == "timeout":
        while True:
            time.sleep(0.05)
`

// TestSandboxKillsSetsidSurvivors: a setsid, double-forked grandchild of
// the script is gone as soon as the call returns, whether the script
// exited or was killed at its deadline, and its marker never appears.
func TestSandboxKillsSetsidSurvivors(t *testing.T) {
	r := needSandbox(t)
	for _, mode := range []string{"exit", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			// The survivor sleeps past the deadline, so in "timeout" mode
			// its marker can only appear after the call has returned.
			const sleep, deadline = 6 * time.Second, 5 * time.Second
			timeout := 60 * time.Second
			if mode == "timeout" {
				timeout = deadline
			}
			mark := "survivor-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			res, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface),
				Script: writeScript(t, survivorScript), KeepSandbox: true, Limits: Limits{Timeout: timeout},
				Env: map[string]string{"LABEL_FIELD": "y", "SURVIVOR_MODE": mode, "SURVIVOR_SLEEP": strconv.Itoa(int(sleep.Seconds())),
					"SURVIVOR_MARK": mark}})
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(res.Sandbox)
			if mode == "timeout" && !res.TimedOut {
				t.Fatalf("want a timeout, got %+v", res)
			}
			out := res.Outputs[0].Dir
			if _, err := os.ReadFile(filepath.Join(out, "survivor.pid")); err != nil {
				t.Fatalf("the survivor never started (the test proves nothing): %v\n%s", err, res.Stderr)
			}
			// Its pid is the one in the run's PID namespace: find it by
			// the marker in its environment instead.
			if n := processesWithEnv("SURVIVOR_MARK=" + mark); n > 0 {
				t.Errorf("%d processes of the run (the setsid grandchild) are still there after the call returned", n)
			}
			if left := processesUnder(res.Sandbox); len(left) > 0 {
				t.Errorf("processes left running under the sandbox: %v", left)
			}
			// Wait out the survivor's sleep with margin; the marker must
			// never appear.
			time.Sleep(sleep + 2*time.Second)
			if _, err := os.Stat(filepath.Join(out, "marker.txt")); err == nil {
				t.Error("the setsid grandchild outlived the call and wrote its marker")
			}
		})
	}
}

// processesWithEnv counts the live processes whose environment holds
// the entry kv ("NAME=value").
func processesWithEnv(kv string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && strings.Contains("\x00"+string(env), "\x00"+kv+"\x00") {
			n++
		}
	}
	return n
}

// processesUnder lists the pids whose command line names dir.
func processesUnder(dir string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), dir) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestSandboxIsolationIsReported: with the sandbox on, the run report
// says so and claims no audit-hook-only protection.
func TestSandboxIsolationIsReported(t *testing.T) {
	r := needSandbox(t)
	b, _ := json.Marshal(r.Isolation())
	if !strings.Contains(string(b), "Landlock") || strings.Contains(string(b), "UNISOLATED") {
		t.Errorf("isolation = %s", b)
	}
	// It says which containment of the process tree applied here.
	if !strings.Contains(string(b), sandbox.Containment()) {
		t.Errorf("isolation does not say %q: %s", sandbox.Containment(), b)
	}
	if sandbox.Cgroup() == nil && !strings.Contains(string(b), "at most 1024 processes and threads") {
		t.Errorf("isolation does not give the tree limits: %s", b)
	}
}

// TestRunWithoutASandboxIsRuntimeUnavailable: where the kernel lacks what
// the sandbox needs, a run is refused naming it and the setting that
// overrides; with that setting the script runs, reported as unisolated.
func TestRunWithoutASandboxIsRuntimeUnavailable(t *testing.T) {
	needPython(t)
	missing := func(context.Context) error {
		return &sandbox.UnavailableError{Missing: "this kernel has Landlock ABI 3 (test)"}
	}
	r := NewRunner(1)
	r.ProbeSandbox = missing
	script := writeScript(t, "def main(input_paths, output_paths, environ_vars, job_args):\n    open(output_paths['processed_data'] + '/o', 'w').write('1')\n")
	req := RunRequest{Interface: mustInterface(t, prepInterface), Script: script, Env: map[string]string{"LABEL_FIELD": "y"}}
	_, err := r.Run(context.Background(), req)
	var unavailable *RuntimeUnavailableError
	if !errors.As(err, &unavailable) || !unavailable.Sandbox || !errors.Is(err, ErrRuntimeUnavailable) {
		t.Fatalf("want a sandbox RuntimeUnavailableError, got %v", err)
	}
	for _, want := range []string{"Landlock ABI 3 (test)", "workspace.allow_unisolated_scripts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %q: %v", want, err)
		}
	}

	r = NewRunner(1)
	r.ProbeSandbox = missing
	r.AllowUnisolated()
	res, err := r.Run(context.Background(), req)
	if err != nil || !res.Success {
		t.Fatalf("unisolated run: %+v, %v", res, err)
	}
	if b, _ := json.Marshal(r.Isolation()); !strings.Contains(string(b), "UNISOLATED") {
		t.Errorf("an unisolated run is not reported as such: %s", b)
	}
}

// i386Script calls socket(2) through the i386 syscall ABI (int 0x80),
// which an amd64 seccomp filter sees under another arch and number.
const i386Script = `import ctypes, mmap


def main(input_paths, output_paths, environ_vars, job_args):
    code = bytes([0x53,                    # push rbx
                  0xb8, 0x67, 0x01, 0, 0,  # mov eax, 359 (i386 socket)
                  0xbb, 2, 0, 0, 0,        # mov ebx, AF_INET
                  0xb9, 1, 0, 0, 0,        # mov ecx, SOCK_STREAM
                  0x31, 0xd2,              # xor edx, edx
                  0xcd, 0x80,              # int 0x80
                  0x5b, 0xc3])             # pop rbx; ret
    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code)
    fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(buf)))
    print("calling", flush=True)
    fd = fn()
    print("i386_socket", "ALLOWED" if fd >= 0 else "DENIED", fd, flush=True)
    open(output_paths["processed_data"] + "/o", "w").write("1")
`

// TestSandboxRefusesForeignArchSyscalls: the i386 ABI is no way around
// the socket rule; the filter kills the script on such a syscall.
func TestSandboxRefusesForeignArchSyscalls(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the i386 syscall ABI exists only beside amd64")
	}
	r := needSandbox(t)
	res, err := r.Run(context.Background(), RunRequest{Interface: mustInterface(t, prepInterface),
		Script: writeScript(t, i386Script), Env: map[string]string{"LABEL_FIELD": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "calling") {
		t.Fatalf("the script did not get to the call (the test proves nothing): %+v", res)
	}
	if strings.Contains(res.Stdout, "i386_socket ALLOWED") || res.Success {
		t.Errorf("an i386 socket(2) got through: %+v", res)
	}
	if !strings.Contains(res.ErrorMessage, "SIGSYS") {
		t.Errorf("the error does not say why the script died: %q", res.ErrorMessage)
	}
}
