package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Handlers are adapters: files, processes and directory walks belong to
// the engine, which reads through the workspace and the call's overlay.
// This keeps it so for every non-test file of the package.
func TestHandlersTouchNoFilesOrProcesses(t *testing.T) {
	forbiddenImports := map[string]bool{"os": true, "os/exec": true, "syscall": true}
	forbiddenCalls := map[string]bool{
		"fs.WalkDir": true, "fs.ReadDir": true, "fs.Glob": true,
		"filepath.Walk": true, "filepath.WalkDir": true, "filepath.Glob": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); forbiddenImports[path] {
				t.Errorf("%s imports %s", fset.Position(imp.Pos()), path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && forbiddenCalls[pkg.Name+"."+sel.Sel.Name] {
				t.Errorf("%s calls %s.%s", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files; is the test running in the handlers directory?", checked)
	}
}
