package verify

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cursus-dev/cursus/engine/workspace"
)

func testSuite(t *testing.T) (*Suite, string) {
	t.Helper()
	c, s := fixtures(t)
	dir := t.TempDir()
	writeStubScripts(t, c, filepath.Join(dir, "scripts"))
	root, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Suite{Steps: c, Config: s, Root: root}, dir
}

// Bad requests fail before anything runs, each with its own error kind.
func TestPlanScriptsRejects(t *testing.T) {
	suite, _ := testSuite(t)
	node := "TabularPreprocessing_training"
	var input *InputError
	var path *PathError
	var noScript *NoScriptError
	for _, tc := range []struct {
		name string
		req  RunScriptsRequest
		is   func(error) bool
	}{
		{"nothing", RunScriptsRequest{}, func(err error) bool { return errors.Is(err, ErrNoNodes) }},
		{"both", RunScriptsRequest{Nodes: []string{node}, DAGFile: "dag.json"}, func(err error) bool { return errors.As(err, &input) }},
		{"dag file outside", RunScriptsRequest{DAGFile: "../dag.json"}, func(err error) bool { return errors.As(err, &path) && path.Arg == "dag_file" }},
		{"edge to nowhere", RunScriptsRequest{Nodes: []string{node}, Edges: [][2]string{{node, "X"}}}, func(err error) bool { return errors.As(err, &input) }},
		{"sample for another node", RunScriptsRequest{Nodes: []string{node}, Samples: map[string]map[string]string{"X": {}}},
			func(err error) bool { return errors.As(err, &input) }},
		{"sample not an input", RunScriptsRequest{Nodes: []string{node}, Search: ScriptSearch{SourceDir: "scripts"},
			Samples: map[string]map[string]string{node: {"bogus": "a.csv"}}}, func(err error) bool { return errors.As(err, &input) }},
		{"missing sample", RunScriptsRequest{Nodes: []string{node}, Search: ScriptSearch{SourceDir: "scripts"},
			Samples: map[string]map[string]string{node: {"input_data": "a.csv"}}},
			func(err error) bool {
				return errors.As(err, &path) && path.Error() == "'sample_inputs."+node+".input_data': file not found"
			}},
		{"no script", RunScriptsRequest{Nodes: []string{node}, Search: ScriptSearch{SourceDir: "."}},
			func(err error) bool { return errors.As(err, &noScript) && noScript.Node == node }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := suite.PlanScripts(context.Background(), tc.req)
			if err == nil {
				plan.Close()
				t.Fatal("planned")
			}
			if !tc.is(err) {
				t.Fatalf("error %T: %v", err, err)
			}
		})
	}
}

// Overrides reach every node, and steps that run no script are skipped
// with the reason.
func TestPlanScriptsValues(t *testing.T) {
	suite, _ := testSuite(t)
	plan, err := suite.PlanScripts(context.Background(), RunScriptsRequest{
		Nodes: []string{"TabularPreprocessing_training", "XGBoostTraining", "Registration"},
		Edges: [][2]string{{"TabularPreprocessing_training", "XGBoostTraining"}, {"XGBoostTraining", "Registration"}},
		Env:   map[string]string{"LABEL_FIELD": "y"}, JobArgs: map[string]string{"--job-type": "validation"},
		Search: ScriptSearch{SourceDir: "scripts"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Runs) != 2 || plan.Runs[0].Node != "TabularPreprocessing_training" {
		t.Fatalf("runs = %+v", plan.Runs)
	}
	if r := plan.Runs[0]; r.Env["LABEL_FIELD"] != "y" || r.JobArgs["job_type"] != "validation" {
		t.Errorf("env %v, job args %v", r.Env, r.JobArgs)
	}
	// The script is read through the workspace's FS by its workspace path,
	// within the workspace's read cap.
	if src := plan.Runs[0].Script; src.Path != "scripts/tabular_preprocessing.py" || src.MaxFileBytes != suite.Root.MaxFileBytes() {
		t.Errorf("script source %q (cap %d)", src.Path, src.MaxFileBytes)
	} else if _, err := fs.Stat(src.FS, src.Path); err != nil {
		t.Errorf("the script is not in its FS: %v", err)
	}
	if plan.Skipped["Registration"] == "" {
		t.Errorf("skipped = %v", plan.Skipped)
	}
	plan.Close()
}

// A default search directory that is a file is skipped: the search goes
// on to the next one.
func TestFindScriptSkipsADirectoryThatIsAFile(t *testing.T) {
	suite, dir := testSuite(t)
	iface, ok := suite.Steps.Get("TabularPreprocessing")
	if !ok {
		t.Fatal("no TabularPreprocessing step")
	}
	if err := os.RemoveAll(filepath.Join(dir, "scripts")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, iface.Contract.EntryPoint), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := suite.FindScript(iface, ScriptSearch{})
	if err != nil || script.Rel != iface.Contract.EntryPoint {
		t.Fatalf("FindScript = %q, %v; want the script in the workspace root", script.Rel, err)
	}
}

// A script that is there but cannot be read is reported as such, not as
// missing: a caller told "not found" would look for it elsewhere.
func TestFindScriptReportsAnUnreadableScript(t *testing.T) {
	suite, dir := testSuite(t)
	iface, ok := suite.Steps.Get("TabularPreprocessing")
	if !ok {
		t.Fatal("no TabularPreprocessing step")
	}
	entry := filepath.Join(dir, "scripts", iface.Contract.EntryPoint)
	for _, tc := range []struct {
		name, want string
		make       func() error
	}{
		{"too large", "larger than", func() error { return os.WriteFile(entry, make([]byte, maxScriptBytes+1), 0o644) }},
		{"named pipe", "named pipe", func() error { return syscall.Mkfifo(entry, 0o644) }},
		{"directory", "directory", func() error { return os.Mkdir(entry, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.RemoveAll(entry); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(); err != nil {
				t.Fatal(err)
			}
			_, err := suite.FindScript(iface, ScriptSearch{})
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FindScript = %v, want a PathError saying %q", err, tc.want)
			}
		})
	}
}
