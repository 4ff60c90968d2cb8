package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHTTPMethodLabelIsBounded: requests with made-up methods share the
// OTHER label value instead of adding series; standard methods keep theirs.
func TestHTTPMethodLabelIsBounded(t *testing.T) {
	o := newOpsEnv(t, nil)
	const made = 20
	for i := range made {
		o.do(t, fmt.Sprintf("RANDOM%d", i), "/healthz", "", nil)
	}
	o.do(t, http.MethodGet, "/healthz", "", nil)
	_, body := o.do(t, http.MethodGet, "/metrics", "", nil)
	var methods []string
	others := ""
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "cursus_http_requests_total{") {
			continue
		}
		if strings.Contains(line, "RANDOM") {
			t.Errorf("a client-chosen method is a label value: %s", line)
		}
		_, rest, _ := strings.Cut(line, `method="`)
		method, _, _ := strings.Cut(rest, `"`)
		methods = append(methods, method)
		if method == otherMethod && strings.Contains(line, `status="405"`) {
			others = line[strings.LastIndex(line, " ")+1:]
		}
	}
	if others != fmt.Sprint(made) {
		t.Errorf("OTHER requests = %q, want %d (series: %v)", others, made, methods)
	}
	if !strings.Contains(string(body), `cursus_http_requests_total{method="GET",route="/healthz",status="200"} 1`) {
		t.Errorf("the GET request is not counted under its method: %v", methods)
	}
}
