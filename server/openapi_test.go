package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"

	"github.com/cursus-dev/cursus"
)

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(cursus.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is invalid: %v", err)
	}
	return doc
}

// TestEveryRouteIsDescribed walks the chi router: every route and, for
// method-specific routes, every method must be in openapi.yaml.
func TestEveryRouteIsDescribed(t *testing.T) {
	doc := loadOpenAPI(t)
	// Walk a default server, one with static tokens, which mounts the
	// registration refusal, and one with an OIDC issuer, which mounts the
	// protected-resource metadata routes.
	for _, vars := range []map[string]string{nil, {"CURSUS_AUTH_TOKENS_FILE": writeTokens(t)},
		{"CURSUS_AUTH_OIDC_ISSUER": "https://issuer.example", "CURSUS_AUTH_OIDC_AUDIENCE": "cursus-api"}} {
		env := newTestEnv(t, vars)
		methods := map[string][]string{}
		err := chi.Walk(env.srv.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			methods[route] = append(methods[route], method)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(methods) < 8 {
			t.Fatalf("walked only %d routes: %v", len(methods), methods)
		}
		for route, ms := range methods {
			item := doc.Paths.Find(route)
			if item == nil {
				t.Errorf("route %s is not in openapi.yaml", route)
				continue
			}
			if len(ms) > 4 { // r.Handle: every method goes to the handler (MCP transports)
				continue
			}
			for _, m := range ms {
				if item.GetOperation(m) == nil {
					t.Errorf("%s %s is not in openapi.yaml", m, route)
				}
			}
		}
	}
}

// TestRESTResponsesMatchOpenAPI validates real responses of the REST
// routes against the document.
func TestRESTResponsesMatchOpenAPI(t *testing.T) {
	doc := loadOpenAPI(t)
	env := newTestEnv(t, nil)
	doc.Servers = openapi3.Servers{{URL: env.ts.URL}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/call/tools__help", `{}`, 200},
		{"POST", "/call/tools.by_phase", `{"phase":"bad"}`, 400},
		{"POST", "/call/no__such", ``, 404},
		{"POST", "/call/testonly__write", `{}`, 403},
		{"POST", "/call/testonly__panic", `{}`, 500},
		{"POST", "/call/tools__help", `{"namespace":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
		{"GET", "/tools", ``, 200},
		{"GET", "/tools?format=mcp", ``, 200},
		{"GET", "/tools?format=bad", ``, 400},
		{"GET", "/tools?detail=full&format=mcp", ``, 200},
		{"GET", "/tools?detail=bad", ``, 400},
		{"GET", "/healthz", ``, 200},
		{"GET", "/readyz", ``, 200},
		{"GET", "/openapi.yaml", ``, 200},
	} {
		req, _ := http.NewRequest(tc.method, env.ts.URL+tc.path, strings.NewReader(tc.body))
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s = %d, want %d: %.200s", tc.method, tc.path, resp.StatusCode, tc.status, body)
			continue
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s %s: %v", tc.method, tc.path, err)
			continue
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{ExcludeRequestBody: true}}
		err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true},
		})
		if err != nil {
			t.Errorf("%s %s → %d does not match openapi.yaml: %v", tc.method, tc.path, resp.StatusCode, err)
		}
	}
}
