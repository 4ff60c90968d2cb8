package localrun

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/sandbox"
)

// python is the interpreter the tests run jobs with: Debian's, which has
// the ML libraries (CI installs them).
const python = "/usr/bin/python3"

// needRuntime skips a test where jobs cannot run: no sandbox with
// namespaces, or no python3 with the modules.
func needRuntime(t testing.TB, modules ...string) {
	t.Helper()
	if err := sandbox.Check(); err != nil {
		t.Skipf("no script sandbox: %v", err)
	}
	if err := sandbox.Namespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s", python)
	}
	for _, m := range modules {
		if err := exec.Command(python, "-c", "import "+m).Run(); err != nil {
			t.Skipf("%s cannot import %s", python, m)
		}
	}
}

// compileFS compiles the DAG and config files of fsys.
func compileFS(t testing.TB, fsys fs.FS, dagFile, configFile string) *compiler.Result {
	t.Helper()
	cat, schemas := enginetest.Catalog(t)
	data, err := fs.ReadFile(fsys, dagFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	f := enginetest.ConfigFile(t, fsys, configFile, schemas)
	res, err := compiler.Compile(context.Background(), compiler.Input{DAG: d, Configs: f.Configs, Catalog: cat, Sources: fsys})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func testRunner(t testing.TB, s Settings) *Runner {
	s.Python = python
	if s.TempDir == "" {
		s.TempDir = t.TempDir()
	}
	return NewRunner(s)
}
