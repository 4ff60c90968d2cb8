package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleCompilesFromTheCLI is issue 6 acceptance 1 from the command
// line: the built binary compiles examples/xgboost-tabular with compile.dag
// and compile.with_report, as the example's README shows, into a definition
// with one step per DAG node, and prints a progress line per step on stderr.
func TestExampleCompilesFromTheCLI(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dagData, err := os.ReadFile(filepath.Join(repo, "examples/xgboost-tabular/dag.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dagDoc struct {
		DAG struct {
			Nodes []string `json:"nodes"`
		} `json:"dag"`
	}
	if err := json.Unmarshal(dagData, &dagDoc); err != nil || len(dagDoc.DAG.Nodes) == 0 {
		t.Fatalf("example dag.json: %v", err)
	}
	nodes := dagDoc.DAG.Nodes
	args := `{"dag_file":"examples/xgboost-tabular/dag.json","config_file":"examples/xgboost-tabular/config.json"}`

	for _, tool := range []string{"compile.dag", "compile.with_report"} {
		t.Run(tool, func(t *testing.T) {
			cmd := exec.Command(binary, "call", "--workspace-root", repo, tool, args)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", ee.ExitCode(), stdout.String(), stderr.String())
			}
			var env struct {
				OK   bool `json:"ok"`
				Data struct {
					Definition struct {
						Version string `json:"Version"`
						Steps   []struct {
							Name string `json:"Name"`
							Type string `json:"Type"`
						} `json:"Steps"`
					} `json:"definition"`
				} `json:"data"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
				t.Fatalf("stdout is not one JSON envelope: %v\n%s", err, stdout.String())
			}
			if !env.OK {
				t.Fatalf("not ok: %s", stdout.String())
			}
			def := env.Data.Definition
			if def.Version != "2020-12-01" {
				t.Errorf("definition Version = %q", def.Version)
			}
			if len(def.Steps) != len(nodes) {
				t.Fatalf("definition has %d steps for %d DAG nodes: %+v", len(def.Steps), len(nodes), def.Steps)
			}
			seen := map[string]bool{}
			for _, s := range def.Steps {
				if s.Name == "" || s.Type == "" || seen[s.Name] {
					t.Errorf("step %+v: empty or duplicate", s)
				}
				seen[s.Name] = true
			}
			// One stderr progress line per built step.
			var progress int
			for _, line := range strings.Split(stderr.String(), "\n") {
				if strings.HasPrefix(line, "progress: ") && strings.Contains(line, " built ") {
					progress++
				}
			}
			if progress != len(nodes) {
				t.Errorf("%d progress lines for %d steps; stderr:\n%s", progress, len(nodes), stderr.String())
			}
		})
	}
}
