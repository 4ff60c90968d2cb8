package server

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// Answer budgets (issue 30): what an agent pays for the answers it needs
// first. Each is measured in bytes of the whole HTTP response body, as a
// remote caller of the default server receives it.
const (
	toolsHelpBudget    = 8 << 10
	requirementsBudget = 12 << 10
)

// rawPost is the status and body of POST /call/<tool>.
func rawPost(t *testing.T, base, tool, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(base+"/call/"+tool, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestToolsHelpFitsBudget: tools.help {} of the default server is at most
// 8 KB and still names every tool the caller may call (but the
// help tools) with its purpose and phase, the gates that close tools
// with their alternatives, and how to get more; detail full keeps the
// whole listing.
func TestToolsHelpFitsBudget(t *testing.T) {
	env, reg := productionEnv(t, nil)
	status, body := rawPost(t, env.ts.URL, "tools.help", `{}`)
	if status != http.StatusOK {
		t.Fatalf("tools.help: %d %s", status, body)
	}
	if len(body) > toolsHelpBudget {
		t.Errorf("tools.help {} is %d bytes, over the %d-byte budget", len(body), toolsHelpBudget)
	}
	var env1 struct {
		Data struct {
			Overview string `json:"overview"`
			Detail   string `json:"detail"`
			Phases   map[string]struct {
				Tools map[string]string `json:"tools"`
			} `json:"phases"`
			Disabled []struct {
				Gate         string   `json:"gate"`
				EnableWith   string   `json:"enable_with"`
				Alternatives []string `json:"alternatives"`
			} `json:"disabled"`
			Workflows []struct {
				Run string `json:"run"`
			} `json:"workflows"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env1); err != nil {
		t.Fatal(err)
	}
	d := env1.Data
	listed := map[string]bool{}
	for _, p := range d.Phases {
		for name, purpose := range p.Tools {
			listed[name] = true
			if purpose == "" {
				t.Errorf("%s has no purpose", name)
			}
		}
	}
	for _, tool := range reg.Tools("") {
		open := reg.Admit(registry.Caller{Remote: true, Transport: "rest"}, tool).Allowed
		switch {
		case strings.HasSuffix(tool.Name, ".help"):
			if listed[tool.Name] {
				t.Errorf("the summary lists %s", tool.Name)
			}
		case open != listed[tool.Name]:
			t.Errorf("%s: open to the caller %v, listed %v", tool.Name, open, listed[tool.Name])
		}
	}
	if len(d.Disabled) == 0 || d.Disabled[0].EnableWith == "" || len(d.Disabled[0].Alternatives) == 0 {
		t.Errorf("closed gates: %+v", d.Disabled)
	}
	for _, more := range []string{`"detail": "full"`, "tools.describe_tool", ".help"} {
		if !strings.Contains(d.Overview, more) {
			t.Errorf("the overview does not say %s: %s", more, d.Overview)
		}
	}
	if d.Detail != "summary" || len(d.Workflows) == 0 || !strings.Contains(d.Workflows[0].Run, "workflow.submit") {
		t.Errorf("detail %q, workflows %+v", d.Detail, d.Workflows)
	}

	_, full := rawPost(t, env.ts.URL, "tools.help", `{"detail": "full"}`)
	if len(full) < 4*len(body) || !strings.Contains(string(full), `"examples"`) || !strings.Contains(string(full), `"namespaces"`) {
		t.Errorf("tools.help detail full is %d bytes (summary %d) and should hold every example", len(full), len(body))
	}
}

// restLeanBudget bounds GET /tools in its default (OpenAI) shape: the lean
// MCP list's 30 KB plus the function wrapper and phase tags of each tool.
const restLeanBudget = 32 << 10

// rawGet is the status and body of a GET.
func rawGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestRESTToolListLeanByDefault: GET /tools is lean by default, as the MCP
// tools/list (every format within its budget, the same tools as the full
// listing, each description the tool's summary), and ?detail=full gives
// the whole descriptions and schemas; any other detail is refused.
func TestRESTToolListLeanByDefault(t *testing.T) {
	env, reg := productionEnv(t, nil)
	names := func(body []byte, format string) []string {
		var out []string
		var list []map[string]any
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, item := range list {
			if f, ok := item["function"].(map[string]any); ok {
				item = f
			}
			out = append(out, item["name"].(string))
		}
		return out
	}
	for format, budget := range map[string]int{"openai": restLeanBudget, "mcp": leanListBudget, "gemini": leanListBudget} {
		status, lean := rawGet(t, env.ts.URL+"/tools?format="+format)
		_, full := rawGet(t, env.ts.URL+"/tools?detail=full&format="+format)
		if status != http.StatusOK || len(lean) > budget {
			t.Errorf("GET /tools?format=%s: %d, %d bytes (budget %d)", format, status, len(lean), budget)
		}
		if len(full) < 3*len(lean) {
			t.Errorf("format %s: full %d bytes, lean %d: the full listing should be whole", format, len(full), len(lean))
		}
		if l, f := names(lean, format), names(full, format); strings.Join(l, ",") != strings.Join(f, ",") || len(l) == 0 {
			t.Errorf("format %s: lean lists %v, full %v", format, l, f)
		}
		if format == "mcp" && strings.Contains(string(lean), `"outputSchema"`) {
			t.Error("the lean MCP shape carries output schemas")
		}
	}
	var plain []registry.OpenAITool
	_, body := rawGet(t, env.ts.URL+"/tools")
	if err := json.Unmarshal(body, &plain); err != nil {
		t.Fatal(err)
	}
	for _, tool := range plain {
		def, _ := reg.Lookup(tool.Function.Name)
		if tool.Function.Description != def.Summary() {
			t.Errorf("%s: description %q, want its summary", tool.Function.Name, tool.Function.Description)
		}
	}
	if status, _ := rawGet(t, env.ts.URL+"/tools?detail=everything"); status != http.StatusBadRequest {
		t.Errorf("detail=everything: %d, want 400", status)
	}
}

// TestConfigRequirementsFitsBudget: for the 12-node LightGBM end-to-end
// DAG (the shared lightgbm_complete_e2e with missing-value imputation on
// both job types), config.requirements answers at most 12 KB by default,
// and what it answers is enough to fill its template: every asked-for
// field is described, every node's other fields have their defaults, and
// detail full still lists every field of every node.
func TestConfigRequirementsFitsBudget(t *testing.T) {
	env, _ := productionEnv(t, nil)
	status, loaded := rawPost(t, env.ts.URL, "pipeline_catalog.get_dag", `{"dag_id": "lightgbm_complete_e2e"}`)
	var shared struct {
		Data struct {
			Nodes []string    `json:"nodes"`
			Edges [][2]string `json:"edges"`
		} `json:"data"`
	}
	if err := json.Unmarshal(loaded, &shared); status != http.StatusOK || err != nil {
		t.Fatalf("get_dag: %d %v", status, err)
	}
	nodes, edges := withImputation(shared.Data.Nodes, shared.Data.Edges)
	if len(nodes) != 12 {
		t.Fatalf("%d nodes", len(nodes))
	}
	dag, _ := json.Marshal(map[string]any{"nodes": nodes, "edges": edges})
	status, body := rawPost(t, env.ts.URL, "config.requirements", `{"dag": `+string(dag)+`}`)
	if status != http.StatusOK {
		t.Fatalf("config.requirements: %d %s", status, body)
	}
	if len(body) > requirementsBudget {
		t.Errorf("config.requirements of the 12-node DAG is %d bytes, over the %d-byte budget", len(body), requirementsBudget)
	}
	var out struct {
		Data struct {
			Required map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"required"`
			Optional struct {
				Shared  map[string]any            `json:"shared"`
				Common  map[string]any            `json:"common"`
				PerNode map[string]map[string]any `json:"per_node"`
			} `json:"optional"`
			Template struct {
				Base    map[string]any            `json:"base"`
				PerNode map[string]map[string]any `json:"per_node"`
			} `json:"template"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	d := out.Data
	asked := func(node, field string) {
		f, ok := d.Required[node+"."+field]
		if !ok {
			f, ok = d.Required[field]
		}
		if !ok || f.Type == "" || f.Description == "" {
			t.Errorf("the template asks for %s %s, which required does not describe: %+v", node, field, f)
		}
	}
	for field := range d.Template.Base {
		asked("", field)
	}
	for _, n := range nodes {
		fields, ok := d.Template.PerNode[n]
		if _, listed := d.Optional.PerNode[n]; !ok || !listed {
			t.Errorf("%s: template %v, optional listed %v", n, ok, listed)
		}
		for field := range fields {
			asked(n, field)
		}
	}
	if _, ok := d.Optional.Common["processing_instance_type_large"]; !ok || len(d.Optional.Shared) == 0 {
		t.Errorf("optional: shared %v, common %v", d.Optional.Shared, d.Optional.Common)
	}
	_, full := rawPost(t, env.ts.URL, "config.requirements", `{"detail": "full", "dag": `+string(dag)+`}`)
	if len(full) < 4*len(body) || !strings.Contains(string(full), `"step_requirements"`) || !strings.Contains(string(full), `"essential"`) {
		t.Errorf("detail full is %d bytes (summary %d) and should list every field", len(full), len(body))
	}
}

// toolSizesRow is a row of docs/TOOLS.md's first table: | name | tools |
// bytes | KB | tokens |.
func toolSizesRow(t *testing.T, doc, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \| (\d+) \| (\d+) \| ([\d.]+) \| (\d+) \|$`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/TOOLS.md has no %q row", name)
	}
	return m[1:]
}

// TestReadmeToolFiguresMatchDocs: README.md's tool-list figures are those
// of docs/TOOLS.md (scripts/tool-sizes.sh writes both), and docs/TOOLS.md
// is the live default tools/list: the same number of tools, and bytes
// within 5% (descriptions change between regenerations; run
// scripts/tool-sizes.sh when this fails).
func TestReadmeToolFiguresMatchDocs(t *testing.T) {
	docBytes, err := os.ReadFile(filepath.Join("..", "docs", "TOOLS.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(docBytes)
	lean, full := toolSizesRow(t, doc, "lean (default)"), toolSizesRow(t, doc, "full")
	want := fmt.Sprintf("<!-- tool-sizes -->about %s KB (%s o200k tokens) for all %s tools instead of %s KB<!-- /tool-sizes -->", lean[2], lean[3], lean[0], full[2])
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md's tool-list figures are not docs/TOOLS.md's: want %s (run scripts/tool-sizes.sh)", want)
	}

	env, _ := productionEnv(t, nil)
	status, body := rawToolsList(t, env.ts.URL+"/mcp", nil)
	if status != http.StatusOK {
		t.Fatalf("tools/list: %d", status)
	}
	var msg struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	docTools, _ := strconv.Atoi(lean[0])
	docLean, _ := strconv.Atoi(lean[1])
	if len(msg.Result.Tools) != docTools || math.Abs(float64(len(body)-docLean)) > 0.05*float64(docLean) {
		t.Errorf("live tools/list: %d tools, %d bytes; docs/TOOLS.md says %d tools, %d bytes (run scripts/tool-sizes.sh)", len(msg.Result.Tools), len(body), docTools, docLean)
	}
}
