package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// promqlWords are PromQL functions, aggregations and keywords: every other
// identifier left in an expression is a metric name.
var promqlWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`sum avg min max count count_values stddev stdvar topk bottomk quantile group
		rate irate increase delta idelta deriv predict_linear resets changes histogram_quantile
		histogram_count histogram_sum histogram_fraction clamp clamp_min clamp_max abs ceil floor round
		exp ln log2 log10 sqrt sgn absent absent_over_time vector scalar time timestamp sort sort_desc
		label_replace label_join avg_over_time min_over_time max_over_time sum_over_time
		count_over_time last_over_time quantile_over_time present_over_time
		by without on ignoring group_left group_right and or unless bool offset
		humanize humanizePercentage humanizeDuration inf nan`) {
		promqlWords[w] = true
	}
}

var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promqlMatchers  = regexp.MustCompile(`\{[^{}]*\}`)
	promqlGroupings = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promqlRanges    = regexp.MustCompile(`\[[^\[\]]*\]`)
	grafanaVars     = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_]\w*`)
	promqlIdent     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promqlNumber    = regexp.MustCompile(`\b\d+(\.\d+)?([eE][-+]?\d+)?\b`)
)

// promqlMetrics returns the metric names an expression (or a Grafana
// label_values() query) reads, or an error when its brackets or quotes do
// not balance.
func promqlMetrics(expr string) ([]string, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("empty expression")
	}
	s := grafanaVars.ReplaceAllString(expr, "0")
	s = promqlStrings.ReplaceAllString(s, `""`)
	if strings.ContainsAny(s, `"'`) && strings.Count(s, `"`)%2 != 0 {
		return nil, fmt.Errorf("unbalanced quotes in %q", expr)
	}
	var stack []rune
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	for _, r := range s {
		switch r {
		case '(', '[', '{':
			stack = append(stack, r)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[r] {
				return nil, fmt.Errorf("unbalanced %q in %q", r, expr)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("unclosed %q in %q", stack[len(stack)-1], expr)
	}
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlGroupings.ReplaceAllString(s, " ")
	s = promqlRanges.ReplaceAllString(s, " ")
	// label_values(metric, label): the label is not a metric.
	s = regexp.MustCompile(`label_values\(([^,()]*),[^()]*\)`).ReplaceAllString(s, "$1")
	s = promqlNumber.ReplaceAllString(s, " ")
	var names []string
	for _, id := range promqlIdent.FindAllString(s, -1) {
		if !promqlWords[id] && !slices.Contains(names, id) {
			names = append(names, id)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no metric in %q", expr)
	}
	return names, nil
}

func TestPromQLMetrics(t *testing.T) {
	got, err := promqlMetrics(`histogram_quantile(0.99, sum by (le, tool) (rate(cursus_tool_call_duration_seconds_bucket{job=~"$job",code!="ok"}[$__rate_interval]))) / clamp_min(sum(up), 1e-9) > 0.5`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cursus_tool_call_duration_seconds_bucket", "up"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, _ := promqlMetrics(`label_values(cursus_tool_calls_total{job=~"$job"}, tool)`); !slices.Equal(got, []string{"cursus_tool_calls_total"}) {
		t.Errorf("label_values: got %v", got)
	}
	for _, bad := range []string{"", "sum(rate(x[5m])", `x{a="b}`, "sum(x))"} {
		if _, err := promqlMetrics(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// dashboardExprs collects every Prometheus query in a Grafana dashboard:
// panel targets (rows included) and template variable queries.
func dashboardExprs(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
			Panels []json.RawMessage `json:"panels"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatal("dashboard needs a title, a uid and panels")
	}
	exprs := map[string]string{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, tg := range p.Targets {
			exprs[fmt.Sprintf("panel %q target %d", p.Title, i)] = tg.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("variable %s: query is not an object: %v", v.Name, err)
		}
		exprs["variable "+v.Name] = q.Query
	}
	return exprs
}

type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert         string            `yaml:"alert"`
			Record        string            `yaml:"record"`
			Expr          string            `yaml:"expr"`
			For           string            `yaml:"for"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleExprs checks deploy/prometheus/rules.yaml's structure and returns
// its expressions by alert.
func ruleExprs(t *testing.T) map[string]string {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readRepoFile(t, "deploy/prometheus/rules.yaml")))
	dec.KnownFields(true)
	var rf ruleFile
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("rules.yaml: %v", err)
	}
	if len(rf.Groups) == 0 {
		t.Fatal("rules.yaml has no groups")
	}
	exprs := map[string]string{}
	labelRef := regexp.MustCompile(`\$labels\.(\w+)`)
	for _, g := range rf.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: needs a name and rules", g.Name)
		}
		for i, r := range g.Rules {
			where := fmt.Sprintf("group %s rule %d (%s)", g.Name, i, r.Alert+r.Record)
			if (r.Alert == "") == (r.Record == "") {
				t.Errorf("%s: needs exactly one of alert and record", where)
			}
			if _, dup := exprs[r.Alert]; dup {
				t.Errorf("%s: duplicate alert name", where)
			}
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("%s: empty expr", where)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", where, r.For, err)
				}
			}
			if r.Alert == "" {
				continue
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("%s: labels.severity %q: want critical, warning or info", where, r.Labels["severity"])
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: annotation %s missing", where, a)
				}
			}
			// A label the annotations print must survive the aggregation.
			for _, text := range r.Annotations {
				for _, m := range labelRef.FindAllStringSubmatch(text, -1) {
					if !regexp.MustCompile(`\b` + m[1] + `\b`).MatchString(r.Expr) {
						t.Errorf("%s: annotation uses $labels.%s, which the expr does not keep", where, m[1])
					}
				}
			}
			exprs[r.Alert] = r.Expr
		}
	}
	return exprs
}

func TestAlertRulesCoverTheAskedAlerts(t *testing.T) {
	exprs := ruleExprs(t)
	joined := ""
	for _, e := range exprs {
		joined += e + "\n"
	}
	for what, metric := range map[string]string{
		"error ratio":     "cursus_tool_calls_total",
		"latency p99":     "cursus_tool_call_duration_seconds_bucket",
		"gate rejections": "cursus_tool_gate_rejections_total",
	} {
		if !strings.Contains(joined, metric) {
			t.Errorf("no alert on %s (%s)", what, metric)
		}
	}
	if !strings.Contains(joined, "histogram_quantile(0.99") {
		t.Error("no p99 latency alert")
	}
}

// TestDashboardAndRulesQueryRealMetrics starts the real server, drives
// every kind of outcome through it, and checks that each metric the
// dashboard and the alert rules read is in its /metrics.
func TestDashboardAndRulesQueryRealMetrics(t *testing.T) {
	want := map[string][]string{} // metric → where it is used
	for where, expr := range dashboardExprs(t, readRepoFile(t, "deploy/grafana/cursus-mcp-dashboard.json")) {
		names, err := promqlMetrics(expr)
		if err != nil {
			t.Errorf("dashboard %s: %v", where, err)
		}
		for _, n := range names {
			want[n] = append(want[n], "dashboard "+where)
		}
	}
	for alert, expr := range ruleExprs(t) {
		names, err := promqlMetrics(expr)
		if err != nil {
			t.Errorf("rules.yaml %s: %v", alert, err)
		}
		for _, n := range names {
			want[n] = append(want[n], "alert "+alert)
		}
	}

	have := liveMetricFamilies(t)
	for metric, uses := range want {
		family := metric
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(metric, suffix); ok && have[base] == "histogram" {
				family = base
			}
		}
		if have[family] == "" {
			slices.Sort(uses)
			t.Errorf("%s is not in /metrics; used by %s", metric, strings.Join(uses, "; "))
		}
	}
}

// startServer runs the built `cursus serve` on a loopback port with the
// given config (files are written next to it first; "$DIR" in the config is
// that directory) and returns its base URL. The server stops at test end.
func startServer(t *testing.T, config string, files map[string]string) string {
	t.Helper()
	bin := cursusBinary(t)
	dir := t.TempDir()
	files["cursus.yaml"] = strings.ReplaceAll(config, "$DIR", dir)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--config", filepath.Join(dir, "cursus.yaml"), "--workspace-root", dir)
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	// Read stderr to the end (so the server never blocks on a full pipe),
	// passing on the listening address, and the log if it never listens.
	addr, exited := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var logs strings.Builder
		for sc.Scan() {
			var line struct {
				Message string `json:"message"`
				Addr    string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "listening" {
				addr <- line.Addr
			}
			logs.WriteString(sc.Text() + "\n")
		}
		exited <- logs.String()
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case logs := <-exited:
		t.Fatalf("cursus serve exited before listening:\n%s", logs)
	}
	return ""
}

// liveMetricFamilies runs `cursus serve` on loopback with token auth and a
// low rate limit, makes an ok call, a gated call, an unauthenticated call
// and calls past the rate limit, and returns /metrics' families by type.
func liveMetricFamilies(t *testing.T) map[string]string {
	t.Helper()
	const token = "deploy-test-reader"
	base := startServer(t, "listen:\n  addr: 127.0.0.1:0\nauth:\n  tokens_file: $DIR/tokens\nlimits:\n  rate_per_minute: 5\n",
		map[string]string{"tokens": token + " reader read\n"})

	call := func(tool, auth string) int {
		args := "{}"
		if tool == "project__init" { // a write only with target_dir
			args = `{"name": "x", "framework": "xgboost", "target_dir": "projects"}`
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/call/"+tool, strings.NewReader(args))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := call("tools__help", token); got != http.StatusOK {
		t.Fatalf("tools.help: status %d", got)
	}
	if got := call("project__init", token); got != http.StatusForbidden {
		t.Fatalf("project.init with gates closed: status %d, want 403", got)
	}
	if got := call("tools__help", ""); got != http.StatusUnauthorized {
		t.Fatalf("no token: status %d, want 401", got)
	}
	limited := false
	for i := 0; i < 20 && !limited; i++ { // the bucket holds 5
		limited = call("tools__help", token) == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("20 calls never hit the 5/minute rate limit")
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d", resp.StatusCode)
	}
	families := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			families[f[2]] = f[3]
		}
	}
	if len(families) == 0 {
		t.Fatal("/metrics has no metric families")
	}
	return families
}
