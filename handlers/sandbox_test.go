package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/sandbox"
	"github.com/cursus-dev/cursus/registry"
)

// registryWithoutSandbox plays a kernel that cannot confine scripts.
func registryWithoutSandbox(t *testing.T, opts Options) (*registry.Registry, string) {
	t.Helper()
	opts.WorkspaceRoot = t.TempDir()
	deps, err := NewDeps(opts)
	if err != nil {
		t.Fatal(err)
	}
	deps.Scripts.ProbeSandbox = func(context.Context) error {
		return &sandbox.UnavailableError{Missing: "this kernel has Landlock ABI 3 (test)"}
	}
	reg, err := registry.New(registry.Options{}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg, deps.Root.Dir()
}

const okPreprocessing = "import os\n\ndef main(input_paths, output_paths, environ_vars, job_args):\n    open(os.path.join(output_paths['processed_data'], 'o.csv'), 'w').write('a\\n1\\n')\n"

// TestValidateRunScriptsWithoutASandbox: the tool answers
// runtime_unavailable naming what the kernel lacks and the setting that
// overrides it, and runs the script when that setting is on.
func TestValidateRunScriptsWithoutASandbox(t *testing.T) {
	needPython3(t)
	args := `{"nodes": ["TabularPreprocessing_training"], "env": {"LABEL_FIELD": "a"}}`
	reg, root := registryWithoutSandbox(t, Options{})
	writeWS(t, root, "scripts/tabular_preprocessing.py", okPreprocessing)
	res := call(t, reg, "validate.run_scripts", args)
	mustFail(t, res, registry.CodeRuntimeUnavailable)
	for _, want := range []string{"Landlock ABI 3 (test)", "allow_unisolated_scripts"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("the error does not name %q: %s", want, res.Error)
		}
	}

	reg, root = registryWithoutSandbox(t, Options{AllowUnisolatedScripts: true})
	writeWS(t, root, "scripts/tabular_preprocessing.py", okPreprocessing)
	data := valOK(t, call(t, reg, "validate.run_scripts", args))
	if data["pipeline_success"] != true || !strings.Contains(mustJSON(t, data["isolation"]), "UNISOLATED") {
		t.Errorf("unisolated run: %v", data)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestScriptTreeLimitsReachTheRunner: the workspace.script_* settings,
// passed as Options, are the limits the runner applies and reports.
func TestScriptTreeLimitsReachTheRunner(t *testing.T) {
	needPython3(t)
	if err := sandbox.Check(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	if err := sandbox.Cgroup(); err != nil {
		t.Skipf("runs get no cgroup here: %v", err)
	}
	deps, err := NewDeps(Options{WorkspaceRoot: t.TempDir(), ScriptMaxProcesses: 77, ScriptMemoryBytes: 1 << 30, ScriptCPUWeight: 20})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(deps.Scripts.Isolation())
	if want := "at most 77 processes and threads, 1073741824 bytes of memory for the whole tree, CPU weight 20"; !strings.Contains(string(b), want) {
		t.Errorf("isolation = %s, want it to say %q", b, want)
	}
}
