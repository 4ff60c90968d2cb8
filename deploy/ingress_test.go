package deploy

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// opsPaths answer without a token even with auth on.
var opsPaths = []string{"/metrics", "/healthz", "/readyz", "/openapi.yaml"}

// clientPaths are what MCP and REST clients (and their OAuth discovery)
// request.
var clientPaths = []string{
	"/mcp", "/mcp/x/catalog", "/sse", "/message", "/tools", "/call/tools.help", "/call/tools__help",
	"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/register",
}

// ingressRoutes reports whether an Ingress path rule sends path to the
// backend, as the Ingress API defines Exact and Prefix matching.
func ingressRoutes(ing *networkingv1.Ingress, path string) bool {
	for _, rule := range ing.Spec.Rules {
		for _, p := range rule.HTTP.Paths {
			switch *p.PathType {
			case networkingv1.PathTypeExact:
				if path == p.Path {
					return true
				}
			case networkingv1.PathTypePrefix:
				prefix := strings.TrimSuffix(p.Path, "/")
				if prefix == "" || path == prefix || strings.HasPrefix(path, prefix+"/") {
					return true
				}
			}
		}
	}
	return false
}

func renderIngress(t *testing.T, sets ...string) *networkingv1.Ingress {
	t.Helper()
	out, err := renderChart(t, nil, append([]string{"ingress.enabled=true"}, sets...)...)
	if err != nil {
		t.Fatal(err)
	}
	ing, ok := decodeStrict(t, out).objects["Ingress"].(*networkingv1.Ingress)
	if !ok {
		t.Fatal("no Ingress rendered")
	}
	return ing
}

// TestIngressKeepsOperationalEndpointsInside: by default the Ingress
// routes every client path and none of /metrics, /healthz, /readyz and
// /openapi.yaml; ingress.exposeOperationalEndpoints routes everything.
func TestIngressKeepsOperationalEndpointsInside(t *testing.T) {
	ing := renderIngress(t)
	for _, p := range clientPaths {
		if !ingressRoutes(ing, p) {
			t.Errorf("default Ingress does not route the client path %s", p)
		}
	}
	for _, p := range opsPaths {
		if ingressRoutes(ing, p) {
			t.Errorf("default Ingress routes the operational endpoint %s to the internet", p)
		}
	}

	ing = renderIngress(t, "ingress.path=/cursus")
	if !ingressRoutes(ing, "/cursus/mcp") || ingressRoutes(ing, "/cursus/metrics") || ingressRoutes(ing, "/mcp") {
		t.Errorf("ingress.path=/cursus: paths %v", ing.Spec.Rules[0].HTTP.Paths)
	}

	ing = renderIngress(t, "ingress.exposeOperationalEndpoints=true")
	for _, p := range append(append([]string{}, clientPaths...), opsPaths...) {
		if !ingressRoutes(ing, p) {
			t.Errorf("exposeOperationalEndpoints: %s is not routed", p)
		}
	}
}
