package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEngineNamesNoTool: the engine knows no tool. No string literal in
// engine/ (tests aside) names a registered tool; the tool names, args
// hints and "which tool produces this" live in handlers (for workflow
// stages, workflowStageTools; for a scaffolded project's README and
// stubs, projectGuide; for code the compiler cannot find, compileError
// and codeGuidance).
func TestEngineNamesNoTool(t *testing.T) {
	reg, _ := newTestRegistry(t)
	var names []string
	for _, tool := range reg.Tools("") {
		names = append(names, regexp.QuoteMeta(tool.Name))
	}
	if len(names) < 50 {
		t.Fatalf("only %d registered tools", len(names))
	}
	// A tool name stands alone: not part of a longer dotted word or path.
	named := regexp.MustCompile(`(^|[^A-Za-z0-9_./])(` + strings.Join(names, "|") + `)($|[^A-Za-z0-9_/]|\.($|[^A-Za-z0-9_]))`)
	fset := token.NewFileSet()
	scanned := 0
	engine := filepath.Join("..", "engine")
	err := filepath.WalkDir(engine, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		isTemplate := strings.HasSuffix(path, ".tmpl")
		if !isTemplate && !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if isTemplate {
			// An embedded template's text is engine text as a literal is.
			if m := named.FindStringSubmatch(string(src)); m != nil {
				t.Errorf("%s names tool %s", path, m[2])
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				s = lit.Value
			}
			if m := named.FindStringSubmatch(s); m != nil {
				t.Errorf("%s names tool %s: %q", fset.Position(lit.Pos()), m[2], s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d engine files", scanned)
	}
}

// TestProjectGuideNamesTools: every tool a scaffolded project's README and
// stubs name (projectGuide, which the engine writes as given) is a
// registered tool, so a renamed tool cannot leave the guide stale.
func TestProjectGuideNamesTools(t *testing.T) {
	reg, _ := newTestRegistry(t)
	registered := map[string]bool{}
	for _, tool := range reg.Tools("") {
		registered[tool.Name] = true
	}
	g := reflect.ValueOf(projectGuide)
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		if tool := g.Field(i).String(); !registered[tool] {
			t.Errorf("projectGuide.%s = %q, not a registered tool", name, tool)
		}
	}
}
