package deploy

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/server"
)

// documentedKeys maps every key path of a commented YAML file to its
// comment (head or line comment of the key).
func documentedKeys(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := strings.TrimPrefix(prefix+"."+k.Value, ".")
			out[key] = strings.TrimSpace(k.HeadComment + " " + k.LineComment + " " + v.LineComment)
			walk(v, key)
		}
	}
	walk(doc.Content[0], "")
	return out
}

// TestExampleConfigDocumentsEveryKey: deploy/cursus.yaml names every key of
// server.Config with a comment, loads, and shows the built-in defaults.
func TestExampleConfigDocumentsEveryKey(t *testing.T) {
	path := filepath.Join(repoRoot(t), "deploy", "cursus.yaml")
	data := readRepoFile(t, "deploy/cursus.yaml")
	cfg, err := server.LoadConfig(path, noEnv)
	if err != nil {
		t.Fatalf("deploy/cursus.yaml does not load: %v", err)
	}
	documented := documentedKeys(t, data)
	for _, key := range configKeys() {
		comment, ok := documented[key]
		switch {
		case !ok:
			t.Errorf("deploy/cursus.yaml lacks key %s", key)
		case comment == "":
			t.Errorf("deploy/cursus.yaml: key %s has no comment", key)
		}
		section, _, _ := strings.Cut(key, ".")
		if documented[section] == "" {
			t.Errorf("deploy/cursus.yaml: section %s has no comment", section)
		}
	}
	// The example claims to show the defaults; nil and empty lists or maps
	// print the same.
	got, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.Marshal(server.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("deploy/cursus.yaml differs from the built-in defaults:\nfile:\n%s\ndefaults:\n%s", got, want)
	}
}

func TestDocumentedKeysSeesMissingComments(t *testing.T) {
	keys := documentedKeys(t, []byte("# section\na:\n  # documented\n  b: 1\n  c: 2 # inline\n  d: 3\n"))
	if keys["a"] == "" || keys["a.b"] == "" || keys["a.c"] == "" {
		t.Errorf("comments not found: %q", keys)
	}
	if c, ok := keys["a.d"]; !ok || c != "" {
		t.Errorf("a.d: got %q, %v; want present without comment", c, ok)
	}
}
