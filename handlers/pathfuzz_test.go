package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/registry"
)

// hostilePaths are path arguments that once reached the handlers as raw
// operating-system errors (internal_error): over-long names, a directory
// where a file is expected, a file where a directory is expected, NUL.
func hostilePaths() map[string]string {
	return map[string]string{
		"long name":         strings.Repeat("n", 300) + ".json",
		"long nested name":  "sub/" + strings.Repeat("n", 300),
		"long path":         strings.Repeat(strings.Repeat("d", 200)+"/", 25) + "f.json",
		"directory":         "sub",
		"root":              ".",
		"file as directory": "plain.json/inner.json",
		"NUL":               "a\x00b.json",
		"missing":           "no/such/file.json",
		"absolute missing":  "/nonexistent-dir/x.json",
		"escape":            "../../etc/passwd",
		"symlink out":       "out/x.json",
		"symlink loop":      "loop/x.json",
		"missing script":    "scripts/missing.py",
	}
}

// firstExampleArgs are the arguments of t's first example, or {}.
func firstExampleArgs(t *registry.ToolDef) map[string]any {
	args := map[string]any{}
	if len(t.Examples) > 0 {
		if _, raw, ok := strings.Cut(t.Examples[0], " "); ok {
			raw, _, _ = strings.Cut(raw, "  #")
			_ = json.Unmarshal([]byte(strings.TrimSpace(raw)), &args)
		}
	}
	return args
}

// stringArgs are t's top-level string arguments without enum or pattern:
// the ones a path can be passed in.
func stringArgs(t *registry.ToolDef) []string {
	props, _ := t.Schema()["properties"].(map[string]any)
	var out []string
	for name, p := range props {
		p, _ := p.(map[string]any)
		if p["type"] == "string" && p["enum"] == nil && p["pattern"] == nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestPathArgumentFuzz: every tool, every free-form string argument, every
// hostile path, through the real registry over a workspace holding the
// examples, with AWS at a closed loopback port. No call may answer
// internal_error (a caller's bad path is invalid_input or not_found), and
// no error may show the server's directories or the AWS endpoint.
func TestPathArgumentFuzz(t *testing.T) {
	dir := t.TempDir()
	rel := filepath.Join("examples", "xgboost-tabular")
	if err := os.CopyFS(filepath.Join(dir, rel), os.DirFS(filepath.Join("..", rel))); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := l.Addr().String()
	l.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	deps, err := NewDeps(Options{WorkspaceRoot: dir, AWSEndpoint: "http://" + endpoint, AWSRegion: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	errs := &lastErr{}
	reg, err := registry.New(registry.Options{Observer: errs}, Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	root := deps.Root.Dir()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "plain.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	leaks := func(where string, res *registry.Result) {
		// The parent holds the workspace and the symlink's target.
		body := string(res.Encode())
		if strings.Contains(body, filepath.Dir(root)) {
			t.Errorf("%s: the error shows a server directory: %.300s", where, body)
		}
		if strings.Contains(body, endpoint) {
			t.Errorf("%s: the error shows the AWS endpoint: %.300s", where, body)
		}
	}

	// Every upsert fails to connect: upsert_failed, saying so, no URL.
	for _, args := range []string{`{` + exampleArgs + `, "upsert": true}`, `{` + exampleArgs + `, "upsert": true, "role": "arn:aws:iam::123456789012:role/x"}`} {
		res := call(t, reg, "compile.dag", args)
		if res.OK || res.Code != registry.CodeUpsertFailed || !strings.Contains(res.Error, "could not reach") || urlInText.MatchString(res.Error) {
			t.Errorf("upsert to a closed port: %s %q %v", res.Code, res.Error, errs.err)
		}
		leaks("compile.dag upsert", res)
	}

	deadline := time.Now().Add(3 * time.Minute)
	calls, internal := 0, 0
	for _, tool := range reg.Tools("") {
		if tool.ExecCode {
			continue // runs scripts; its paths go through the same workspace calls
		}
		base := firstExampleArgs(tool)
		for _, arg := range stringArgs(tool) {
			for label, value := range hostilePaths() {
				if time.Now().After(deadline) {
					t.Fatalf("stopped after %d calls: out of time", calls)
				}
				args := map[string]any{}
				for k, v := range base {
					args[k] = v
				}
				args[arg] = value
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res := reg.Call(ctx, tool.Name, args)
				cancel()
				calls++
				if res.OK {
					continue
				}
				where := fmt.Sprintf("%s %s=%s", tool.Name, arg, label)
				if res.Code == registry.CodeInternal {
					internal++
					t.Errorf("%s: internal_error: %v", where, errs.err)
				}
				leaks(where, res)
			}
		}
	}
	t.Logf("%d calls, %d internal_error", calls, internal)
	if calls < 500 { // 806 when written: fewer means the arguments were not found
		t.Errorf("only %d calls: no longer reaching the tools' path arguments", calls)
	}
}

var urlInText = regexp.MustCompile(`https?://`)

// lastErr keeps the error of the last call, which the envelope of an
// internal_error hides.
type lastErr struct{ err error }

func (l *lastErr) CallStarted(ctx context.Context, _ string, _ registry.Caller) context.Context {
	return ctx
}
func (l *lastErr) CallFinished(_ context.Context, rec registry.CallRecord) { l.err = rec.Err }
