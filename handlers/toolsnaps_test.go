package handlers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/cursus-dev/cursus/registry"
)

// TestToolSnapshots pins every tool's exported MCP shape (name, rendered
// description, input schema, annotations) in __toolsnaps__/<wire>.snap, so
// any schema change shows up in review. Regenerate with
// UPDATE_TOOLSNAPS=true go test ./handlers -run TestToolSnapshots.
// Outside CI a missing snapshot is written; in CI it fails.
func TestToolSnapshots(t *testing.T) {
	reg, _ := newTestRegistry(t)
	update := os.Getenv("UPDATE_TOOLSNAPS") == "true"
	inCI := os.Getenv("CI") != ""
	dir := "__toolsnaps__"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, mt := range registry.ExportMCP(reg.Tools("")) {
		file := filepath.Join(dir, mt.Name+".snap")
		want[filepath.Base(file)] = true
		got, err := json.MarshalIndent(mt, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		old, err := os.ReadFile(file)
		switch {
		case update || (os.IsNotExist(err) && !inCI):
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
		case err != nil:
			t.Errorf("%s: no snapshot (run with UPDATE_TOOLSNAPS=true): %v", mt.Name, err)
		case !bytes.Equal(old, got):
			t.Errorf("%s: exported tool changed; review and run with UPDATE_TOOLSNAPS=true\n%s", mt.Name, snapDiff(file, old, got))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".snap") && !want[e.Name()] {
			if update {
				_ = os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("stale snapshot %s: the tool no longer exists (UPDATE_TOOLSNAPS=true removes it)", e.Name())
		}
	}
}

// snapDiff is the unified diff from a snapshot to what the tool exports now.
func snapDiff(file string, old, now []byte) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(now)),
		FromFile: file, ToFile: "now", Context: 3,
	})
	if err != nil {
		return err.Error()
	}
	return d
}
