package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The containment tests run hostile programs (fork bombs, thousands of
// sleepers, memory hogs); -short keeps them small. CURSUS_SANDBOX_LONG=1
// runs the full-size variants the issue describes (2^12 sleepers, a
// 5-second fork bomb with a pids limit of 4096):
//
//	CURSUS_SANDBOX_LONG=1 go test -run 'Bomb|Sleepers|Survivor|Hog' -v ./engine/sandbox ./engine/validate
func long() bool { return os.Getenv("CURSUS_SANDBOX_LONG") != "" && !testing.Short() }

const python = "/usr/bin/python3"

// needContainment skips where the kernel cannot sandbox at all, and fails
// in CI (the project's own machine kind: root, cgroup v1) where runs are
// not held by a PID namespace and a cgroup.
func needContainment(t *testing.T) {
	t.Helper()
	needNamespaces(t)
	needCgroup(t)
}

// needPython skips where the kernel cannot sandbox or there is no python.
func needPython(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("no sandbox on this kernel: %v", err)
	}
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s: %v", python, err)
	}
}

// needNamespaces skips (fails in CI) where runs get no PID namespace.
func needNamespaces(t *testing.T) {
	t.Helper()
	needPython(t)
	if err := Namespaces(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI machines give every run a PID namespace: %v", err)
		}
		t.Skipf("no PID namespace per run here: %v", err)
	}
}

// needCgroup skips (fails in CI) where runs get no cgroup.
func needCgroup(t *testing.T) {
	t.Helper()
	needPython(t)
	if err := Cgroup(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI machines give every run a cgroup: %v", err)
		}
		t.Skipf("no cgroup per run here: %v", err)
	}
}

// marked is a Spec running argv with a random marker in its environment,
// so the test can find every process of the run (forked ones inherit it).
func marked(t *testing.T, argv ...string) (Spec, string) {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	mark := "CURSUS_TEST_RUN=" + hex.EncodeToString(b)
	dir := t.TempDir()
	return Spec{Path: argv[0], Args: argv, Env: []string{mark, "PATH=/usr/bin:/bin"}, Dir: dir,
		ReadDirs:  []string{"/usr", "/lib", "/lib64", "/bin", "/etc"},
		WriteDirs: []string{dir}, WriteFiles: []string{"/dev/null"}}, mark
}

// processesMarked counts the live processes whose environment holds mark.
func processesMarked(mark string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(env, []byte(mark+"\x00")) {
			n++
		}
	}
	return n
}

// watch counts mark's processes until stop is closed and returns the
// most it saw at once.
func watch(mark string, stop <-chan struct{}) <-chan int {
	peak := make(chan int, 1)
	go func() {
		most := 0
		for {
			most = max(most, processesMarked(mark))
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return peak
}

// runBounded runs spec with a timeout and checks the two promises of a
// contained run: the answer comes within timeout + 1 s, and soon after it
// no process of the run is alive. It returns the peak process count
// seen during the run, the process state and stdout.
func runBounded(t *testing.T, spec Spec, mark string, timeout time.Duration) (int, *os.ProcessState, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stop := make(chan struct{})
	peak := watch(mark, stop)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	st, _ := Run(ctx, spec, &stdout, &stderr)
	took := time.Since(start)
	close(stop)
	most := <-peak
	if took > timeout+time.Second {
		t.Errorf("the answer came after %s, over the %s timeout by more than 1s", took.Round(time.Millisecond), timeout)
	}
	now := processesMarked(mark)
	// The run's processes sleep for an hour: any still alive after the
	// wait was left behind, however slow the machine is to reap them.
	if left := waitGone(func() int { return processesMarked(mark) }, 10*time.Second); left > 0 {
		t.Errorf("%d processes of the run are alive 10s after the answer (%d at the answer)", left, now)
	}
	t.Logf("answer after %s; peak %d processes; %d at the answer; stderr %q", took.Round(time.Millisecond), most, now, lastBytes(stderr.String(), 300))
	return most, st, stdout.String()
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// sleepersScript forks itself n times over (2^n processes), each then
// sleeping for an hour; it reports the forks that failed.
const sleepersScript = `import os, sys, time
failed = 0
for _ in range(int(sys.argv[1])):
    try:
        os.fork()
    except OSError:
        failed += 1
if failed:
    print("fork failed", failed, flush=True)
time.sleep(3600)
`

// TestSleepersDieWithTheirRun: 2^n sleeping processes (2^9; 2^12 with
// CURSUS_SANDBOX_LONG=1) are all gone soon after a 5 s timeout answers, which comes
// within 1 s of it.
func TestSleepersDieWithTheirRun(t *testing.T) {
	needNamespaces(t)
	n, procs := 9, uint64(1024)
	if long() {
		n, procs = 12, 8192
	}
	spec, mark := marked(t, python, "-c", sleepersScript, strconv.Itoa(n))
	spec.Limits.Processes = procs
	most, _, out := runBounded(t, spec, mark, 5*time.Second)
	if want := (1 << n) / 2; most < want {
		t.Errorf("only %d processes seen at once (want ≥ %d): the test proves nothing; stdout %q", most, want, out)
	}
}

// bombScript forks without end: every process, children included, keeps
// forking; a failed fork waits a little and tries again.
const bombScript = `import errno, os, time
failed = False
while True:
    try:
        os.fork()
    except OSError as e:
        if not failed:
            print("fork failed", errno.errorcode[e.errno], flush=True)
            failed = True
        time.sleep(0.01)
`

// TestForkBombDiesWithItsRun: a fork bomb under a pids limit answers
// within timeout + 1 s and leaves nothing alive; the limit held.
func TestForkBombDiesWithItsRun(t *testing.T) {
	needCgroup(t)
	limit := uint64(64)
	if long() {
		limit = 4096
	}
	spec, mark := marked(t, python, "-c", bombScript)
	spec.Limits.Processes = limit
	most, _, out := runBounded(t, spec, mark, 5*time.Second)
	// A bomb starves runBounded's /proc walk: that it reached the limit
	// shows in its output.
	if !strings.Contains(out, "fork failed EAGAIN") {
		t.Errorf("the bomb did not go off up to the limit of %d (peak %d seen): %q", limit, most, lastBytes(out, 200))
	}
	// The supervisor is a process of the run's group but not marked.
	if most > int(limit) {
		t.Errorf("%d processes at once under a pids limit of %d", most, limit)
	}
}

// TestPidsLimitStopsForks: with a pids limit of 40, a script that forks
// 2^7 sleepers sees forks fail and never has more than 40 processes.
func TestPidsLimitStopsForks(t *testing.T) {
	needCgroup(t)
	spec, mark := marked(t, python, "-c", sleepersScript, "7")
	spec.Limits.Processes = 40
	most, _, out := runBounded(t, spec, mark, 4*time.Second)
	if most > 40 || most < 20 {
		t.Errorf("%d processes at once under a pids limit of 40", most)
	}
	if !strings.Contains(out, "fork failed") {
		t.Errorf("no fork failed under a pids limit of 40: %q", out)
	}
}

// survivorScript's child calls setsid, double-forks and exits; the
// grandchild sleeps, then writes a marker; the script itself exits at
// once (arg "exit") or sleeps past its deadline (arg "timeout").
const survivorScript = `import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        open("marker.txt", "w").write("survived")
    os._exit(0)
time.sleep(0.5)
if sys.argv[1] == "timeout":
    time.sleep(3600)
`

// TestSetsidSurvivorDiesWithItsRun: a setsid, double-forked grandchild
// is gone with its run, whether the script exits or times out.
func TestSetsidSurvivorDiesWithItsRun(t *testing.T) {
	needNamespaces(t)
	for _, mode := range []string{"exit", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			spec, mark := marked(t, python, "-c", survivorScript, mode)
			most, _, _ := runBounded(t, spec, mark, 2*time.Second)
			if most < 2 {
				t.Errorf("the survivor was never seen (peak %d processes): the test proves nothing", most)
			}
			time.Sleep(3 * time.Second)
			if _, err := os.Stat(filepath.Join(spec.Dir, "marker.txt")); err == nil {
				t.Error("the setsid grandchild outlived its run and wrote its marker")
			}
		})
	}
}

// TestMemoryLimitKillsAHog: a script allocating 1 GiB under a 64 MiB
// limit (no address-space rlimit) is killed by the kernel.
func TestMemoryLimitKillsAHog(t *testing.T) {
	needCgroup(t)
	spec, mark := marked(t, python, "-c", `import sys
chunks = []
for i in range(1024):
    chunks.append(bytearray(1 << 20))
    if i % 16 == 0:
        print(i, flush=True)
print("DONE", flush=True)
`)
	spec.Limits.MemoryBytes = 64 << 20
	_, st, out := runBounded(t, spec, mark, 30*time.Second)
	if strings.Contains(out, "DONE") || !strings.Contains(out, "\n16\n") {
		t.Errorf("the hog was not stopped part way: %q", lastBytes(out, 200))
	}
	if st == nil || st.ExitCode() != 128+9 {
		t.Errorf("want the hog killed (exit 137), got %v", st)
	}
}

// namespaceScript tries to create namespaces and mounts every way a
// script can: each attempt prints "<label> <errno name or OK>".
const namespaceScript = `import ctypes, errno, os, platform
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
SIGCHLD = 17
SYS = {"x86_64": {"clone": 56, "clone3": 435}, "aarch64": {"clone": 220, "clone3": 435}}[platform.machine()]

def attempt(label, rc):
    print(label, "OK" if rc >= 0 else errno.errorcode[ctypes.get_errno()], flush=True)
    if rc == 0 and label.startswith("clone"):
        os._exit(0)

attempt("unshare_user", libc.unshare(CLONE_NEWUSER))
attempt("unshare_net", libc.unshare(CLONE_NEWNET))
attempt("unshare_mount", libc.unshare(CLONE_NEWNS))
attempt("setns", libc.setns(0, 0))
attempt("clone_newuser", libc.syscall(SYS["clone"], CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0))
attempt("clone_newnet", libc.syscall(SYS["clone"], CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0))
attempt("clone3", libc.syscall(SYS["clone3"], 0, 0))
attempt("mount", libc.mount(b"none", os.getcwd().encode(), b"tmpfs", 0, None))
attempt("umount", libc.umount2(b"/", 0))
attempt("fork", 0 if os.waitpid(os.fork() or os._exit(0), 0) else -1)
`

// TestScriptsCannotCreateNamespaces: unshare, setns, clone with a
// CLONE_NEW* flag and mount are refused with EPERM, clone3 with ENOSYS
// (libc falls back to clone), and a plain fork still works.
func TestScriptsCannotCreateNamespaces(t *testing.T) {
	needPython(t)
	spec, _ := marked(t, python, "-c", namespaceScript)
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), spec, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	want := map[string]string{"unshare_user": "EPERM", "unshare_net": "EPERM", "unshare_mount": "EPERM", "setns": "EPERM",
		"clone_newuser": "EPERM", "clone_newnet": "EPERM", "clone3": "ENOSYS", "mount": "EPERM", "umount": "EPERM", "fork": "OK"}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if label, res, ok := strings.Cut(line, " "); ok {
			got[label] = res
		}
	}
	for label, w := range want {
		if got[label] != w {
			t.Errorf("%s: got %q, want %s", label, got[label], w)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// TestBindsAppearInTheRunOnly: a bind's Target shows its Source inside
// the run, writable (the write lands in Source) or read-only as asked,
// Landlock allows it though no other rule names it, and outside the run
// the Target is an empty directory.
func TestBindsAppearInTheRunOnly(t *testing.T) {
	needNamespaces(t)
	src, roSrc, base := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(roSrc, "in.txt"), []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target, roTarget := filepath.Join(base, "opt", "ml", "model"), filepath.Join(base, "opt", "ml", "input")
	spec, _ := marked(t, "/bin/sh", "-c", fmt.Sprintf(`mkdir -p %[1]s/sub && echo trained > %[1]s/sub/model.bin && cat %[2]s/in.txt && (echo x > %[2]s/new.txt) 2>/dev/null || echo READONLY`, target, roTarget))
	spec.Binds = []Bind{{Source: src, Target: target}, {Source: roSrc, Target: roTarget, ReadOnly: true}}
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), spec, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got := stdout.String(); got != "input\nREADONLY\n" {
		t.Errorf("stdout = %q, want the read-only input read and the write refused\n%s", got, stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(src, "sub", "model.bin")); err != nil || string(b) != "trained\n" {
		t.Errorf("the write through the bind did not land in its source: %q, %v", b, err)
	}
	for _, d := range []string{target, roTarget} {
		if entries, err := os.ReadDir(d); err != nil || len(entries) != 0 {
			t.Errorf("outside the run, %s: %v, %v (want an empty directory)", d, entries, err)
		}
	}
}

// TestBindsNeedAbsolutePaths: a relative Source or Target is refused
// before anything runs.
func TestBindsNeedAbsolutePaths(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("no sandbox on this kernel: %v", err)
	}
	_, err := Run(context.Background(), Spec{Path: "/bin/true", Dir: "/", Binds: []Bind{{Source: "rel", Target: "/x"}}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("err = %v", err)
	}
}

// TestConcurrentRunsAreSeparate: runs at once each get their own PID
// namespace, whose /proc shows the run's processes only (the supervisor
// as PID 1), and finish on their own; none kills another's processes.
func TestConcurrentRunsAreSeparate(t *testing.T) {
	needNamespaces(t)
	var wg sync.WaitGroup
	outs := make([]string, 3)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec, _ := marked(t, "/bin/sh", "-c", "sleep 0.5; echo $$; ls /proc")
			spec.ReadDirs = append(spec.ReadDirs, "/proc")
			var stdout, stderr bytes.Buffer
			if _, err := Run(context.Background(), spec, &stdout, &stderr); err != nil {
				t.Errorf("%v: %s", err, stderr.String())
			}
			outs[i] = stdout.String()
		}()
	}
	wg.Wait()
	for i, o := range outs {
		var pids []string
		for _, f := range strings.Fields(o)[min(1, len(o)):] {
			if _, err := strconv.Atoi(f); err == nil {
				pids = append(pids, f)
			}
		}
		if len(pids) == 0 || len(pids) > 5 || pids[0] != "1" {
			t.Errorf("run %d sees processes %v in /proc, want PID 1 and its own few", i, pids)
		}
	}
}

// withContainment makes detection answer what change makes of it for the
// rest of the test, to play a kernel that offers less than this one.
func withContainment(t *testing.T, change func(c *containment)) {
	t.Helper()
	saved := *detect()
	change(&detected)
	t.Cleanup(func() { detected = saved })
}

// TestDegradedContainment: with a cgroup but no PID namespace, and with
// neither (the subreaper alone), sleepers and a setsid double-forked
// survivor are still all gone soon after the answer, which comes within
// the timeout plus 1 s; Containment says what applied.
func TestDegradedContainment(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		name     string
		change   func(c *containment)
		contains string
	}{
		{"cgroup only", func(c *containment) { c.nsErr = errors.New("test: no namespaces") }, "no PID namespace (test: no namespaces); own cgroup"},
		{"subreaper only", func(c *containment) {
			c.nsErr, c.cgroups, c.cgErr = errors.New("test: no namespaces"), nil, errors.New("test: no cgroup")
		}, "no cgroup (test: no cgroup); a subreaper supervisor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "cgroup only" {
				needCgroup(t)
			}
			withContainment(t, tc.change)
			if got := Containment(); !strings.Contains(got, tc.contains) {
				t.Errorf("Containment() = %q, want it to say %q", got, tc.contains)
			}
			spec, mark := marked(t, python, "-c", sleepersScript, "5")
			spec.Limits.Processes = 512
			if most, _, _ := runBounded(t, spec, mark, 3*time.Second); most < 16 {
				t.Errorf("only %d sleepers seen at once: the test proves nothing", most)
			}
			spec, mark = marked(t, python, "-c", survivorScript, "exit")
			if most, _, _ := runBounded(t, spec, mark, 3*time.Second); most < 2 {
				t.Errorf("the survivor was never seen (peak %d)", most)
			}
		})
	}
}

// TestContainmentIsReported: on a kernel that contains runs, Containment
// names the PID namespace and the cgroup version.
func TestContainmentIsReported(t *testing.T) {
	needContainment(t)
	got := Containment()
	for _, want := range []string{"own PID and mount namespaces", "group, frozen and killed as a whole"} {
		if !strings.Contains(got, want) {
			t.Errorf("Containment() = %q, want it to say %q", got, want)
		}
	}
	if Namespaces() != nil || Cgroup() != nil {
		t.Errorf("Namespaces() = %v, Cgroup() = %v", Namespaces(), Cgroup())
	}
}

// TestLeftoverGroupsAreSwept: a run group named after a server that died
// is killed and removed when the next server looks for cgroups; one of a
// live server is left alone.
func TestLeftoverGroupsAreSwept(t *testing.T) {
	needCgroup(t)
	// No process has a pid above pid_max: that server is surely gone.
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	pidMax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	setup := detect().cgroups
	dead := setup.group(fmt.Sprintf("cursus-run-%d-1", pidMax+1))
	live := setup.group(fmt.Sprintf("cursus-run-%d-999999", os.Getpid()))
	for _, g := range []*runCgroup{dead, live} {
		for _, d := range g.dirs {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer live.remove(time.Now().Add(time.Second))
	sleeper := exec.Command("/bin/sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	if err := dead.enter(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sleeper.Wait() }()
	setup.sweep()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Error("the leftover group's process is still running")
	}
	for _, d := range dead.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
	for _, d := range live.dirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a live server's group was swept: %v", err)
		}
	}
}

// TestProgramHoldsNoCapabilities: whether the server runs as root or the
// program is root of its user namespace, it holds no capability, and
// cannot regain one by executing something.
func TestProgramHoldsNoCapabilities(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("no sandbox on this kernel: %v", err)
	}
	spec, _ := marked(t, "/bin/sh", "-c", "grep ^Cap /proc/self/status")
	spec.ReadDirs = append(spec.ReadDirs, "/proc")
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), spec, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) < 5 {
		t.Fatalf("no capability sets read: %q", stdout.String())
	}
	for _, line := range lines {
		name, v, _ := strings.Cut(line, ":")
		if strings.Trim(strings.TrimSpace(v), "0") != "" {
			t.Errorf("%s = %s, want none", name, strings.TrimSpace(v))
		}
	}
}

// TestGroupLimitsAreWritten: a run group carries the Limits' pids limit,
// memory limit and CPU weight (cpu.shares 512 for weight 50 on v1), and
// is gone once removed.
func TestGroupLimitsAreWritten(t *testing.T) {
	needCgroup(t)
	setup := detect().cgroups
	g, err := setup.create(Limits{Processes: 7, MemoryBytes: 64 << 20, CPUWeight: 50})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pids.max": "7", "memory.limit_in_bytes": "67108864", "cpu.shares": "512"}
	if setup.v2 {
		want = map[string]string{"pids.max": "7", "memory.max": "67108864"}
		if setup.cpu {
			want["cpu.weight"] = "50"
		}
	} else if !setup.cpu {
		delete(want, "cpu.shares")
	}
	for file, v := range want {
		found := false
		for _, d := range g.dirs {
			if b, err := os.ReadFile(filepath.Join(d, file)); err == nil {
				found = true
				if got := strings.TrimSpace(string(b)); got != v {
					t.Errorf("%s = %s, want %s", file, got, v)
				}
			}
		}
		if !found {
			t.Errorf("no %s in %v", file, g.dirs)
		}
	}
	if err := g.remove(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
}

// waitGone polls count until it is 0 or within passes, and returns its
// last value.
func waitGone(count func() int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		n := count()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}
