package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeTarGz(t *testing.T, path string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The repack script the compiler ships puts the model step's code under
// code/ next to the trained model's files, and refuses an archive whose
// members leave the model folder.
func TestRepackScriptPutsCodeIntoTheModel(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, RepackScript)
	if err := os.WriteFile(script, repackScript, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(input, model string) (string, error) {
		cmd := exec.Command(py, "-c", "import sys, importlib.util as u; s = u.spec_from_file_location('r', sys.argv[1]); m = u.module_from_spec(s); "+
			"s.loader.exec_module(m); m.repack(sys.argv[2], sys.argv[3], 'model.tar.gz', 'inference.py')", script, input, model)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	input := filepath.Join(dir, "input")
	writeTarGz(t, filepath.Join(input, "training", "model.tar.gz"), map[string]string{"model.pth": "weights", "code/old.py": "stale"})
	writeTarGz(t, filepath.Join(input, "code", "sourcedir.tar.gz"), map[string]string{"inference.py": "def model_fn(d): pass\n", "lib/util.py": "x = 1\n"})
	model := filepath.Join(dir, "model")
	if out, err := run(input, model); err != nil {
		t.Fatalf("repack: %v\n%s", err, out)
	}
	for _, f := range []string{"model.pth", "code/inference.py", "code/lib/util.py"} {
		if _, err := os.Stat(filepath.Join(model, f)); err != nil {
			t.Errorf("%s not in the repacked model: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(model, "code", "old.py")); err == nil {
		t.Error("the archive's old code/ was kept")
	}
	evil := filepath.Join(dir, "evil")
	writeTarGz(t, filepath.Join(evil, "training", "model.tar.gz"), map[string]string{"../escape.txt": "x"})
	writeTarGz(t, filepath.Join(evil, "code", "sourcedir.tar.gz"), map[string]string{"inference.py": ""})
	out, err := run(evil, filepath.Join(dir, "model2"))
	if err == nil || !strings.Contains(out, "leaves") {
		t.Errorf("an escaping member was extracted: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "escape.txt")); err == nil {
		t.Error("escape.txt written outside the model folder")
	}
}
