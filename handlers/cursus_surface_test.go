package handlers

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// cursusSurface is testdata/cursus_surface.json: per tool, the argument
// names and top-level payload keys of the Python project's tool, copied
// from the reference tools catalog (the file's _derived entry says how).
type cursusSurface map[string]struct {
	Args []string `json:"args"`
	Keys []string `json:"keys"`
}

func loadCursusSurface(t *testing.T) cursusSurface {
	t.Helper()
	raw, err := os.ReadFile("testdata/cursus_surface.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "_derived")
	surface := cursusSurface{}
	for name, entry := range doc {
		var e struct {
			Args []string `json:"args"`
			Keys []string `json:"keys"`
		}
		if err := json.Unmarshal(entry, &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		surface[name] = e
	}
	return surface
}

// documentedKeyGaps reads the table of docs/CURSUS.md that lists the
// payload keys left out on purpose: rows "| `tool` | `key` | reason |".
func documentedKeyGaps(t *testing.T) map[string]map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("../docs/CURSUS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Payload keys left out\n")
	if !ok {
		t.Fatal(`docs/CURSUS.md has no "## Payload keys left out" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+\\.[a-z_]+)` \\| `([A-Za-z_]+)` \\| \\S")
	gaps := map[string]map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if gaps[m[1]] == nil {
			gaps[m[1]] = map[string]bool{}
		}
		gaps[m[1]][m[2]] = true
	}
	// No rows is fine (every key is returned), but only under the table's
	// header: a section this parser cannot read must not pass silently.
	if len(gaps) == 0 && !strings.Contains(section, "| tool | key | reason |\n|---|---|---|\n") {
		t.Fatal("docs/CURSUS.md's payload-key table is missing or unreadable")
	}
	return gaps
}

// Every argument a Cursus tool accepts is in the matching tool's schema,
// so a script written against the Python surface is not refused for an
// unknown argument.
func TestCursusArgumentsAccepted(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	for name, want := range loadCursusSurface(t) {
		tool, ok := reg.Lookup(name)
		if !ok {
			t.Errorf("%s: no such tool", name)
			continue
		}
		props, _ := tool.Schema()["properties"].(map[string]any)
		for _, arg := range want.Args {
			if _, ok := props[arg]; !ok {
				t.Errorf("%s: argument %q is not accepted", name, arg)
			}
		}
	}
}

// Every payload key a Cursus tool returns appears in the data of the
// matching tool's golden-path successes, or docs/CURSUS.md lists it with
// its reason; and every key docs/CURSUS.md lists as left out is indeed
// absent, so the page matches the code.
func TestCursusPayloadKeysPresent(t *testing.T) {
	reg, _ := exampleRegistry(t, fakeAWS(t).URL())
	gaps := documentedKeyGaps(t)
	surface := loadCursusSurface(t)
	for tool := range gaps {
		if _, ok := surface[tool]; !ok {
			t.Errorf("docs/CURSUS.md lists keys of %s, which the Cursus surface does not have", tool)
		}
	}
	names := make([]string, 0, len(surface))
	for name := range surface {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := surface[name]
		tool, ok := reg.Lookup(name)
		if !ok {
			continue // TestCursusArgumentsAccepted reports it
		}
		calls := goldenPath[name]
		if calls == nil {
			calls = exampleArgsOf(tool)
		}
		seen, succeeded := map[string]bool{}, 0
		for _, args := range calls {
			res := call(t, reg, name, args)
			if !res.OK {
				continue
			}
			succeeded++
			for k := range jsonData(t, res) {
				seen[k] = true
			}
		}
		if succeeded == 0 {
			if len(want.Keys) > 0 {
				t.Errorf("%s: no golden-path call succeeded", name)
			}
			continue
		}
		for _, key := range want.Keys {
			switch {
			case !seen[key] && !gaps[name][key]:
				t.Errorf("%s: payload key %q is missing and docs/CURSUS.md does not say why", name, key)
			case seen[key] && gaps[name][key]:
				t.Errorf("%s: docs/CURSUS.md lists %q as left out, but the tool returns it", name, key)
			}
		}
	}
}
