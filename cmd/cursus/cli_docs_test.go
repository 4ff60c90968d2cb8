package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
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

// readmeCodeBlocks returns the fenced code blocks of README.md (indented
// fences included) with their info strings and byte offsets.
func readmeCodeBlocks(t *testing.T) (doc string, langs, texts []string, offsets []int) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc = string(b)
	in, at := false, 0
	var body strings.Builder
	for _, line := range strings.SplitAfter(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && strings.HasPrefix(trimmed, "```"):
			in = true
			langs, offsets = append(langs, strings.TrimPrefix(trimmed, "```")), append(offsets, at)
			body.Reset()
		case in && trimmed == "```":
			in = false
			texts = append(texts, body.String())
		case in:
			body.WriteString(line)
		}
		at += len(line)
	}
	if in {
		t.Fatal("README.md has an unclosed code block")
	}
	return doc, langs, texts, offsets
}

// cursusCommand finds `cursus …` (or `go run ./cmd/cursus …`) where a
// shell command starts: at the start of a line, after an operator, `$(`
// or `--`, past any VAR=value assignments.
var cursusCommand = regexp.MustCompile(`(?m)(?:^\s*|&&\s*|\|\|?\s*|;\s*|\$\(\s*|\s--\s+)(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:go run \./cmd/cursus|cursus)\s+([^\n]*)`)

// TestReadmeCursusCommandsAreReal: every `cursus` command in README.md's
// code blocks and inline code, and every client configuration that runs
// `cursus`, names a subcommand the usage text lists and the binary
// dispatches; and `go install ./cmd/cursus` comes before the first one
// that needs the installed binary.
func TestReadmeCursusCommandsAreReal(t *testing.T) {
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  cursus ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)`).FindAllStringSubmatch(usage, -1) {
		known[m[1]] = true
	}
	if len(known) < 8 {
		t.Fatalf("usage lists %d commands: %v", len(known), known)
	}
	for cmd := range known {
		args := append(strings.Fields(cmd), "--no-such-flag-for-this-test")
		_, errOut, _ := runCLI(t, nil, args...)
		for _, bad := range []string{"unknown command", "unknown mcp subcommand", "needs a subcommand"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("usage lists %q, but the binary answers: %s", cmd, errOut)
			}
		}
	}
	hasSub := func(w string) bool {
		for k := range known {
			if strings.HasPrefix(k, w+" ") {
				return true
			}
		}
		return false
	}
	check := func(where string, words []string) {
		if len(words) == 0 {
			t.Errorf("%s: cursus without a command", where)
			return
		}
		cmd := words[0]
		if hasSub(cmd) && len(words) > 1 {
			cmd += " " + words[1]
		}
		if !known[cmd] {
			t.Errorf("%s: %q is not a cursus command (usage lists %v)", where, cmd, known)
		}
	}

	doc, langs, texts, offsets := readmeCodeBlocks(t)
	firstUse, install, n := -1, -1, 0
	for i, text := range texts {
		if j := strings.Index(text, "go install -tags grpcnotrace ./cmd/cursus"); j >= 0 && install < 0 {
			install = offsets[i] + j
		}
		for _, m := range cursusCommand.FindAllStringSubmatchIndex(text, -1) {
			line := text[m[0]:m[1]]
			check(fmt.Sprintf("README block %d: %s", i+1, strings.TrimSpace(line)), strings.Fields(text[m[2]:m[3]]))
			n++
			if !strings.Contains(line, "./cmd/cursus") && (firstUse < 0 || offsets[i]+m[0] < firstUse) {
				firstUse = offsets[i] + m[0]
			}
		}
		if langs[i] != "json" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			continue // the envelope examples abbreviate with {...}
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if x["command"] == "cursus" {
					var args []string
					for _, a := range x["args"].([]any) {
						args = append(args, fmt.Sprint(a))
					}
					check(fmt.Sprintf("README block %d: command cursus %v", i+1, args), args)
					n++
					if firstUse < 0 || offsets[i] < firstUse {
						firstUse = offsets[i]
					}
				}
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	}
	for _, m := range regexp.MustCompile("`cursus ([^`]*)`").FindAllStringSubmatch(doc, -1) {
		check("README inline code: cursus "+m[1], strings.Fields(m[1]))
		n++
	}
	if n < 10 {
		t.Fatalf("found only %d cursus commands in README.md", n)
	}
	if firstUse >= 0 && (install < 0 || install > firstUse) {
		t.Errorf("README.md runs the installed cursus (at byte %d) before it says go install -tags grpcnotrace ./cmd/cursus (at %d)", firstUse, install)
	}
}
