package scaffold

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// The test binary re-executes itself as a loop of project.init overwrites
// when this is set to "<workspace directory>:<marker prefix>".
const overwriteChildEnv = "CURSUS_SCAFFOLD_TEST_OVERWRITE_CHILD"

// markedOptions scaffold the project with marker in every file that
// depends on the call: the DAG's node names (dag.json, config.json's keys
// and README.md) and config.json's created_at.
func markedOptions(marker string) Options {
	load, prep := "DummyDataLoading_"+marker, "TabularPreprocessing_"+marker
	d := dag.New([]string{load, prep, "XGBoostTraining"}, [][2]string{{load, prep}, {prep, "XGBoostTraining"}})
	return Options{Guide: testGuide, Name: "fraud", Framework: "xgboost", Overwrite: true, DAG: d, CreatedAt: marker}
}

// overwriteLoop overwrites the project over and over, each call with its
// own marker, until it is killed.
func overwriteLoop(arg string) int {
	dir, prefix, _ := strings.Cut(arg, ":")
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
		if _, err := Init(root, cat, schemas, markedOptions(fmt.Sprintf("k%sx%d", prefix, i))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

var markerRE = regexp.MustCompile(`_(k[0-9]+x[0-9]+)\b|"created_at": "(k[0-9]+x[0-9]+)"`)

// markers are the call markers in data.
func markers(data string) map[string]bool {
	found := map[string]bool{}
	for _, m := range markerRE.FindAllStringSubmatch(data, -1) {
		found[m[1]+m[2]] = true
	}
	return found
}

// TestKilledConcurrentOverwritesNeverMix runs three processes that each
// overwrite one project in a loop (project.init with overwrite: true, a
// marker of the call in its DAG's node names and config values), SIGKILLs
// them all at a random moment, and checks that the project's files all
// come from one call, and that a file of the user's in the project is
// still there. 100 tries; 10 with -short or the race detector. The long
// run: go test ./engine/scaffold -run TestKilledConcurrentOverwritesNeverMix -count=1 -v
func TestKilledConcurrentOverwritesNeverMix(t *testing.T) {
	tries, procs := 100, 3
	if testing.Short() || raceDetector {
		tries = 10
	}
	cat := loadCatalog(t)
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(t)
	res, err := Init(root, cat, schemas, markedOptions("k0x0"))
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root.Dir(), res.TargetPath)
	mine := filepath.Join(project, "notes", "mine.txt")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("the user's own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	marked := []string{"pipeline_config/dag.json", "pipeline_config/config.json", "README.md"}

	start := time.Now()
	deadline := start.Add(10 * time.Minute)
	calls := map[string]bool{"k0x0": true}
	for try := range tries {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d tries before the deadline", try, tries)
		}
		var children []*exec.Cmd
		for p := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d%d", overwriteChildEnv, root.Dir(), try+1, p))
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			children = append(children, cmd)
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
				for _, c := range children {
					c.Process.Kill()
					c.Wait()
				}
				t.Fatalf("child: %q %v", line, err)
			}
		}
		time.Sleep(time.Duration(rand.IntN(60_000)) * time.Microsecond)
		for _, c := range children {
			if err := c.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range children {
			_ = c.Wait()
		}

		found := map[string]bool{}
		for _, f := range marked {
			data, err := os.ReadFile(filepath.Join(project, f))
			if err != nil {
				t.Fatalf("try %d: %v", try, err)
			}
			for m := range markers(string(data)) {
				found[m] = true
			}
		}
		if len(found) != 1 {
			var list []string
			for m := range found {
				list = append(list, m)
			}
			sort.Strings(list)
			t.Fatalf("try %d: the project's files come from %d calls: %v", try, len(list), list)
		}
		for m := range found {
			calls[m] = true
		}
		if data, err := os.ReadFile(mine); err != nil || string(data) != "the user's own file" {
			t.Fatalf("try %d: the user's file: %q %v", try, data, err)
		}
	}
	t.Logf("%d tries of %d processes killed in %v; the project came whole from %d different calls", tries, procs, time.Since(start).Round(time.Millisecond), len(calls))
}
