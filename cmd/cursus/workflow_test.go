package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyExample copies the example project into a fresh workspace, with
// edit applied to its dag.json text, and returns the workspace and the
// project directory.
func copyExample(t *testing.T, edit func(string) string) (root, dir string) {
	t.Helper()
	root = t.TempDir()
	src := filepath.Join("..", "..", "examples", "xgboost-tabular")
	dir = filepath.Join(root, "examples", "xgboost-tabular")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	dagFile := filepath.Join(dir, "dag.json")
	b, err := os.ReadFile(dagFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dagFile, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

// restVerdicts drives a run over REST with the content the CLI sends and
// returns one "stage: status" line per gate, as the CLI prints them.
func restVerdicts(t *testing.T, base, workflow string, args map[string]string, content map[string]any) []string {
	t.Helper()
	post := func(tool string, in map[string]any) map[string]any {
		body, _ := json.Marshal(in)
		resp, err := http.Post(base+"/call/"+tool, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env struct {
			OK   bool           `json:"ok"`
			Data map[string]any `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || !env.OK {
			t.Fatalf("%s: %v %v", tool, err, env)
		}
		return env.Data
	}
	var lines []string
	start := map[string]any{"workflow": workflow}
	if args != nil {
		start["args"] = args
	}
	data := post("workflow.start", start)
	for {
		if data["status"] != "started" {
			lines = append(lines, fmt.Sprintf("%s: %s", data["stage"], data["status"]))
		}
		if data["status"] != "started" && data["status"] != "passed" {
			return lines
		}
		next := data["next"].(map[string]any)
		sent := map[string]any{}
		for _, f := range next["takes"].([]any) {
			if v, ok := content[f.(string)]; ok {
				sent[f.(string)] = v
			}
		}
		data = post("workflow.submit", map[string]any{"run": data["run"], "stage": next["name"], "content": sent})
	}
}

func verdictLines(stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasSuffix(l, ": passed") || strings.HasSuffix(l, ": green") || strings.HasSuffix(l, ": failed") || strings.HasSuffix(l, ": blocked") {
			out = append(out, l)
		}
	}
	return out
}

// TestWorkflowRunGivesTheServersVerdicts runs a workflow over a good and
// a broken project with the CLI and over REST on a served instance: the
// gates' verdicts agree, the CLI exits 0 only when green, and it names
// the failing gate.
func TestWorkflowRunGivesTheServersVerdicts(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(string) string
		wantCode int
		failing  string
	}{
		{"good", func(s string) string { return s }, 0, ""},
		{"typo", func(s string) string { return strings.ReplaceAll(s, `"XGBoostTraining"`, `"XGBoostTrainng"`) }, 1, "Constrain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := copyExample(t, tc.edit)
			stdout, stderr, code := runCLI(t, nil, "workflow", "run", "cursus-configure-pipeline", "--input", dir, "--workspace-root", root)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout, stderr)
			}
			if tc.failing != "" && !strings.Contains(stderr, "gate "+tc.failing+" did not pass") {
				t.Fatalf("stderr does not name gate %s: %s", tc.failing, stderr)
			}
			content, err := readProject(context.Background(), dir, root)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var serveErr lockedBuffer
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workspace-root", t.TempDir()}, strings.NewReader(""), &bytes.Buffer{}, &serveErr, []string{"CURSUS_LISTEN_DRAIN_DELAY=0s"})
			}()
			addr := waitForListening(t, &serveErr, done)
			served := restVerdicts(t, "http://"+addr, "cursus-configure-pipeline", nil, content)
			if cli := verdictLines(stdout); strings.Join(cli, "\n") != strings.Join(served, "\n") || len(cli) == 0 {
				t.Fatalf("CLI verdicts %q, server verdicts %q", cli, served)
			}
			if !strings.Contains(serveErr.String(), "development key") {
				t.Errorf("serve without workflow.key did not warn: %s", serveErr.String())
			}
			cancel()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("serve did not stop")
			}
		})
	}
}

// A cancelled run stops reading the project instead of walking all of it.
func TestReadProjectStopsWhenCancelled(t *testing.T) {
	root, dir := copyExample(t, func(s string) string { return s })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readProject(ctx, dir, root); !errors.Is(err, context.Canceled) {
		t.Fatalf("readProject after cancel = %v, want context.Canceled", err)
	}
}

// A gate that fails on a config with several invalid values prints each
// of them (node.field, message, kind) and the remedy, not only their
// number; so does a refused call (its code, each problem and its remedy).
func TestWorkflowRunPrintsEachFinding(t *testing.T) {
	root, dir := copyExample(t, func(s string) string { return s })
	cfgFile := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	shared := cfg["configuration"].(map[string]any)["shared"].(map[string]any)
	delete(shared, "bucket")
	delete(shared, "role")
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var dag struct {
		DAG struct {
			Nodes []string `json:"nodes"`
		} `json:"dag"`
	}
	if b, err = os.ReadFile(filepath.Join(dir, "dag.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dag); err != nil || len(dag.DAG.Nodes) < 2 {
		t.Fatalf("dag.json: %v %v", err, dag.DAG.Nodes)
	}

	stdout, stderr, code := runCLI(t, nil, "workflow", "run", "cursus-configure-pipeline", "--input", dir, "--workspace-root", root)
	if code != 1 || !strings.Contains(stderr, "gate Validate did not pass") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, n := range dag.DAG.Nodes {
		for _, field := range []string{"bucket", "role"} {
			want := "  - " + n + "." + field + ": "
			line := ""
			for _, l := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(l, want) {
					line = l
				}
			}
			if line == "" || !strings.HasSuffix(line, "[missing]") {
				t.Errorf("no finding line %q…[missing] in stdout:\n%s", want, stdout)
			}
		}
	}
	if !strings.Contains(stdout, "  remedy: ") || !strings.Contains(stdout, "config.field_info") {
		t.Errorf("stdout has no remedy naming config.field_info:\n%s", stdout)
	}

	stdout, stderr, code = runCLI(t, nil, "workflow", "run", "no-such-workflow", "--input", dir, "--workspace-root", root)
	if code != 1 || !strings.Contains(stderr, "invalid_input: ") || !strings.Contains(stderr, "  remedy: ") || !strings.Contains(stderr, "workflow.list") {
		t.Errorf("refused start: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}
