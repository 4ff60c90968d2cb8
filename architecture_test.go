package cursus

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/cursus-dev/cursus"

// layerOf is the layer a package of the module belongs to: the first
// element of its path (cmd/cursus for the binary), "cursus" for the root
// package.
func layerOf(pkg string) string {
	switch {
	case pkg == "":
		return "cursus"
	case pkg == "cmd/cursus" || strings.HasPrefix(pkg, "cmd/cursus/"):
		return "cmd/cursus"
	}
	first, _, _ := strings.Cut(pkg, "/")
	return first
}

// drawnLayers reads the layering list docs/ARCHITECTURE.md draws: the
// fenced block after the "layers:" marker, one "layer → layer, …" a line.
func drawnLayers(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- layers:")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no <!-- layers: … --> block")
	}
	lines := strings.Split(after, "\n")
	drawn := map[string][]string{}
	in := false
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		from, to, ok := strings.Cut(line, "→")
		if !in || !ok {
			t.Fatalf("layers block: cannot read %q", line)
		}
		from = strings.TrimSpace(from)
		drawn[from] = []string{}
		for _, l := range strings.Split(to, ",") {
			if l = strings.TrimSpace(l); l != "" {
				drawn[from] = append(drawn[from], l)
			}
		}
	}
	if len(drawn) < 5 {
		t.Fatalf("layers block lists %d layers", len(drawn))
	}
	return drawn
}

// moduleImports maps every package of the module (by path inside it) to
// the packages of the module its non-test files import.
func moduleImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		if pkg == "." {
			pkg = ""
		}
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip == module {
				out[pkg][""] = true
			} else if rest, ok := strings.CutPrefix(ip, module+"/"); ok {
				out[pkg][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found %d packages; is the test running at the repository root?", len(out))
	}
	return out
}

// TestLayering: every import between the module's packages is an edge
// docs/ARCHITECTURE.md draws, and every drawn edge is used. Any package
// may import internal/…, which imports nothing of ours; a package of a
// layer the drawing leaves out imports only internal/….
func TestLayering(t *testing.T) {
	drawn := drawnLayers(t)
	used := map[string]bool{}
	for pkg, imports := range moduleImports(t) {
		from := layerOf(pkg)
		for imp := range imports {
			to := layerOf(imp)
			switch {
			case to == "internal" && from != "internal":
				continue
			case slices.Contains(drawn[from], to):
				used[from+" → "+to] = true
			default:
				t.Errorf("%s (layer %s) imports %s (layer %s), which docs/ARCHITECTURE.md does not draw", path.Join(module, pkg), from, path.Join(module, imp), to)
			}
		}
	}
	for from, tos := range drawn {
		for _, to := range tos {
			if !used[from+" → "+to] {
				t.Errorf("docs/ARCHITECTURE.md draws %s → %s, but no package of %s imports one of %s", from, to, from, to)
			}
		}
	}
}
