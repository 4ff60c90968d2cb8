package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/registry"
)

// serverFile matches guidance that assumes files on the server: the
// example project's paths, a project's pipeline_config files and path
// placeholders an agent cannot fill on an empty workspace.
var serverFile = regexp.MustCompile(`examples/xgboost-tabular/|pipeline_config/(dag|config)|<dir>/`)

// workspaceReaders are the tools whose only input is a workspace path:
// their examples read a file by design.
var workspaceReaders = map[string]bool{"dag.deserialize": true}

// TestEveryExampleWorksOnAnEmptyWorkspace replays every tool example over
// REST as a remote caller of the default (read-only) deployment with an
// empty workspace: none fails for want of a server file, no example of a
// tool open to that caller names one, and no answer (next steps and their
// args hints, remedies, data) points at one.
func TestEveryExampleWorksOnAnEmptyWorkspace(t *testing.T) {
	ts, reg, _ := surfaceEnv(t, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "0"})
	remote := registry.Caller{Remote: true}
	client := &http.Client{Timeout: 60 * time.Second}
	replayed := 0
	for _, tool := range reg.Tools("") {
		for _, ex := range tool.Examples {
			args := exampleArgs(ex)
			if strings.Contains(args, `"<token>"`) {
				continue // a run token is made by the server
			}
			replayed++
			_, env := postAs(t, client, ts.URL, tool.Name, args)
			msg, _ := env["error"].(string)
			missing := env["code"] == registry.CodeNotFound || strings.Contains(msg, "does not exist")
			if missing && !workspaceReaders[tool.Name] {
				t.Errorf("%s %.200s needs a server file: %s %s", tool.Name, args, env["code"], msg)
			}
			if m := serverFile.FindString(args); m != "" && !workspaceReaders[tool.Name] && reg.Admit(remote, tool).Allowed {
				t.Errorf("%s: example names the server file %q: %.200s", tool.Name, m, args)
			}
			b, _ := json.Marshal(map[string]any{"next_steps": env["next_steps"], "remedy": env["remedy"], "data": env["data"]})
			if m := serverFile.FindString(withoutContent(string(b), env["data"])); m != "" {
				t.Errorf("%s %.200s: the answer points at the server file %q", tool.Name, args, m)
			}
		}
	}
	if replayed < 60 {
		t.Fatalf("only %d examples replayed", replayed)
	}
}

// withoutContent takes out of answer the files data returns as content
// (project.init without target_dir: the project's files, path → text),
// their text and every mention of their paths: those are in the caller's
// hands, not on the server, and a hint may name one it sends back in files.
func withoutContent(answer string, data any) string {
	m, _ := data.(map[string]any)
	files, _ := m["files"].(map[string]any)
	var cut []string
	for p, text := range files {
		if s, ok := text.(string); ok {
			b, _ := json.Marshal(s)
			cut = append(cut, string(b[1:len(b)-1]))
		}
		cut = append(cut, p)
	}
	// Longest first: a short text or path taken out first could split a
	// longer one that contains it and leave a fragment that reads as a
	// server path (map order made that happen now and then).
	slices.SortFunc(cut, func(a, b string) int { return len(b) - len(a) })
	for _, c := range cut {
		if c != "" {
			answer = strings.ReplaceAll(answer, c, "")
		}
	}
	return answer
}
