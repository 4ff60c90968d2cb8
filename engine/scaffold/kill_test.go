package scaffold

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// The test binary re-executes itself as a project.init loop when this is
// set to a workspace directory.
const childEnv = "CURSUS_SCAFFOLD_TEST_CHILD"

var killOpts = Options{Guide: testGuide, Name: "fraud", Framework: "xgboost", CreatedAt: "2026-01-01T00:00:00Z"}

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(initLoop(dir))
	}
	if arg := os.Getenv(overwriteChildEnv); arg != "" {
		os.Exit(overwriteLoop(arg))
	}
	os.Exit(m.Run())
}

// initLoop scaffolds the project over and over until it is killed, moving
// each finished one aside (one rename, so never half removed).
func initLoop(dir string) int {
	cat, err := catalogFrom("../steps/catalog")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	root, err := workspace.New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		res, err := Init(root, cat, schemas, killOpts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		gone := filepath.Join(dir, fmt.Sprintf("%sgone-%d-%d", workspace.TempPrefix, os.Getpid(), i))
		if err := os.Rename(filepath.Join(dir, res.TargetPath), gone); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_ = os.RemoveAll(gone)
	}
}

// tree is every regular file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestKillDuringInitLeavesNoPartialProject SIGKILLs project.init at random
// moments: the project is either absent or complete, and the rerun
// succeeds instead of answering that a half project already exists.
func TestKillDuringInitLeavesNoPartialProject(t *testing.T) {
	const iterations = 50
	cat := loadCatalog(t)
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	ref := newRoot(t)
	res, err := Init(ref, cat, schemas, killOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := tree(t, filepath.Join(ref.Dir(), res.TargetPath))

	root := newRoot(t)
	project := filepath.Join(root.Dir(), res.TargetPath)
	deadline := time.Now().Add(3 * time.Minute)
	complete := 0
	for i := range iterations {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d iterations before the deadline", i, iterations)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+root.Dir())
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %q %v", line, err)
		}
		time.Sleep(time.Duration(rand.IntN(30_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()

		if _, err := os.Stat(project); err == nil {
			got := tree(t, project)
			if len(got) != len(want) {
				t.Fatalf("iteration %d: the project has %d of %d files", i, len(got), len(want))
			}
			for f, data := range want {
				if !bytes.Equal([]byte(got[f]), []byte(data)) {
					t.Fatalf("iteration %d: %s is partial (%d of %d bytes)", i, f, len(got[f]), len(data))
				}
			}
			complete++
			if err := os.RemoveAll(project); err != nil {
				t.Fatal(err)
			}
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		// Killed before the rename: the rerun must go through.
		if _, err := Init(root, cat, schemas, killOpts); err != nil {
			t.Fatalf("iteration %d: rerun after the kill: %v", i, err)
		}
		if err := os.RemoveAll(project); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills; the project was complete after %d and absent after the rest", iterations, complete)
}
