package scriptrun

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cursus-dev/cursus/engine/workspace"
)

// These tests prepare sandboxes without running anything, so they need
// neither python3 nor a kernel sandbox.

// prepare lays out a fresh sandbox for req in a new directory under base.
// It may run off the test's goroutine, so it reports set-up failures with
// t.Error.
func prepare(ctx context.Context, t testing.TB, base string, req RunRequest, lim Limits) (string, error) {
	t.Helper()
	dir, err := os.MkdirTemp(base, "sandbox-")
	if err != nil {
		t.Error(err)
		return "", err
	}
	sb, err := os.OpenRoot(dir)
	if err != nil {
		t.Error(err)
		return dir, err
	}
	defer sb.Close()
	_, err = prepareSandbox(ctx, sb, req, lim.withDefaults())
	return dir, err
}

// testWorkspace writes files (slash path → content) into a new workspace.
func testWorkspace(t *testing.T, files map[string]string) (*workspace.Root, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := workspace.New(dir, workspace.WithMaxFileBytes(1024))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir
}

func wsSource(root *workspace.Root, p string) Source {
	return Source{FS: root.FS(), Path: p, MaxFileBytes: root.MaxFileBytes()}
}

// The script, its .py siblings (not other files) and a sample directory
// arrive in the sandbox from the workspace's FS.
func TestPrepareCopiesFromTheFS(t *testing.T) {
	root, _ := testWorkspace(t, map[string]string{
		"proj/toy_preprocessing.py": "# script", "proj/helper.py": "# helper", "proj/notes.txt": "no",
		"proj/data/a.csv": "a", "proj/data/sub/b.csv": "b",
	})
	req := RunRequest{Interface: mustInterface(t, prepInterface), Script: wsSource(root, "proj/toy_preprocessing.py"),
		SampleInputs: map[string]Source{"input_data": wsSource(root, "proj/data")}}
	dir, err := prepare(t.Context(), t, t.TempDir(), req, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"code/toy_preprocessing.py": "# script", "code/helper.py": "# helper",
		"container/opt/ml/processing/input/data/a.csv":     "a",
		"container/opt/ml/processing/input/data/sub/b.csv": "b",
	} {
		if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "code", "notes.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a non-Python sibling was copied: %v", err)
	}
	// The absent optional input is still an (empty) directory.
	if fi, err := os.Stat(filepath.Join(dir, "container/opt/ml/processing/input/signature")); err != nil || !fi.IsDir() {
		t.Errorf("signature channel: %v", err)
	}
}

// A file over its source's cap, or files over the run's total, are
// refused by a *CopyError that names the cap and the file's path in its
// FS, never the server's directory.
func TestPrepareRefusesOversizedFiles(t *testing.T) {
	big := strings.Repeat("x", 1025) // the workspace cap is 1024
	for _, tc := range []struct {
		name      string
		files     map[string]string
		input     string
		lim       Limits
		wantPath  string
		wantLimit int64
		wantText  string
	}{
		{"input", map[string]string{"proj/data/big.csv": big}, "proj/data", Limits{},
			"proj/data/big.csv", 1024, "larger than the 1024-byte per-file limit"},
		{"single-file input", map[string]string{"proj/big.csv": big}, "proj/big.csv", Limits{},
			"proj/big.csv", 1024, "larger than the 1024-byte per-file limit"},
		{"sibling", map[string]string{"proj/helper.py": big}, "", Limits{},
			"proj/helper.py", 1024, "larger than the 1024-byte per-file limit"},
		{"total", map[string]string{"proj/data/a.csv": strings.Repeat("a", 600), "proj/data/b.csv": strings.Repeat("b", 600)}, "proj/data",
			Limits{MaxInputBytes: 1000}, "proj/data/b.csv", 1000, "past their 1000-byte total limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["proj/toy_preprocessing.py"] = "# script"
			root, wsDir := testWorkspace(t, tc.files)
			req := RunRequest{Interface: mustInterface(t, prepInterface), Script: wsSource(root, "proj/toy_preprocessing.py")}
			if tc.input != "" {
				req.SampleInputs = map[string]Source{"input_data": wsSource(root, tc.input)}
			}
			_, err := prepare(t.Context(), t, t.TempDir(), req, tc.lim)
			var ce *CopyError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *CopyError, got %v", err)
			}
			if ce.Path != tc.wantPath || ce.Limit != tc.wantLimit || !strings.Contains(err.Error(), tc.wantText) || !strings.Contains(err.Error(), tc.wantPath) {
				t.Errorf("error %q (path %q, limit %d); want %q naming %s and %d", err, ce.Path, ce.Limit, tc.wantText, tc.wantPath, tc.wantLimit)
			}
			if strings.Contains(err.Error(), wsDir) {
				t.Errorf("the error shows the server's directory: %v", err)
			}
		})
	}
}

// A named pipe is refused at once, whether it is the sample input itself
// or inside a sample directory, and so is a symlink; nothing blocks on the
// pipe, which has no writer.
func TestPrepareRefusesIrregularFiles(t *testing.T) {
	root, wsDir := testWorkspace(t, map[string]string{"proj/toy_preprocessing.py": "# script", "proj/data/a.csv": "a",
		"proj/linked/a.csv": "a"})
	for _, p := range []string{"proj/pipe", "proj/data/pipe"} {
		if err := unix.Mkfifo(filepath.Join(wsDir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.csv", filepath.Join(wsDir, "proj/linked/l.csv")); err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		"proj/pipe":         "proj/pipe is a named pipe",
		"proj/data":         "proj/data/pipe is a named pipe",
		"proj/linked":       "proj/linked/l.csv is a symbolic link",
		"proj/linked/l.csv": "proj/linked/l.csv is a symbolic link",
	} {
		req := RunRequest{Interface: mustInterface(t, prepInterface), Script: wsSource(root, "proj/toy_preprocessing.py"),
			SampleInputs: map[string]Source{"input_data": wsSource(root, input)}}
		done, base := make(chan error, 1), t.TempDir()
		go func() {
			_, err := prepare(context.Background(), t, base, req, Limits{})
			done <- err
		}()
		select {
		case err := <-done:
			var ce *CopyError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
				t.Errorf("input %s: got %v, want a *CopyError saying %q", input, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("input %s: preparing the sandbox blocked", input)
		}
	}
}

// A cancelled context stops the copy.
func TestPrepareHonoursCancellation(t *testing.T) {
	root, _ := testWorkspace(t, map[string]string{"proj/toy_preprocessing.py": "# script", "proj/data/a.csv": "a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := RunRequest{Interface: mustInterface(t, prepInterface), Script: wsSource(root, "proj/toy_preprocessing.py"),
		SampleInputs: map[string]Source{"input_data": wsSource(root, "proj/data")}}
	if _, err := prepare(ctx, t, t.TempDir(), req, Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestPrepareSymlinkSwapRaceNeverEscapes swaps the script's directory with
// a symlink to an outside directory holding files of the same names
// (renameat2 RENAME_EXCHANGE) as fast as it can while sandboxes are
// prepared from it. No outside file may ever land in a sandbox.
func TestPrepareSymlinkSwapRaceNeverEscapes(t *testing.T) {
	tries := int64(10_000)
	if testing.Short() || raceDetector {
		// The race is in the kernel; the race detector only slows it down.
		tries = 2_000
	}
	layout := func(tag string) map[string]string {
		return map[string]string{"toy_preprocessing.py": tag, "helper.py": tag, "data/train.csv": tag}
	}
	files := map[string]string{}
	for name, body := range layout("inside") {
		files["proj/"+name] = body
	}
	root, wsDir := testWorkspace(t, files)
	outside := t.TempDir()
	for name, body := range layout("outside") {
		mustWriteFile(t, filepath.Join(outside, filepath.FromSlash(name)), body)
	}
	if err := os.Symlink(outside, filepath.Join(wsDir, "link")); err != nil {
		t.Fatal(err)
	}
	swap := func() error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(wsDir, "proj"), unix.AT_FDCWD, filepath.Join(wsDir, "link"), unix.RENAME_EXCHANGE)
	}
	if err := swap(); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) unavailable here: %v", err)
	}

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = swap()
			}
		}
	})
	req := RunRequest{Interface: mustInterface(t, prepInterface), Script: wsSource(root, "proj/toy_preprocessing.py"),
		SampleInputs: map[string]Source{"input_data": wsSource(root, "proj/data")}}
	base := scratchDir(t)
	var next, prepared, leaks atomic.Int64
	deadline := time.Now().Add(60 * time.Second)
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			for time.Now().Before(deadline) && next.Add(1) <= tries {
				dir, err := prepare(context.Background(), t, base, req, Limits{})
				if err == nil {
					prepared.Add(1)
				}
				if n := countOutside(dir); n > 0 {
					leaks.Add(int64(n))
				}
				if err := os.RemoveAll(dir); err != nil {
					t.Error(err)
				}
			}
		})
	}
	workers.Wait()
	close(stop)
	swapper.Wait()

	if n := min(next.Load(), tries); n < tries {
		t.Fatalf("only %d of %d tries before the deadline", n, tries)
	}
	t.Logf("%d tries, %d sandboxes prepared", tries, prepared.Load())
	if leaks.Load() > 0 {
		t.Fatalf("%d outside files landed in a sandbox", leaks.Load())
	}
	if prepared.Load() == 0 {
		t.Fatal("the race never let a sandbox be prepared: the test proves nothing")
	}
}

// scratchDir is a temporary directory on tmpfs where there is one: a
// sandbox is a dozen directories, which a journaling file system makes
// slow to create ten thousand times.
func scratchDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "cursus-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// countOutside counts the files of dir, a sandbox prepared from the
// layout, whose content is "outside".
func countOutside(dir string) int {
	n := 0
	for _, rel := range []string{"code/toy_preprocessing.py", "code/helper.py", "container/opt/ml/processing/input/data/train.csv"} {
		if b, err := os.ReadFile(filepath.Join(dir, rel)); err == nil && string(b) == "outside" {
			n++
		}
	}
	return n
}

func mustWriteFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWithoutServerPathDropsThePath(t *testing.T) {
	_, err := os.Open("/nonexistent-cursus-dir/x")
	got := WithoutServerPath(err)
	if strings.Contains(got.Error(), "nonexistent-cursus-dir") || !errors.Is(got, fs.ErrNotExist) {
		t.Fatalf("WithoutServerPath(%v) = %v", err, got)
	}
}
