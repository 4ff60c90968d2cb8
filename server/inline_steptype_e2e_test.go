package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// The new step type the caller sends: a processing step modelled on
// CurrencyConversion, fed by TabularPreprocessing and feeding training.
const (
	clipStepType = "OutlierClipping"
	clipNode     = "OutlierClipping_training"
	clipScript   = "scripts/outlier_clipping.py"
)

// insertBetween puts node on the edge from → to, which must exist.
func insertBetween(t *testing.T, nodes []string, edges [][2]string, from, node, to string) ([]string, [][2]string) {
	t.Helper()
	i := slices.Index(edges, [2]string{from, to})
	if i < 0 {
		t.Fatalf("no edge %s → %s in %v", from, to, edges)
	}
	out := append(slices.Clone(edges[:i]), [2]string{from, node}, [2]string{node, to})
	return append(slices.Clone(nodes), node), append(out, edges[i+1:]...)
}

// bindingFrom is the node that feeds dependency dep of node in
// dag.resolve_plan's bindings, "" when unbound.
func bindingFrom(t *testing.T, ag *agent, bindings any, node, dep string) string {
	t.Helper()
	var byNode map[string][]struct {
		Dependency string `json:"dependency"`
		FromNode   string `json:"from_node"`
	}
	ag.decode(bindings, &byNode)
	for _, b := range byNode[node] {
		if b.Dependency == dep {
			return b.FromNode
		}
	}
	return ""
}

// definitionStep is the step of a pipeline definition named name.
func definitionStep(t *testing.T, ag *agent, definition any, name string) (typ string, arguments string) {
	t.Helper()
	var def struct {
		Steps []struct {
			Name      string          `json:"Name"`
			Type      string          `json:"Type"`
			Arguments json.RawMessage `json:"Arguments"`
		} `json:"Steps"`
	}
	ag.decode(definition, &def)
	for _, s := range def.Steps {
		if s.Name == name {
			return s.Type, string(s.Arguments)
		}
	}
	t.Fatalf("the definition has no step %s", name)
	return "", ""
}

// TestNewStepTypeInlineOnTheDefaultServer: over MCP against the default
// read-only server and an empty workspace, a caller sends a new processing
// step type (.step.yaml in step_types, its script in files), places it
// between TabularPreprocessing and XGBoostTraining of a shared DAG, and
// validates, wires, configures and compiles it with no restart. The
// workspace is unchanged and the next call without step_types does not
// know the step type.
func TestNewStepTypeInlineOnTheDefaultServer(t *testing.T) {
	stepYAML, err := os.ReadFile(filepath.Join("testdata", "outlier_clipping", "outlier_clipping.step.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "outlier_clipping", "outlier_clipping.py"))
	if err != nil {
		t.Fatal(err)
	}
	stepTypes := []string{string(stepYAML)}
	files := map[string]string{clipScript: string(script)}

	env := newTestEnv(t, nil)
	workspace := env.cfg.Workspace.Root
	before := treeHash(t, workspace)
	ag := newAgent(t, env)

	checked := ag.data("validate__step_interface", map[string]any{"step_types": stepTypes})
	var findings struct {
		Validated int `json:"validated"`
		Errors    int `json:"errors"`
		Results   []struct {
			Step string `json:"step"`
		} `json:"results"`
	}
	ag.decode(checked, &findings)
	if findings.Validated != 1 || findings.Errors != 0 || len(findings.Results) != 1 || findings.Results[0].Step != clipStepType {
		t.Fatalf("validate.step_interface: %v", checked)
	}

	var shared struct {
		Nodes []string    `json:"nodes"`
		Edges [][2]string `json:"edges"`
	}
	ag.decode(ag.data("pipeline_catalog__load_dag", map[string]any{"dag_id": "xgboost_simple_training"}), &shared)
	nodes, edges := insertBetween(t, shared.Nodes, shared.Edges, "TabularPreprocessing_training", clipNode, "XGBoostTraining")
	dag := map[string]any{"nodes": nodes, "edges": edges}

	plan := ag.data("dag__resolve_plan", map[string]any{"nodes": nodes, "edges": edges, "step_types": stepTypes})
	if got := bindingFrom(t, ag, plan["bindings"], clipNode, "input_data"); got != "TabularPreprocessing_training" {
		t.Errorf("%s.input_data is fed by %q, want TabularPreprocessing_training", clipNode, got)
	}
	if got := bindingFrom(t, ag, plan["bindings"], "XGBoostTraining", "input_path"); got != clipNode {
		t.Errorf("XGBoostTraining.input_path is fed by %q, want %s", got, clipNode)
	}

	var reqs struct {
		ConfigClassMap map[string]string `json:"config_class_map"`
		Unresolved     []any             `json:"unresolved"`
		Template       struct {
			Base    map[string]any            `json:"base"`
			PerNode map[string]map[string]any `json:"per_node"`
		} `json:"template"`
	}
	ag.decode(ag.data("config__requirements", map[string]any{"dag": dag, "step_types": stepTypes}), &reqs)
	if reqs.ConfigClassMap[clipNode] != clipStepType+"Config" || len(reqs.Unresolved) != 0 {
		t.Fatalf("config.requirements: classes %v, unresolved %v", reqs.ConfigClassMap, reqs.Unresolved)
	}
	if _, ok := reqs.Template.PerNode[clipNode]["clip_columns"]; !ok {
		t.Fatalf("config.requirements does not ask for %s's essential clip_columns: %v", clipNode, reqs.Template.PerNode[clipNode])
	}
	fillTemplate(t, reqs.Template.Base, reqs.Template.PerNode)
	// The scripts' folder, where the call's files put the new script.
	reqs.Template.Base["source_dir"] = filepath.Dir(clipScript)

	merged := ag.data("config__merge_save", map[string]any{"dag": dag, "base": reqs.Template.Base, "per_node": reqs.Template.PerNode,
		"created_at": "2026-01-01T00:00:00Z", "step_types": stepTypes})
	if merged["written"] != nil {
		t.Fatalf("config.merge_save without output_file wrote %v", merged["written"])
	}
	config := merged["document"]

	report := ag.data("compile__with_report", map[string]any{"config": config, "dag": dag, "files": files, "step_types": stepTypes})
	typ, args := definitionStep(t, ag, report["definition"], "OutlierClipping-Training")
	if typ != "Processing" {
		t.Errorf("the new step is a %s step, want Processing", typ)
	}
	const fromPreprocessing = `{"Get":"Steps.TabularPreprocessing-Training.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"}`
	if !strings.Contains(args, `"InputName":"input_data"`) || !strings.Contains(args, fromPreprocessing) {
		t.Errorf("the new step's inputs do not reference TabularPreprocessing's output: %s", args)
	}
	_, trainingArgs := definitionStep(t, ag, report["definition"], "XGBoostTraining")
	const fromClipping = `{"Get":"Steps.OutlierClipping-Training.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"}`
	if !strings.Contains(trainingArgs, fromClipping) {
		t.Errorf("XGBoostTraining's input does not reference the new step's output: %s", trainingArgs)
	}
	sum := sha256.Sum256(script)
	wantKey := fmt.Sprintf("/code/%s/%s", hex.EncodeToString(sum[:]), filepath.Base(clipScript))
	manifest, _ := report["manifest"].(map[string]any)
	if uri, _ := manifest[clipScript].(string); !strings.HasSuffix(uri, wantKey) {
		t.Errorf("manifest[%s] = %q, want the content-addressed key …%s", clipScript, uri, wantKey)
	}
	def, err := json.Marshal(report["definition"])
	if err != nil {
		t.Fatal(err)
	}
	if after := treeHash(t, workspace); after != before {
		t.Errorf("the workspace changed: %s → %s", before, after)
	}

	// The step type lived for those calls only: the same server, asked
	// again without step_types, does not know it.
	if envl := ag.call("catalog__step_spec", map[string]any{"step_name": clipStepType}); envl["ok"] != false || envl["code"] != "not_found" {
		t.Errorf("catalog.step_spec without step_types: %v, want not_found", envl)
	}
	again := ag.call("compile__with_report", map[string]any{"config": config, "dag": dag, "files": files})
	if again["ok"] != false || !strings.Contains(fmt.Sprint(again["error"]), clipNode) {
		t.Errorf("compile.with_report without step_types: %v, want a failure naming %s", again, clipNode)
	}
	sagemakertest.MustValidate(t, def)
}

// TestNewStepTypeWithoutItsScriptIsAFinding: the same new step type sent
// without its script is, on every compile tool over MCP, a finding that
// names the node, the file it lacks and how to supply it — never a
// definition naming code that does not exist. Sent with the script, the
// same calls pass.
func TestNewStepTypeWithoutItsScriptIsAFinding(t *testing.T) {
	stepYAML, err := os.ReadFile(filepath.Join("testdata", "outlier_clipping", "outlier_clipping.step.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	stepTypes := []string{string(stepYAML)}
	// compile.dag upserts when asked: the finding must stop it first.
	env := newTestEnv(t, map[string]string{"CURSUS_MCP_ENABLE_DESTRUCTIVE": "1"})
	ag := newAgent(t, env)

	var shared struct {
		Nodes []string    `json:"nodes"`
		Edges [][2]string `json:"edges"`
	}
	ag.decode(ag.data("pipeline_catalog__load_dag", map[string]any{"dag_id": "xgboost_simple_training"}), &shared)
	nodes, edges := insertBetween(t, shared.Nodes, shared.Edges, "TabularPreprocessing_training", clipNode, "XGBoostTraining")
	dag := map[string]any{"nodes": nodes, "edges": edges}
	var reqs struct {
		Template struct {
			Base    map[string]any            `json:"base"`
			PerNode map[string]map[string]any `json:"per_node"`
		} `json:"template"`
	}
	ag.decode(ag.data("config__requirements", map[string]any{"dag": dag, "step_types": stepTypes}), &reqs)
	fillTemplate(t, reqs.Template.Base, reqs.Template.PerNode)
	config := ag.data("config__merge_save", map[string]any{"dag": dag, "base": reqs.Template.Base, "per_node": reqs.Template.PerNode,
		"created_at": "2026-01-01T00:00:00Z", "step_types": stepTypes})["document"]
	args := map[string]any{"config": config, "dag": dag, "step_types": stepTypes}

	const script = "outlier_clipping.py"
	says := func(text string) bool {
		return strings.Contains(text, clipNode) && strings.Contains(text, script) && strings.Contains(text, "files")
	}
	v := ag.data("compile__validate", args)
	if v["is_valid"] != false || !says(fmt.Sprint(v["config_errors"])) {
		t.Errorf("compile.validate: valid %v, errors %v", v["is_valid"], v["config_errors"])
	}
	if p := ag.data("compile__preview", args); !says(fmt.Sprint(p["recommendations"])) {
		t.Errorf("compile.preview recommends %v", p["recommendations"])
	}
	// The finding is the engine's fact; the tool that shows a built-in
	// script to start from is a next step.
	for _, tool := range []string{"compile__validate", "compile__preview"} {
		var next struct {
			NextSteps []struct {
				Tool string `json:"tool"`
			} `json:"next_steps"`
		}
		ag.decode(ag.call(tool, args), &next)
		named := false
		for _, n := range next.NextSteps {
			named = named || n.Tool == "steps.code"
		}
		if !named {
			t.Errorf("%s: next steps %+v name no steps.code", tool, next.NextSteps)
		}
	}
	for _, tool := range []string{"compile__with_report", "compile__dag"} {
		call := maps.Clone(args)
		if tool == "compile__dag" {
			call["upsert"] = true
		}
		envl := ag.call(tool, call)
		if envl["ok"] != false || envl["code"] != "validation_failed" || !says(fmt.Sprint(envl["error"])) ||
			!strings.Contains(fmt.Sprint(envl), "steps.code") {
			t.Errorf("%s: %v, want validation_failed naming %s, %s and steps.code", tool, envl, clipNode, script)
		}
		if strings.Contains(fmt.Sprint(envl), "/code/missing/") {
			t.Errorf("%s answers with a code/missing placeholder", tool)
		}
	}

	args["files"] = map[string]string{script: "print('clip')\n"}
	if v := ag.data("compile__validate", args); v["is_valid"] != true {
		t.Errorf("compile.validate with the script: %v", v)
	}
	report := ag.data("compile__with_report", args)
	manifest, _ := report["manifest"].(map[string]any)
	if _, ok := manifest[script]; !ok {
		t.Errorf("the manifest lacks the sent script: %v", manifest)
	}
}
