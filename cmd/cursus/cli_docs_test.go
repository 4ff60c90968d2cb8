package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestHelpSchemaFlagPrintsSchemas: --schema adds each tool's input schema
// to the default text format.
func TestHelpSchemaFlagPrintsSchemas(t *testing.T) {
	root := t.TempDir()
	plain, errOut, code := runCLI(t, nil, "mcp", "help", "--namespace", "tools", "--workspace-root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	withSchema, errOut, code := runCLI(t, nil, "mcp", "help", "--namespace", "tools", "--schema", "--workspace-root", root)
	if code != 0 {
		t.Fatalf("--schema: exit %d: %s", code, errOut)
	}
	if withSchema == plain {
		t.Fatal("--schema prints the same text as without it")
	}
	if strings.Contains(plain, "Input schema:") {
		t.Errorf("schemas without --schema:\n%s", plain)
	}
	// tools.by_phase requires phase, one of three values.
	for _, want := range []string{"Input schema:", `"required": [`, `"phase"`, `"programmer"`} {
		if !strings.Contains(withSchema, want) {
			t.Errorf("--schema output lacks %s:\n%s", want, withSchema)
		}
	}
}

// TestListToolsUnknownNamespaceFails: an unknown namespace exits 1 with a
// message that names it and the namespaces there are, as mcp help does.
func TestListToolsUnknownNamespaceFails(t *testing.T) {
	root := t.TempDir()
	for _, format := range []string{"text", "json"} {
		out, errOut, code := runCLI(t, nil, "mcp", "list-tools", "--namespace", "nope", "--format", format, "--workspace-root", root)
		if code != 1 || out != "" {
			t.Fatalf("%s: exit %d, stdout %q; want 1 and nothing", format, code, out)
		}
		if !strings.Contains(errOut, "unknown namespace: 'nope'") || !strings.Contains(errOut, "catalog") {
			t.Errorf("%s: stderr %q", format, errOut)
		}
	}
	if _, errOut, code := runCLI(t, nil, "mcp", "list-tools", "--namespace", "tools", "--workspace-root", root); code != 0 {
		t.Fatalf("a real namespace: exit %d: %s", code, errOut)
	}
}

// TestREADMEEnvelopeMatchesTheServer: the README's two envelope examples
// show the top-level fields a real envelope of that kind has, only fields
// it has below that, and no empty field (empty fields are dropped).
func TestREADMEEnvelopeMatchesTheServer(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "Every call returns an envelope:\n\n```json\n")
	if !ok {
		t.Fatal("README has no envelope example")
	}
	block, _, _ := strings.Cut(after, "```")
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) != 2 {
		t.Fatalf("want an ok and an error example, got %d lines", len(lines))
	}
	root := t.TempDir()
	for i, call := range [][]string{{"tools.help", "{}"}, {"tools.by_phase", `{"phase":"x"}`}} {
		var shown map[string]any
		// {...} stands for content the example leaves out.
		if err := json.Unmarshal([]byte(strings.ReplaceAll(lines[i], "{...}", `"..."`)), &shown); err != nil {
			t.Fatalf("README example %d is not JSON: %v: %s", i+1, err, lines[i])
		}
		out, _, _ := runCLI(t, nil, "call", "--workspace-root", root, call[0], call[1])
		var sent map[string]any
		if err := json.Unmarshal([]byte(out), &sent); err != nil {
			t.Fatal(err)
		}
		if shown["ok"] != sent["ok"] || (shown["code"] != nil && shown["code"] != sent["code"]) {
			t.Fatalf("example %d is ok=%v code=%v, the call %v %v", i+1, shown["ok"], shown["code"], sent["ok"], sent["code"])
		}
		if got, want := sortedKeys(shown), sortedKeys(sent); got != want {
			t.Errorf("example %d has fields %s, the server sends %s", i+1, got, want)
		}
		checkShownFields(t, fmt.Sprintf("example %d", i+1), shown, sent)
	}
}

// checkShownFields fails for a field of shown that is empty or that sent
// lacks, recursing into objects and the first element of arrays.
func checkShownFields(t *testing.T, path string, shown, sent any) {
	t.Helper()
	switch s := shown.(type) {
	case map[string]any:
		if len(s) == 0 {
			t.Errorf("%s: an empty object, which the server drops", path)
		}
		m, _ := sent.(map[string]any)
		for k, v := range s {
			if _, ok := m[k]; !ok {
				t.Errorf("%s.%s: not in the envelope the server sends", path, k)
				continue
			}
			checkShownFields(t, path+"."+k, v, m[k])
		}
	case []any:
		if len(s) == 0 {
			t.Errorf("%s: an empty array, which the server drops", path)
			return
		}
		if a, _ := sent.([]any); len(a) > 0 {
			checkShownFields(t, path+"[0]", s[0], a[0])
		}
	}
}

func sortedKeys(m map[string]any) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
