package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkflowKeyFromEnvFileOrNone: the key comes from CURSUS_WORKFLOW_KEY
// or from the file CURSUS_WORKFLOW_KEY_FILE names (a mounted Secret, its
// trailing newline dropped); both set is an error; none is nil (the
// development key); config print redacts it.
func TestWorkflowKeyFromEnvFileOrNone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("from-the-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func(env map[string]string) WorkflowConfig {
		t.Helper()
		cfg, err := LoadConfig("", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Workflow
	}
	key, err := load(map[string]string{"CURSUS_WORKFLOW_KEY": "inline-key-0123456789"}).SigningKey()
	if err != nil || string(key) != "inline-key-0123456789" {
		t.Fatalf("env key: %q %v", key, err)
	}
	key, err = load(map[string]string{"CURSUS_WORKFLOW_KEY_FILE": file}).SigningKey()
	if err != nil || string(key) != "from-the-secret-0123456789" {
		t.Fatalf("file key: %q %v", key, err)
	}
	if _, err := load(map[string]string{"CURSUS_WORKFLOW_KEY": "a", "CURSUS_WORKFLOW_KEY_FILE": file}).SigningKey(); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("both set: %v", err)
	}
	if key, err := load(nil).SigningKey(); key != nil || err != nil {
		t.Fatalf("none set: %q %v", key, err)
	}
	cfg := DefaultConfig()
	cfg.Workflow.Key = "secret-secret-secret"
	if got := cfg.Redacted().Workflow.Key; got != redactedValue {
		t.Fatalf("config print shows the key: %q", got)
	}
}

// TestWorkflowPreviousKeys: previous keys come from the list and from the
// file (one per line, comments and blanks skipped); config print redacts
// them; a missing file is an error naming the key.
func TestWorkflowPreviousKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "previous")
	if err := os.WriteFile(file, []byte("# retired in March\nfile-key-one-0123456789\n\n  file-key-two-0123456789  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CURSUS_WORKFLOW_PREVIOUS_KEYS": "list-key-0123456789", "CURSUS_WORKFLOW_PREVIOUS_KEYS_FILE": file}
	cfg, err := LoadConfig("", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cfg.Workflow.VerifyKeys()
	var got []string
	for _, k := range keys {
		got = append(got, string(k))
	}
	if err != nil || strings.Join(got, " ") != "list-key-0123456789 file-key-one-0123456789 file-key-two-0123456789" {
		t.Fatalf("previous keys %q, %v", got, err)
	}
	if red := cfg.Redacted().Workflow.PreviousKeys; len(red) != 1 || red[0] != redactedValue {
		t.Errorf("config print shows previous keys: %q", red)
	}
	cfg.Workflow.PreviousKeysFile = filepath.Join(t.TempDir(), "absent")
	if _, err := cfg.Workflow.VerifyKeys(); err == nil || !strings.Contains(err.Error(), "workflow.previous_keys_file") {
		t.Errorf("missing file: %v", err)
	}
}
