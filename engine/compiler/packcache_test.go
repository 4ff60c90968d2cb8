package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

func untar(t *testing.T, b []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = string(data)
	}
}

// A tarball is packed once per content: the same files give the kept
// tarball, and a changed file or generated extra (an edit on disk, a
// caller's overlay) gives a new one with the new bytes.
func TestPackedOncePerContent(t *testing.T) {
	files := func() map[string][]byte {
		return map[string][]byte{"train.py": []byte("print('packcache v1')\n"), "lib/util.py": []byte("X = 1\n")}
	}
	first, err := packFiles(files(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := packed.get(packKey([]string{"lib/util.py", "train.py"}, files())); !ok {
		t.Fatal("tarball not kept")
	}
	again, _ := packFiles(files(), nil)
	if &again[0] != &first[0] {
		t.Error("the same content was packed again")
	}
	edited := files()
	edited["train.py"] = []byte("print('packcache v2')\n")
	if got := untar(t, must(packFiles(edited, nil))); got["train.py"] != "print('packcache v2')\n" {
		t.Errorf("edited file: %q", got["train.py"])
	}
	withExtra := must(packFiles(files(), map[string][]byte{"train.py": []byte("overlay\n")}))
	if got := untar(t, withExtra); got["train.py"] != "overlay\n" || got["lib/util.py"] != "X = 1\n" {
		t.Errorf("extra over the files: %q", got)
	}
	if got := untar(t, must(packFiles(files(), nil))); got["train.py"] != "print('packcache v1')\n" {
		t.Errorf("original content after the others: %q", got["train.py"])
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
