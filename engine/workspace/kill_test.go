package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The test binary re-executes itself as a writer when this is set to a
// workspace directory.
const (
	childEnv     = "CURSUS_WORKSPACE_TEST_CHILD"
	childModeEnv = "CURSUS_WORKSPACE_TEST_MODE"
)

// payload is large enough that a kill often lands inside a write.
var payload = bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(runChild(dir, os.Getenv(childModeEnv)))
	}
	os.Exit(m.Run())
}

// runChild writes in a loop until it is killed ("loop"), or makes one write
// under a file-size limit ("fsize").
func runChild(dir, mode string) int {
	r, err := New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if mode == "fsize" {
		// Without this the kernel's SIGXFSZ would kill the process.
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 4096, Max: 4096}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		err := r.WriteFile("big.json", payload, false)
		var se *StorageError
		if errors.As(err, &se) && se.Err == syscall.EFBIG {
			fmt.Println("EFBIG")
			return 0
		}
		fmt.Println("unexpected:", err)
		return 1
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		if err := r.WriteFile("out/dag.json", payload, true); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// A fresh file each round: the no-overwrite path (link) too.
		_ = os.Remove(filepath.Join(dir, "out", "new.json"))
		if err := r.WriteFile("out/new.json", payload, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		st, err := r.Stage("proj")
		if err != nil {
			// Moved aside first, so a kill mid-removal leaves no half project.
			gone := filepath.Join(dir, fmt.Sprintf("%sgone-%d-%d", TempPrefix, os.Getpid(), i))
			if os.Rename(filepath.Join(dir, "proj"), gone) == nil {
				_ = os.RemoveAll(gone)
			}
			continue
		}
		for _, f := range []string{"a.json", "scripts/b.py", "scripts/c.py"} {
			if err := st.WriteFile(f, payload); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if err := st.Commit(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

func startChild(t *testing.T, dir, mode string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childModeEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(out)
}

// TestKillDuringWriteLeavesNoPartialFile SIGKILLs a writer at random
// moments. Whatever it was doing, each target is either absent or whole,
// and a rerun of the write succeeds.
func TestKillDuringWriteLeavesNoPartialFile(t *testing.T) {
	const iterations = 60
	dir := t.TempDir()
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for i := range iterations {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d iterations before the deadline", i, iterations)
		}
		cmd, out := startChild(t, dir, "loop")
		if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %q %v", line, err)
		}
		time.Sleep(time.Duration(rand.IntN(40_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()

		for _, f := range []string{"out/dag.json", "out/new.json", "proj/a.json", "proj/scripts/b.py", "proj/scripts/c.py"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if errors.Is(err, fs.ErrNotExist) {
				if _, perr := os.Stat(filepath.Join(dir, "proj")); perr == nil && f[:5] == "proj/" {
					t.Fatalf("iteration %d: proj exists without %s", i, f)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, payload) {
				t.Fatalf("iteration %d: %s is partial (%d of %d bytes)", i, f, len(b), len(payload))
			}
		}
		// The rerun: a write that was cut off is simply done again.
		if _, err := os.Stat(filepath.Join(dir, "out", "new.json")); errors.Is(err, fs.ErrNotExist) {
			if err := r.WriteFile("out/new.json", payload, false); err != nil {
				t.Fatalf("iteration %d: retry of new.json: %v", i, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "proj")); errors.Is(err, fs.ErrNotExist) {
			st, err := r.Stage("proj")
			if err != nil {
				t.Fatalf("iteration %d: retry of the project: %v", i, err)
			}
			st.Abort()
		}
		if err := r.WriteFile("out/dag.json", payload, true); err != nil {
			t.Fatalf("iteration %d: retry of dag.json: %v", i, err)
		}
	}
	// What killed writers left is invisible to listings.
	for _, d := range []string{".", "out"} {
		entries, err := r.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "out" && e.Name() != "proj" && e.Name() != "dag.json" && e.Name() != "new.json" {
				t.Errorf("listing of %s shows %s", d, e.Name())
			}
		}
	}
}

// TestFileSizeLimitIsAStorageError runs a write under RLIMIT_FSIZE, the
// unprivileged way to make the kernel refuse a write as a full disk would
// (EFBIG): the caller is told, and nothing is left.
func TestFileSizeLimitIsAStorageError(t *testing.T) {
	dir := t.TempDir()
	cmd, out := startChild(t, dir, "fsize")
	line, _ := out.ReadString('\n')
	if err := cmd.Wait(); err != nil || line != "EFBIG\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	if got := listAll(t, dir); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
}
