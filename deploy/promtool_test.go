package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promtoolBinary finds promtool (from Debian's prometheus package;
// scripts/test.sh unpacks it with scripts/install-promtool.sh where
// apt-get can, without installing the package's service).
func promtoolBinary(t *testing.T) string {
	t.Helper()
	return needTool(t, "promtool", "PROMTOOL", `PATH="$(dirname "$(scripts/install-promtool.sh)"):$PATH"`)
}

func runPromtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtoolBinary(t), args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAlertRulesWithPromtool checks rules.yaml and runs its unit tests
// (deploy/prometheus/rules_test.yaml): each alert fires on the series it
// is for, with its labels and annotations, and stays quiet on the others.
func TestAlertRulesWithPromtool(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "deploy", "prometheus")
	runPromtool(t, dir, "check", "rules", "rules.yaml")
	runPromtool(t, dir, "test", "rules", "rules_test.yaml")
}

// TestErrorRatioPanelWithPromtool evaluates the dashboard's "Server error
// ratio" query, its variables set to All: 0 (not "No data") on a healthy
// server and on an idle one, the server-side share of calls otherwise.
func TestErrorRatioPanelWithPromtool(t *testing.T) {
	var expr string
	for where, e := range dashboardExprs(t, readRepoFile(t, "deploy/grafana/cursus-mcp-dashboard.json")) {
		if strings.HasPrefix(where, `panel "Server error ratio"`) {
			expr = e
		}
	}
	if expr == "" {
		t.Fatal(`no "Server error ratio" panel`)
	}
	expr = strings.NewReplacer("$job", ".*", "$tool", ".*", "$transport", ".*", "$__rate_interval", "5m").Replace(expr)
	quoted := strings.ReplaceAll(expr, "'", "''")
	cases := `rule_files: []
evaluation_interval: 1m
tests:
  # Healthy: only ok and a client's invalid_input.
  - interval: 1m
    input_series:
      - series: 'cursus_tool_calls_total{job="cursus",tool="tools.help",transport="mcp",code="ok"}'
        values: '0+60x20'
      - series: 'cursus_tool_calls_total{job="cursus",tool="dag.compile",transport="rest",code="invalid_input"}'
        values: '0+6x20'
    promql_expr_test:
      - expr: '` + quoted + `'
        eval_time: 15m
        exp_samples:
          - labels: '{}'
            value: 0
  # Idle: the counters exist but nothing was called lately.
  - interval: 1m
    input_series:
      - series: 'cursus_tool_calls_total{job="cursus",tool="tools.help",transport="mcp",code="ok"}'
        values: '5x20'
    promql_expr_test:
      - expr: '` + quoted + `'
        eval_time: 15m
        exp_samples:
          - labels: '{}'
            value: 0
  # One call in ten fails on the server side (timeout or internal_error).
  - interval: 1m
    input_series:
      - series: 'cursus_tool_calls_total{job="cursus",tool="tools.help",transport="mcp",code="ok"}'
        values: '0+54x20'
      - series: 'cursus_tool_calls_total{job="cursus",tool="dag.compile",transport="mcp",code="timeout"}'
        values: '0+3x20'
      - series: 'cursus_tool_calls_total{job="cursus",tool="dag.compile",transport="rest",code="internal_error"}'
        values: '0+3x20'
    promql_expr_test:
      - expr: '` + quoted + `'
        eval_time: 15m
        exp_samples:
          - labels: '{}'
            value: 0.1
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "panel_test.yaml"), []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, dir, "test", "rules", "panel_test.yaml")
}

// TestPodsPanelWithPromtool evaluates the dashboard's "Pods" panel on
// three pods of one job scraped through a ServiceMonitor (pod, namespace
// and endpoint labels besides instance): one row per pod with its version,
// catalog digest and workflow key id, so the pod whose catalogs drifted
// shows its own digest; a pod of another job is left out.
func TestPodsPanelWithPromtool(t *testing.T) {
	var expr string
	for where, e := range dashboardExprs(t, readRepoFile(t, "deploy/grafana/cursus-mcp-dashboard.json")) {
		if strings.HasPrefix(where, `panel "Pods"`) {
			expr = e
		}
	}
	if expr == "" {
		t.Fatal(`no "Pods" panel`)
	}
	expr = strings.ReplaceAll(expr, "$job", "cursus")
	quoted := strings.ReplaceAll(expr, "'", "''")
	series := func(pod, digest, key string) string {
		return `      - series: 'cursus_build_info{job="cursus",namespace="ml",endpoint="http",pod="` + pod + `",instance="10.0.0.` + pod[len(pod)-1:] +
			`:8080",version="1.4.0",goversion="go1.26",catalog_digest="` + digest + `",workflow_key_id="` + key + `"}'
        values: '1x10'
`
	}
	row := func(pod, digest, key string) string {
		return `          - labels: '{instance="10.0.0.` + pod[len(pod)-1:] + `:8080",version="1.4.0",catalog_digest="` + digest + `",workflow_key_id="` + key + `"}'
            value: 1
`
	}
	cases := `rule_files: []
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
` + series("cursus-a1", "aaaa", "k1") + series("cursus-a2", "aaaa", "k1") + series("cursus-a3", "bbbb", "k1") +
		`      - series: 'cursus_build_info{job="other",instance="10.0.9.9:8080",version="0.1.0",goversion="go1.26",catalog_digest="zzzz",workflow_key_id="k9"}'
        values: '1x10'
    promql_expr_test:
      - expr: '` + quoted + `'
        eval_time: 5m
        exp_samples:
` + row("cursus-a1", "aaaa", "k1") + row("cursus-a2", "aaaa", "k1") + row("cursus-a3", "bbbb", "k1")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "panel_test.yaml"), []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, dir, "test", "rules", "panel_test.yaml")
}
