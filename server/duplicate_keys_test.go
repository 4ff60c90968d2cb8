package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/registry"
)

type dupOptions struct {
	Mode  string `json:"mode,omitempty" schema:"enum=safe|careful"`
	Label string `json:"label,omitempty"`
}

type dupIn struct {
	Options *dupOptions `json:"options,omitempty"`
}

// A REST body that gives a key twice, each time with an object, reaches
// the tool as what was validated: the last object alone. encoding/json
// decoding the body straight into the tool's struct would merge the two,
// and a value the schema never saw ("mode": "rm -rf") would get through.
func TestDuplicateKeysBindOnlyWhatWasValidated(t *testing.T) {
	var got dupIn
	ns := func() (registry.Namespace, error) {
		return registry.Namespace{Name: "dup", Description: "Duplicate-key tests.", Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name: "dup.echo", Description: "Records its input.", When: "In duplicate-key tests.",
				Examples: []string{`dup.echo {"options": {"mode": "safe"}}  # records it`},
			}, func(_ context.Context, in dupIn) (map[string]any, error) { got = in; return map[string]any{}, nil }),
		}}, nil
	}
	cfg := DefaultConfig()
	cfg.Workspace.Root = t.TempDir()
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout, Observer: CallObserver()}, ns)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewServer(Deps{Config: cfg, Registry: reg, Logger: zerolog.New(io.Discard)}))
	defer ts.Close()
	call := func(body string) (int, map[string]any) {
		t.Helper()
		got = dupIn{}
		resp, err := http.Post(ts.URL+"/call/dup.echo", "application/json", strings.NewReader(body))
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
	if status, env := call(`{"options": {"mode": "rm -rf"}}`); status != http.StatusBadRequest {
		t.Fatalf("mode outside the enum: %d %v, want 400 (else this test proves nothing)", status, env)
	}
	status, env := call(`{"options": {"mode": "rm -rf"}, "options": {"label": "x"}}`)
	if status != http.StatusOK {
		t.Fatalf("duplicate key: %d %v", status, env)
	}
	if got.Options == nil || got.Options.Mode != "" || got.Options.Label != "x" {
		t.Fatalf("the tool got %+v, want only the last object {label: x}", got.Options)
	}
}
