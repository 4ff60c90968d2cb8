package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

type dupOptions struct {
	Mode  string `json:"mode,omitempty" schema:"enum=safe|careful"`
	Label string `json:"label,omitempty"`
}

type dupIn struct {
	Options *dupOptions `json:"options,omitempty"`
}

// A key given twice is refused on REST, at the top level and inside an
// object. encoding/json would take the body all the same: decoding it into
// a map keeps the last value, and decoding it into the tool's struct
// merges the objects, so a value the schema never saw ("mode": "rm -rf")
// would reach the tool.
func TestDuplicateKeysAreRefused(t *testing.T) {
	var got dupIn
	ran := false
	ns := func() (registry.Namespace, error) {
		return registry.Namespace{Name: "dup", Description: "Duplicate-key tests.", Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name: "dup.echo", Description: "Records its input.", When: "In duplicate-key tests.",
				Examples: []string{`dup.echo {"options": {"mode": "safe"}}  # records it`},
			}, registry.Plain(func(_ context.Context, in dupIn) (map[string]any, error) {
				got, ran = in, true
				return map[string]any{}, nil
			})),
		}}, nil
	}
	server := newTestEnv(t, nil, ns)
	call := func(body string) (int, map[string]any) {
		t.Helper()
		got, ran = dupIn{}, false
		resp, err := http.Post(server.ts.URL+"/call/dup.echo", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, env
	}
	// The controls: the enum refuses the bad mode, and a clean body runs
	// the tool with exactly what it says.
	if status, env := call(`{"options": {"mode": "rm -rf"}}`); status != http.StatusBadRequest || ran {
		t.Fatalf("mode outside the enum: %d %v (ran: %v), want 400", status, env, ran)
	}
	if status, env := call(`{"options": {"mode": "safe", "label": "x"}}`); status != http.StatusOK || got.Options == nil || *got.Options != (dupOptions{Mode: "safe", Label: "x"}) {
		t.Fatalf("clean body: %d %v, the tool got %+v", status, env, got.Options)
	}
	for body, key := range map[string]string{
		`{"options": {"mode": "rm -rf"}, "options": {"label": "x"}}`: `"options"`,
		`{"options": {"mode": "safe", "mode": "rm -rf"}}`:            `"mode" within "/options"`,
	} {
		status, env := call(body)
		msg, _ := env["error"].(string)
		if status != http.StatusBadRequest || env["code"] != registry.CodeInvalidInput || !strings.Contains(msg, "duplicate object member name "+key) {
			t.Errorf("%s: %d %v, want 400 invalid_input naming %s", body, status, env, key)
		}
		if ran {
			t.Errorf("%s: the tool ran with %+v", body, got.Options)
		}
	}
}
