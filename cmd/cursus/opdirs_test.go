package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// opdirEnvelope is a REST answer as a client reads it.
type opdirEnvelope struct {
	OK       bool           `json:"ok"`
	Data     map[string]any `json:"data"`
	Error    string         `json:"error"`
	Warnings []string       `json:"warnings"`
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// badFiles puts in dir a named pipe, a symlink to /dev/zero and a symlink
// to the file outside, each named name with its prefix.
func badFiles(t *testing.T, dir, prefix, suffix, outside string) {
	t.Helper()
	if err := syscall.Mkfifo(filepath.Join(dir, prefix+"pipe"+suffix), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, prefix+"zero"+suffix)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, prefix+"outside"+suffix)); err != nil {
		t.Fatal(err)
	}
}

// TestServeSkipsBadFilesInOperatorDirectories starts the real binary with
// a step directory and a pipeline directory that each hold a named pipe, a
// symlink to /dev/zero and a symlink to a file outside. The server listens
// (each bad file is logged and skipped), serves the good files and not the
// outside ones, reloads the step directory when more bad files and a good
// one appear, answering the call that triggers the reload in time, and
// stops on SIGTERM. It runs under a 4 GiB address-space limit, so a server
// that reads /dev/zero dies instead of taking the machine's memory.
func TestServeSkipsBadFilesInOperatorDirectories(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	ws, stepDir, pipeDir := filepath.Join(base, "ws"), filepath.Join(base, "steps"), filepath.Join(base, "dags")
	for _, d := range []string{ws, stepDir, pipeDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	builtin := "../../engine/steps/catalog/"
	copyFile(t, builtin+"batch_transform.step.yaml", filepath.Join(stepDir, "batch_transform.step.yaml"))
	copyFile(t, builtin+"currency_conversion.step.yaml", filepath.Join(outside, "currency_conversion.step.yaml"))
	badFiles(t, stepDir, "", ".step.yaml", filepath.Join(outside, "currency_conversion.step.yaml"))
	dag := func(id string) string {
		return `{"nodes": ["a", "b"], "edges": [["a", "b"]], "metadata": {"id": "` + id + `"}}`
	}
	if err := os.MkdirAll(filepath.Join(pipeDir, "custom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pipeDir, "custom", "good.dag.json"), []byte(dag("good_dag")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.dag.json"), []byte(dag("outside_dag")), 0o644); err != nil {
		t.Fatal(err)
	}
	badFiles(t, filepath.Join(pipeDir, "custom"), "", ".dag.json", filepath.Join(outside, "secret.dag.json"))

	cmd := exec.Command("/bin/sh", "-c", `ulimit -v 4194304 && exec "$0" "$@"`, binary, "serve", "--addr", "127.0.0.1:0",
		"--workspace-root", ws, "--step-dir", stepDir, "--pipeline-dir", pipeDir)
	cmd.Env = append(os.Environ(), "CURSUS_WORKSPACE_STEP_RELOAD_INTERVAL=1ms", "CURSUS_LIMITS_TOOL_TIMEOUT=30s")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	addr := listeningWithin(t, &stderr, done, 30*time.Second)

	client := &http.Client{Timeout: 60 * time.Second}
	callTool := func(tool string) opdirEnvelope {
		t.Helper()
		resp, err := client.Post("http://"+addr+"/call/"+tool, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		defer resp.Body.Close()
		var env opdirEnvelope
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || !env.OK {
			t.Fatalf("%s: %v %+v", tool, err, env)
		}
		return env
	}
	stepStatus := func() (count float64, problems map[string]string) {
		t.Helper()
		dirs := callTool("catalog.list_steps").Data["step_dirs"].([]any)
		status := dirs[0].(map[string]any)
		problems = map[string]string{}
		for _, p := range status["problems"].([]any) {
			pm := p.(map[string]any)
			problems[filepath.Base(pm["file"].(string))] = pm["rule"].(string)
		}
		return status["step_count"].(float64), problems
	}

	count, problems := stepStatus()
	want := map[string]string{"pipe.step.yaml": "not_regular", "zero.step.yaml": "outside", "outside.step.yaml": "outside"}
	if count != 1 || fmt.Sprint(problems) != fmt.Sprint(want) {
		t.Fatalf("step directory at start-up: %v step types, problems %v; want 1 and %v", count, problems, want)
	}
	pcs := callTool("pipeline_catalog.list")
	listed := fmt.Sprint(pcs.Data["dags"])
	if !strings.Contains(listed, "good_dag") || strings.Contains(listed, "outside_dag") {
		t.Fatalf("pipeline catalog lists %s", listed)
	}
	for _, f := range []string{"pipe.dag.json", "zero.dag.json", "outside.dag.json"} {
		if !strings.Contains(strings.Join(pcs.Warnings, "\n"), filepath.Join(pipeDir, "custom", f)) {
			t.Errorf("pipeline_catalog.list warnings do not name %s: %v", f, pcs.Warnings)
		}
		if !strings.Contains(stderr.String(), filepath.Join(pipeDir, "custom", f)) {
			t.Errorf("the start-up log does not name %s", f)
		}
	}
	for f := range want {
		if !strings.Contains(stderr.String(), filepath.Join(stepDir, f)) {
			t.Errorf("the start-up log does not name %s", f)
		}
	}

	// Reload: more bad files and a good one; the call that triggers the
	// reload answers, and a later change is seen too.
	badFiles(t, stepDir, "new_", ".step.yaml", filepath.Join(outside, "currency_conversion.step.yaml"))
	copyFile(t, builtin+"dummy_training.step.yaml", filepath.Join(stepDir, "dummy_training.step.yaml"))
	if count, problems := stepStatus(); count != 2 || len(problems) != 6 {
		t.Fatalf("after the reload: %v step types, problems %v; want 2 and 6 problems", count, problems)
	}
	copyFile(t, builtin+"dummy_data_loading.step.yaml", filepath.Join(stepDir, "dummy_data_loading.step.yaml"))
	if count, _ := stepStatus(); count != 3 {
		t.Fatalf("a later reload did not pick up a new file: %v step types", count)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		done <- code
		if code != 0 {
			t.Fatalf("serve exited %d after SIGTERM: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20s of SIGTERM")
	}
}

// listeningWithin is the address serve logged it listens on, waiting at
// most limit.
func listeningWithin(t *testing.T, stderr *lockedBuffer, done chan int, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "listening" {
				return m["addr"].(string)
			}
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not listen within %v: %s", limit, stderr.String())
	return ""
}
