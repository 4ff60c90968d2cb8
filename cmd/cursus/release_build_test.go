package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseBuildDropsUnusedMethods: the binary scripts/build.sh makes
// reaches no function that looks a method up by a name known only at run
// time (reflect's MethodByName, as text/template and html/template execute
// one). One such function makes the linker keep every exported method of
// every type that is converted to an interface, which made the binary
// 43 MB instead of 27 and its idle resident memory as much larger. The
// linker's -dumpdep lists what it keeps and why; a <ReflectMethod> mark in
// it names the function to blame.
func TestReleaseBuildDropsUnusedMethods(t *testing.T) {
	cmd := exec.Command("../../scripts/build.sh", filepath.Join(t.TempDir(), "cursus"))
	cmd.Env = append(os.Environ(), "EXTRA_LDFLAGS=-dumpdep")
	deps, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var blamed []string
	lines := 0
	scan := bufio.NewScanner(deps)
	scan.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scan.Scan() {
		lines++
		if line := scan.Text(); strings.Contains(line, "<ReflectMethod>") && len(blamed) < 10 {
			blamed = append(blamed, line)
		}
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("scripts/build.sh: %v", err)
	}
	if lines < 1000 {
		t.Fatalf("the linker listed %d dependencies: -dumpdep did not reach it", lines)
	}
	if len(blamed) > 0 {
		t.Errorf("the release build reaches a run-time method lookup, so the linker keeps every exported method:\n%s\n"+
			"(what reaches a template's Execute: EXTRA_LDFLAGS=-dumpdep scripts/build.sh /tmp/c 2>&1 | grep -- '-> .*template.(\\*Template).Execute')",
			strings.Join(blamed, "\n"))
	}
}
