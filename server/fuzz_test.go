package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// fuzzServer is the default server (real tools, default gates) on an empty
// temporary workspace, without the test-only tools.
func fuzzServer(f *testing.F) http.Handler {
	f.Helper()
	cfg, err := LoadConfig("", func(string) (string, bool) { return "", false })
	if err != nil {
		f.Fatal(err)
	}
	cfg.Workspace.Root = f.TempDir()
	// The per-caller rate limit would turn most fuzz inputs into 429s.
	cfg.Limits.RatePerMinute = 0
	deps, err := handlers.NewDeps(handlers.Options{WorkspaceRoot: cfg.Workspace.Root})
	if err != nil {
		f.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout}, handlers.Namespaces(deps)...)
	if err != nil {
		f.Fatal(err)
	}
	return NewServer(Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: zerolog.New(io.Discard)})
}

// FuzzRESTCall posts arbitrary bodies to /call/<tool> on the real router.
// Whatever the input, the answer is a JSON envelope whose ok agrees with
// the status, with a status the REST mapping can produce, and never a 500.
//
//	go test -run=^$ -fuzz=FuzzRESTCall -fuzztime=10m ./server
func FuzzRESTCall(f *testing.F) {
	h := fuzzServer(f)
	for _, seed := range []struct{ tool, body string }{
		{"tools__help", `{}`},
		{"tools__help", `{"include_schema":true,"phase":"planner"}`},
		{"tools__by_phase", `{"phase":7}`},
		{"tools__describe_tool", `{"name":"tools.help"}`},
		{"tools__describe_tool", `{"name":"x","bogus":true}`},
		{"config__field_info", `{"step_type":"XGBoostTraining"}`},
		{"config__load", `{"config_file":"../../etc/passwd"}`},
		{"config__merge_save", `{}`},
		{"dag__help", `{}`},
		{"tools.help", ``},
		{"nope", `{}`},
		{"tools__help", `[1,2]`},
		{"tools__help", `{"a":1}{"b":2}`},
		{"tools__help", `{"phase":"\u0000"}`},
		{"tools__help", "\xff\xfe"},
	} {
		f.Add(seed.tool, []byte(seed.body))
	}
	allowed := map[int]bool{200: true, 400: true, 403: true, 404: true, 405: true, 413: true, 422: true, 504: true}
	f.Fuzz(func(t *testing.T, tool string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/call/"+url.PathEscape(tool), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !allowed[rec.Code] {
			t.Fatalf("tool %q body %q: status %d: %s", tool, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code == http.StatusMethodNotAllowed {
			return // chi's own answer for a path that is not /call/{tool}
		}
		var env struct {
			OK   *bool  `json:"ok"`
			Code string `json:"code"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.OK == nil {
			t.Fatalf("tool %q body %q: status %d, body is not an envelope: %v: %s", tool, body, rec.Code, err, rec.Body.Bytes())
		}
		if *env.OK != (rec.Code == http.StatusOK) {
			t.Fatalf("tool %q body %q: ok=%v with status %d", tool, body, *env.OK, rec.Code)
		}
		if env.Code == registry.CodeInternal {
			t.Fatalf("tool %q body %q: internal_error: %s", tool, body, rec.Body.Bytes())
		}
	})
}
