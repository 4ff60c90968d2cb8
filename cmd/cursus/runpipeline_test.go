package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/sandbox"
)

func TestRunPipelineUsage(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"run-pipeline", "--workspace-root", root},
		{"run-pipeline", "--dag-file", "d.json", "--definition", "x.json", "--workspace-root", root},
		{"run-pipeline", "--definition", "x.json", "--format", "yaml", "--workspace-root", root},
	} {
		if _, errOut, code := runCLI(t, nil, args...); code != 2 || !strings.Contains(errOut, "run-pipeline") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
	def := filepath.Join(root, "def.json")
	if err := os.WriteFile(def, []byte(`{"nodes": ["A"], "edges": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(root, "manifest.json")
	if err := os.WriteFile(manifest, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, nil, "run-pipeline", "--definition", def, "--manifest", manifest, "--workspace-root", root)
	if code != 1 || !strings.Contains(out, "invalid_input") || !strings.Contains(out, "not a pipeline definition") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

// The example project runs from the command line on its own data, the
// report printed as a table, a progress line per step start and end on
// stderr, exit 0.
func TestRunPipelineExample(t *testing.T) {
	if err := sandbox.Namespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import xgboost").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with xgboost")
	}
	out, errOut, code := runCLI(t, map[string]string{"CURSUS_WORKSPACE_PYTHON": "/usr/bin/python3"}, "run-pipeline",
		"--dag-file", "../../examples/xgboost-tabular/dag.json", "--config-file", "../../examples/xgboost-tabular/config.json",
		"--sample", "../../examples/xgboost-tabular/data/tabular.csv", "--workspace-root", "../..")
	for _, want := range []string{"succeeded            DummyDataLoading-Training", "succeeded            Registration", "/output/model.tar.gz", "ok: every step succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || strings.Count(errOut, "progress: ") != 18 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
