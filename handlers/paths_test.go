package handlers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// TestScriptDirectoriesMustBeDirectories: a directory named to search for
// scripts (source_dir, workspace_dirs) that does not exist, or is a file,
// is invalid_input naming the argument; it used to be searched in vain,
// so validate.alignment reported every step passed and validate.step
// PASSED. A directory that exists, in the workspace or among the call's
// inline files, is searched as before.
func TestScriptDirectoriesMustBeDirectories(t *testing.T) {
	reg, root := newTestRegistry(t)
	if err := os.WriteFile(filepath.Join(root, "plain.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args, arg string }{
		{"validate.alignment", `{"workspace_dirs": ["does/not/exist"]}`, "workspace_dirs"},
		{"validate.alignment", `{"workspace_dirs": ["scripts", "plain.py"]}`, "workspace_dirs"},
		{"validate.alignment", `{"source_dir": "does/not/exist"}`, "source_dir"},
		{"validate.step", `{"step_name": "TabularPreprocessing", "source_dir": "plain.py"}`, "source_dir"},
		{"validate.step", `{"step_name": "TabularPreprocessing", "workspace_dirs": ["nowhere"]}`, "workspace_dirs"},
		{"author.check_script", `{"step_name": "TabularPreprocessing", "source_dir": "plain.py"}`, "source_dir"},
	} {
		res := callRemote(t, reg, c.tool, c.args)
		if res.OK || res.Code != registry.CodeInvalidInput || !strings.Contains(res.Error, c.arg) {
			t.Errorf("%s %s: ok=%v %s %q, want invalid_input naming %s", c.tool, c.args, res.OK, res.Code, res.Error, c.arg)
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"validate.alignment", `{"target_scripts": ["TabularPreprocessing"], "workspace_dirs": ["scripts"]}`},
		{"validate.step", `{"step_name": "TabularPreprocessing", "source_dir": "inline", "files": {"inline/other.py": "x = 1\n"}}`},
	} {
		if res := callRemote(t, reg, c.tool, c.args); res.Code == registry.CodeInvalidInput {
			t.Errorf("%s %s: an existing directory refused: %q", c.tool, c.args, res.Error)
		}
	}
}

// TestAbsolutePathsAnswerAlike: an absolute path that names nothing the
// call can use gets one answer whatever the reason (outside the
// workspace, inside but missing, a directory where a file is expected, a
// file where a directory is expected), so a caller cannot confirm guesses
// of where the workspace lies. Told apart, "is a directory" for the root
// and "outside the workspace" for a guess elsewhere answered exactly that.
func TestAbsolutePathsAnswerAlike(t *testing.T) {
	reg, root := newTestRegistry(t)
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "plain.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	guesses := map[string]string{
		"outside":         "/srv/guess/workspace",
		"outside sibling": filepath.Dir(root) + "/elsewhere",
		"the root":        root,
		"inside dir":      root + "/sub",
		"inside missing":  root + "/missing.json",
		"inside file":     root + "/plain.json",
	}
	file, dir := []string{"inside file"}, []string{"the root", "inside dir"}
	for _, c := range []struct {
		tool, args string
		usable     []string // guesses that name a path the call can use
	}{
		{"validate.deps_resolve", `{"dag_file": %q}`, file},
		{"dag.deserialize", `{"path": %q}`, file},
		{"validate.step", `{"step_name": "TabularPreprocessing", "script_path": %q}`, file},
		{"validate.step", `{"step_name": "TabularPreprocessing", "source_dir": %q}`, dir},
		{"validate.alignment", `{"workspace_dirs": [%q]}`, dir},
		{"validate.step_interface", `{"path": %q}`, file},
	} {
		answers := map[string]string{}
		for what, p := range guesses {
			if slices.Contains(c.usable, what) {
				continue
			}
			args := strings.Replace(c.args, "%q", `"`+p+`"`, 1)
			res := callRemote(t, reg, c.tool, args)
			if res.OK || res.Code != registry.CodeInvalidInput {
				t.Errorf("%s %s (%s): ok=%v %s %q, want invalid_input", c.tool, args, what, res.OK, res.Code, res.Error)
				continue
			}
			answers[what] = res.Code + " " + strings.ReplaceAll(res.Error, p, "<path>")
		}
		first := ""
		for _, a := range answers {
			if first == "" {
				first = a
			} else if a != first {
				t.Errorf("%s: the answers tell absolute paths apart:\n%v", c.tool, answers)
				break
			}
		}
	}
}
