package handlers

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/workspace"
	"github.com/cursus-dev/cursus/registry"
)

// filesEnv is the full registry over a fresh workspace; root, when given,
// replaces the workspace Root (to inject storage faults).
func filesEnv(t *testing.T, opts Options, root func(dir string) *workspace.Root) (*registry.Registry, string) {
	reg, deps := filesDeps(t, opts, root)
	return reg, deps.Root.Dir()
}

func filesDeps(t *testing.T, opts Options, root func(dir string) *workspace.Root) (*registry.Registry, *Deps) {
	t.Helper()
	opts.WorkspaceRoot = t.TempDir()
	deps, err := NewDeps(opts)
	if err != nil {
		t.Fatal(err)
	}
	if root != nil {
		deps.Root = root(deps.Root.Dir())
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg, deps
}

// callWithin is call with a generous bound, so a read that blocks (a named
// pipe opened the old way) fails the test instead of hanging it.
func callWithin(t *testing.T, reg *registry.Registry, tool, args string) *registry.Result {
	t.Helper()
	done := make(chan *registry.Result, 1)
	go func() { done <- call(t, reg, tool, args) }()
	select {
	case res := <-done:
		return res
	case <-time.After(20 * time.Second):
		t.Fatalf("%s %s did not answer within 20s", tool, args)
		return nil
	}
}

// wantInvalid fails unless res is invalid_input whose message names arg
// and says want.
func wantInvalid(t *testing.T, res *registry.Result, arg, want string) {
	t.Helper()
	if res.OK || res.Code != registry.CodeInvalidInput || !strings.Contains(res.Error, "'"+arg+"'") || !strings.Contains(res.Error, want) {
		t.Errorf("got ok=%v code=%s %q; want invalid_input naming '%s' and saying %q", res.OK, res.Code, res.Error, arg, want)
	}
}

// TestFileArgumentsTakeRegularFilesOnly gives a named pipe, a directory
// and a too-long name to every kind of file argument.
func TestFileArgumentsTakeRegularFilesOnly(t *testing.T) {
	reg, dir := filesEnv(t, Options{}, nil)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 300) + ".json"
	for _, c := range []struct{ name, want string }{{"pipe.json", "named pipe"}, {"adir.json", "directory"}, {long, "too long"}} {
		wantInvalid(t, callWithin(t, reg, "config.requirements", `{"dag_file": "`+c.name+`"}`), "dag_file", c.want)
		wantInvalid(t, callWithin(t, reg, "config.load", `{"config_file": "`+c.name+`"}`), "config_file", c.want)
		wantInvalid(t, callWithin(t, reg, "dag.deserialize", `{"path": "`+c.name+`"}`), "path", c.want)
		wantInvalid(t, callWithin(t, reg, "compile.validate", `{"config_file": "`+c.name+`", "dag": {"nodes": ["A"]}}`), "config_file", c.want)
	}
	// A write over a directory or with a too-long name is the caller's
	// mistake too, not the server's.
	wantInvalid(t, callWithin(t, reg, "dag.serialize", `{"nodes": ["A"], "path": "adir.json", "overwrite": true}`), "path", "directory")
	wantInvalid(t, callWithin(t, reg, "dag.serialize", `{"nodes": ["A"], "path": "`+long+`"}`), "path", "too long")
}

// TestFileReadsAreCapped: the default cap (16 MiB, a sparse file here) and
// a configured one, both named in the error.
func TestFileReadsAreCapped(t *testing.T) {
	reg, dir := filesEnv(t, Options{}, nil)
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(workspace.DefaultMaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := "larger than the 16777216-byte limit (limits.max_file_bytes)"
	wantInvalid(t, call(t, reg, "config.requirements", `{"dag_file": "big.json"}`), "dag_file", want)
	wantInvalid(t, call(t, reg, "dag.deserialize", `{"path": "big.json"}`), "path", want)
	wantInvalid(t, call(t, reg, "config.load", `{"config_file": "big.json"}`), "config_file", want)

	reg, dir = filesEnv(t, Options{MaxFileBytes: 64}, nil)
	dag := `{"nodes": ["TabularPreprocessing_training", "XGBoostTraining"], "edges": [["TabularPreprocessing_training", "XGBoostTraining"]]}`
	if err := os.WriteFile(filepath.Join(dir, "dag.json"), []byte(dag), 0o644); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, call(t, reg, "config.requirements", `{"dag_file": "dag.json"}`), "dag_file", "larger than the 64-byte limit (limits.max_file_bytes)")
}

// A script over the analysis cap, which is smaller than the workspace's
// read cap, is not blamed on limits.max_file_bytes: raising it would not help.
func TestScriptOverTheAnalysisCapNamesThatCap(t *testing.T) {
	reg, dir := filesEnv(t, Options{}, nil)
	script := filepath.Join(dir, "train.py")
	if err := os.WriteFile(script, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, reg, "author.check_script", `{"step_name": "XGBoostTraining", "script_path": "train.py"}`)
	wantInvalid(t, res, "script_path", "larger than the 2097152-byte limit (a fixed cap on what cursus analyses)")
	if strings.Contains(res.Error, "max_file_bytes") {
		t.Errorf("the error names limits.max_file_bytes: %s", res.Error)
	}
}

// TestFullOrReadOnlyWorkspaceIsAStorageError injects ENOSPC and EROFS
// through the workspace's fault seam (an unprivileged test can mount
// neither) into every writing tool: storage_error, and nothing written.
func TestFullOrReadOnlyWorkspaceIsAStorageError(t *testing.T) {
	for _, c := range []struct {
		op    string
		errno syscall.Errno
	}{{"write", syscall.ENOSPC}, {"create", syscall.EROFS}, {"rename", syscall.EACCES}} {
		t.Run(c.errno.Error(), func(t *testing.T) {
			reg, deps := filesDeps(t, Options{}, func(dir string) *workspace.Root {
				r, err := workspace.New(dir, workspace.WithFaults(func(op, name string) error {
					if op == c.op {
						return &fs.PathError{Op: op, Path: name, Err: c.errno}
					}
					return nil
				}))
				if err != nil {
					t.Fatal(err)
				}
				return r
			})
			dir := deps.Root.Dir()
			base, perNode := cfgSampleArgs(t, deps, []string{"TabularPreprocessing_training", "XGBoostTraining"})
			mergeSave := cfgJSONArg(t, map[string]any{"dag": json.RawMessage(twoNodeDAG), "base": base, "per_node": perNode,
				"output_file": "pipeline_config/config.json"})
			for _, tc := range []struct{ tool, args, arg string }{
				{"dag.serialize", `{"nodes": ["A"], "path": "pipeline_config/dag.json"}`, "path"},
				{"config.merge_save", mergeSave, "output_file"},
				{"project.init", `{"name": "fraud", "framework": "xgboost", "target_dir": "projects"}`, "target_dir"},
			} {
				res := call(t, reg, tc.tool, tc.args)
				if res.OK || res.Code != registry.CodeStorageError || !strings.Contains(res.Error, "'"+tc.arg+"'") || !strings.Contains(res.Error, c.errno.Error()) {
					t.Errorf("%s: ok=%v code=%s %q; want storage_error naming '%s' and %q", tc.tool, res.OK, res.Code, res.Error, tc.arg, c.errno.Error())
				}
			}
			var files []string
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, p)
				}
				return err
			})
			if len(files) > 0 {
				t.Errorf("left behind: %v", files)
			}
		})
	}
}

// TestProjectInitIgnoresWhatAKilledRunLeft: a killed project.init leaves
// at most a temporary directory, which neither blocks the rerun nor shows.
func TestProjectInitIgnoresWhatAKilledRunLeft(t *testing.T) {
	reg, dir := filesEnv(t, Options{}, nil)
	left := filepath.Join(dir, "projects", workspace.TempPrefix+"killed", "pipeline_config")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "dag.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, reg, "project.init", `{"name": "fraud", "framework": "xgboost", "target_dir": "projects"}`))
	if _, err := os.Stat(filepath.Join(dir, "projects", "fraud_xgboost", "pipeline_config", "dag.json")); err != nil {
		t.Fatal(err)
	}
}
