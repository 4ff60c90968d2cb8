package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the repository root; go test runs in the package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readRepoFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// inCI reports whether the test runs in CI, where missing tools are
// failures rather than reasons to skip.
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "0" && v != "false"
}

// needTool finds an external tool (the HELM variable wins for helm): skipped
// locally when absent, fatal in CI.
func needTool(t *testing.T, name, envVar, howToInstall string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := name + " is not on PATH (and " + envVar + " is unset); install it with " + howToInstall
	if inCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func helmBinary(t *testing.T) string {
	t.Helper()
	return needTool(t, "helm", "HELM", `PATH="$(dirname "$(scripts/install-helm.sh)"):$PATH"`)
}

// testVersion is baked into the binary the tests build, so `cursus version`
// proves the -ldflags wiring of scripts/build.sh.
const testVersion = "v0.0.0-deploy-test"

var built struct {
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
}

// cursusBinary builds cmd/cursus once per test run with scripts/build.sh,
// the same command the Dockerfile's build stage runs.
func cursusBinary(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "cursus-deploy-test-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "out", "cursus")
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "build.sh"), built.bin)
		cmd.Env = append(os.Environ(), "VERSION="+testVersion)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		built.err = cmd.Run()
		built.out = out.Bytes()
	})
	if built.err != nil {
		t.Fatalf("scripts/build.sh: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
