package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// pathAgent is a remote agent with no prior knowledge of cursus on the
// default read-only server: it reads the tool list (its input schemas),
// calls tools.help once, and from then on calls only tools tools.help
// listed, with argument names their schemas declare, filling them from
// the args hints of earlier answers and from its own intent (the user's
// values, the content it writes). Every tool call counts.
type pathAgent struct {
	*agent
	budget   int
	calls    []string
	listed   map[string]bool           // tools tools.help named
	schemas  map[string]map[string]any // dotted tool name → input schema properties
	hints    map[string]map[string]any // tool → args hint of the last answer that gave one
	latest   []string                  // the tools the last answer's next steps name
	workflow map[string]string         // workflow name → how tools.help says to run it
}

func newPathAgent(t *testing.T, env *testEnv, budget int) *pathAgent {
	t.Helper()
	p := &pathAgent{agent: newAgent(t, env), budget: budget, listed: map[string]bool{}, schemas: map[string]map[string]any{},
		hints: map[string]map[string]any{}, workflow: map[string]string{}}
	list, err := p.cs.ListTools(p.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		_ = json.Unmarshal(b, &s)
		p.schemas[strings.ReplaceAll(tool.Name, "__", ".")] = s.Properties
	}
	var help struct {
		Phases map[string]struct {
			Tools map[string]string `json:"tools"`
		} `json:"phases"`
		Workflows []struct {
			Name string `json:"name"`
			Run  string `json:"run"`
		} `json:"workflows"`
	}
	p.decode(p.do("tools.help", map[string]any{})["data"], &help)
	for _, ph := range help.Phases {
		for name := range ph.Tools {
			p.listed[name] = true
		}
	}
	for _, w := range help.Workflows {
		p.workflow[w.Name] = w.Run
	}
	return p
}

// do makes one counted call of tool (dotted name) and records the args
// hints of its next steps.
func (p *pathAgent) do(tool string, args map[string]any) map[string]any {
	p.t.Helper()
	if len(p.calls) > 0 && !p.listed[tool] {
		p.t.Fatalf("call %d: %s is not among the tools tools.help listed", len(p.calls)+1, tool)
	}
	props, ok := p.schemas[tool]
	if !ok {
		p.t.Fatalf("%s is not in the tool list", tool)
	}
	for k := range args {
		if _, ok := props[k]; !ok {
			p.t.Fatalf("%s: the agent sends %q, which the tool's schema does not declare", tool, k)
		}
	}
	p.calls = append(p.calls, tool)
	envl := p.call(strings.ReplaceAll(tool, ".", "__"), args)
	steps, _ := envl["next_steps"].([]any)
	p.latest = nil
	for _, s := range steps {
		step, _ := s.(map[string]any)
		name, _ := step["tool"].(string)
		p.latest = append(p.latest, name)
		if hint, ok := step["args_hint"].(map[string]any); ok {
			p.hints[name] = hint
		}
	}
	return envl
}

// ok makes one counted call that must succeed and returns its data.
func (p *pathAgent) ok(tool string, args map[string]any) map[string]any {
	p.t.Helper()
	envl := p.do(tool, args)
	if envl["ok"] != true {
		p.t.Fatalf("%s failed: %v", tool, envl)
	}
	return envl["data"].(map[string]any)
}

// hint is the args hint an earlier answer gave for tool, with the
// placeholders the agent can fill filled: <data.X> from the data of the
// answer that gave it (data), a listed placeholder by the agent's own
// content of that argument (own). A placeholder left over fails the test.
func (p *pathAgent) hint(tool string, data map[string]any, own map[string]any) map[string]any {
	p.t.Helper()
	h, ok := p.hints[tool]
	if !ok {
		p.t.Fatalf("no answer so far hinted at %s (calls %v)", tool, p.calls)
	}
	out := map[string]any{}
	for k, v := range h {
		if s, isString := v.(string); isString {
			if field, ok := strings.CutPrefix(s, "<data."); ok {
				v = data[strings.TrimSuffix(field, ">")]
			}
		}
		if mine, ok := own[k]; ok && placeholder.MatchString(mustJSON(p.t, v)) {
			v = mine
		}
		if m := placeholder.FindString(mustJSON(p.t, v)); m != "" {
			p.t.Fatalf("%s's args hint leaves %s = %s for the agent to guess", tool, k, m)
		}
		out[k] = v
	}
	return out
}

// placeholder is an args-hint value the agent must fill itself.
var placeholder = regexp.MustCompile(`"<[^">]+>"`)

// mustJSON is v as JSON, '<' and '>' unescaped.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// done checks the task took at most the budget's calls.
func (p *pathAgent) done() {
	p.t.Helper()
	p.t.Logf("%d calls: %s", len(p.calls), strings.Join(p.calls, " → "))
	if len(p.calls) > p.budget {
		p.t.Errorf("the task took %d calls (%s), over its budget of %d", len(p.calls), strings.Join(p.calls, ", "), p.budget)
	}
}

// dagHint is the dag of tool's args hint, as nodes and edges.
func (p *pathAgent) dagHint(tool string) (nodes []string, edges [][2]string, meta map[string]any) {
	p.t.Helper()
	var d struct {
		Nodes    []string       `json:"nodes"`
		Edges    [][2]string    `json:"edges"`
		Metadata map[string]any `json:"metadata"`
	}
	p.decode(p.hint(tool, nil, nil)["dag"], &d)
	if len(d.Nodes) == 0 {
		p.t.Fatalf("%s's args hint has no dag: %v", tool, p.hints[tool])
	}
	return d.Nodes, d.Edges, d.Metadata
}

// configure fills config.requirements' template for dag (its answer
// hints at config.merge_save with the template), builds the document and
// compiles it with compile.with_report as merge_save's answer hints:
// three calls. own is the agent's own content (step_types, files).
func (p *pathAgent) configure(dag map[string]any, own map[string]any, extra map[string]any) (config any, report map[string]any) {
	p.t.Helper()
	args := map[string]any{"dag": dag}
	maps.Copy(args, own)
	delete(args, "files")
	p.ok("config.requirements", args)
	merge := p.hint("config.merge_save", nil, own)
	var base map[string]any
	var perNode map[string]map[string]any
	p.decode(merge["base"], &base)
	p.decode(merge["per_node"], &perNode)
	fillAnswers(p.t, base, perNode)
	maps.Copy(base, extra)
	merge["base"], merge["per_node"] = base, perNode
	doc := p.ok("config.merge_save", merge)
	return doc["document"], p.ok("compile.with_report", p.hint("compile.with_report", doc, own))
}

// tuningAnswers are the user's answers for a tuning step, beside answers.
var tuningAnswers = map[string]any{
	"objective_metric_name": "validation:auc",
	"search_space":          map[string]any{"continuous": []map[string]any{{"name": "lr", "min": 0.0001, "max": 0.01}}},
}

// fillAnswers answers every field of config.requirements' template from
// answers and tuningAnswers; a field with no answer fails the test.
func fillAnswers(t *testing.T, base map[string]any, perNode map[string]map[string]any) {
	t.Helper()
	fill := func(fields map[string]any) {
		for k := range fields {
			v, ok := answers[k]
			if !ok {
				v, ok = tuningAnswers[k]
			}
			if !ok {
				t.Fatalf("config.requirements asks for %q, which the agent has no answer for", k)
			}
			fields[k] = v
		}
	}
	fill(base)
	for _, fields := range perNode {
		fill(fields)
	}
}

// definitionSteps are the step names and types of a compiled definition.
func definitionSteps(t *testing.T, definition any) map[string]string {
	t.Helper()
	var def struct {
		Steps []struct {
			Name string `json:"Name"`
			Type string `json:"Type"`
		} `json:"Steps"`
	}
	b, _ := json.Marshal(definition)
	if err := json.Unmarshal(b, &def); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range def.Steps {
		out[s.Name] = s.Type
	}
	return out
}

// imputationFor is the step type the answer names for a requested
// feature the selected DAG lacks.
func imputationFor(t *testing.T, sel map[string]any, feature string) string {
	t.Helper()
	lacks, _ := sel["lacks"].(map[string]any)
	types, _ := lacks[feature].([]any)
	if len(types) == 0 {
		t.Fatalf("auto_select does not say which step types add the lacking %s: %v", feature, sel)
	}
	return types[0].(string)
}

// TestAgentPathLightGBMEndToEnd: a LightGBM pipeline with imputation,
// calibration and registration compiled to a definition in 5 calls:
// tools.help, pipeline_catalog.auto_select (the DAG, in config.requirements'
// args hint, and the step type that adds the imputation it lacks),
// config.requirements, config.merge_save, compile.with_report.
func TestAgentPathLightGBMEndToEnd(t *testing.T) {
	env := newTestEnv(t, nil)
	p := newPathAgent(t, env, 5)
	sel := p.ok("pipeline_catalog.auto_select", map[string]any{"framework": "lightgbm", "features": []string{"imputation", "calibration", "registration"}})
	imputation := imputationFor(t, sel, "imputation")
	nodes, edges, meta := p.dagHint("config.requirements")
	// The agent's intent: impute after each preprocessing node.
	var withImp [][2]string
	for _, e := range edges {
		if job, ok := strings.CutPrefix(e[0], "TabularPreprocessing_"); ok {
			node := imputation + "_" + job
			if !slices.Contains(nodes, node) {
				nodes = append(nodes, node)
			}
			withImp = append(withImp, [2]string{e[0], node}, [2]string{node, e[1]})
			continue
		}
		withImp = append(withImp, e)
	}
	withImp = append(withImp, [2]string{imputation + "_training", imputation + "_calibration"})
	dag := map[string]any{"nodes": nodes, "edges": withImp}
	if meta != nil {
		dag["metadata"] = meta
	}
	_, report := p.configure(dag, nil, nil)
	p.done()

	steps := definitionSteps(t, report["definition"])
	for _, want := range []string{"MissingValueImputation-Training", "MissingValueImputation-Calibration", "LightGBMTraining",
		"ModelCalibration-Calibration", "Registration"} {
		if !hasStepPrefix(steps, want) {
			t.Errorf("the definition has no %s step: %v", want, slices.Sorted(maps.Keys(steps)))
		}
	}
	def, _ := json.Marshal(report["definition"])
	sagemakertest.MustValidate(t, def)
}

// hasStepPrefix: some step is named want (or want-<suffix>, the
// registration step's parts).
func hasStepPrefix(steps map[string]string, want string) bool {
	for name := range steps {
		if name == want || strings.HasPrefix(name, want+"-") {
			return true
		}
	}
	return false
}

// TestAgentPathPyTorchTuningAndTransform: PyTorch hyperparameter tuning
// and a batch transform compiled to a definition in 5 calls.
func TestAgentPathPyTorchTuningAndTransform(t *testing.T) {
	env := newTestEnv(t, nil)
	p := newPathAgent(t, env, 5)
	p.ok("pipeline_catalog.auto_select", map[string]any{"framework": "pytorch", "features": []string{"tuning", "batch_transform"}})
	nodes, edges, meta := p.dagHint("config.requirements")
	dag := map[string]any{"nodes": nodes, "edges": edges}
	if meta != nil {
		dag["metadata"] = meta
	}
	_, report := p.configure(dag, nil, nil)
	p.done()

	types := map[string]bool{}
	for _, typ := range definitionSteps(t, report["definition"]) {
		types[typ] = true
	}
	for _, want := range []string{"Tuning", "Transform"} {
		if !types[want] {
			t.Errorf("the definition has no %s step: %v", want, types)
		}
	}
	def, _ := json.Marshal(report["definition"])
	sagemakertest.MustValidate(t, def)
}

// TestAgentPathNewStepTypeInline: a new processing step type sent inline
// (its .step.yaml in step_types, its script in files), placed in a shared
// DAG that compiles, in 6 calls: tools.help, author.checklist (how to send
// it), pipeline_catalog.auto_select, then configure and compile.
func TestAgentPathNewStepTypeInline(t *testing.T) {
	stepYAML, err := os.ReadFile(filepath.Join("testdata", "outlier_clipping", "outlier_clipping.step.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "outlier_clipping", "outlier_clipping.py"))
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t, nil)
	p := newPathAgent(t, env, 6)
	checklist := p.ok("author.checklist", map[string]any{"sagemaker_step_type": "Processing"})
	// Where the script goes and the base values that find it there: the
	// checklist's hints for sending and configuring it.
	var scriptPath string
	base := map[string]any{}
	var list struct {
		Steps []struct {
			Tool     string         `json:"tool"`
			ArgsHint map[string]any `json:"args_hint"`
		} `json:"steps"`
	}
	p.decode(checklist, &list)
	for _, s := range list.Steps {
		if files, ok := s.ArgsHint["files"].(map[string]any); ok {
			for path := range files {
				scriptPath = strings.Replace(path, "<snake_name>", "outlier_clipping", 1)
			}
		}
		if b, ok := s.ArgsHint["base"].(map[string]any); ok && s.Tool == "config.merge_save" {
			maps.Copy(base, b)
		}
	}
	if scriptPath == "" || strings.Contains(scriptPath, "<") {
		t.Fatalf("the checklist does not say where a new step's script goes: %v", list.Steps)
	}
	own := map[string]any{"step_types": []string{string(stepYAML)}, "files": map[string]string{scriptPath: string(script)}}

	p.ok("pipeline_catalog.auto_select", map[string]any{"framework": "xgboost", "features": []string{"training"}})
	nodes, edges, meta := p.dagHint("config.requirements")
	nodes, edges = insertBetween(t, nodes, edges, "TabularPreprocessing_training", clipNode, "XGBoostTraining")
	dag := map[string]any{"nodes": nodes, "edges": edges}
	if meta != nil {
		dag["metadata"] = meta
	}
	_, report := p.configure(dag, own, base)
	p.done()

	if typ := definitionSteps(t, report["definition"])["OutlierClipping-Training"]; typ != "Processing" {
		t.Errorf("the new step compiled as %q, want Processing", typ)
	}
	def, _ := json.Marshal(report["definition"])
	sagemakertest.MustValidate(t, def)
}

// TestAgentPathExecutionDocument: with a DAG and its config in hand, an
// execution document in 2 calls: tools.help and execdoc.generate.
func TestAgentPathExecutionDocument(t *testing.T) {
	env := newTestEnv(t, nil)
	// The agent's content: a DAG and its config.json, made on another
	// server (uncounted: the task starts with them in hand).
	setup := newPathAgent(t, newTestEnv(t, nil), 99)
	setup.ok("pipeline_catalog.auto_select", map[string]any{"framework": "xgboost", "features": []string{"training"}})
	nodes, edges, _ := setup.dagHint("config.requirements")
	dag := map[string]any{"nodes": nodes, "edges": edges}
	config, _ := setup.configure(dag, nil, nil)

	p := newPathAgent(t, env, 2)
	doc := p.ok("execdoc.generate", map[string]any{"dag": dag, "config": config})
	p.done()
	var exec struct {
		Steps map[string]struct {
			Config map[string]any `json:"STEP_CONFIG"`
		} `json:"PIPELINE_STEP_CONFIGS"`
	}
	p.decode(doc, &exec)
	if len(exec.Steps) != len(nodes) || exec.Steps["DummyDataLoading-Training"].Config["data_source"] != answers["data_source"] {
		t.Errorf("the execution document does not configure each of the %d nodes: %v", len(nodes), doc)
	}
}

// startArgs parses the workflow.start call tools.help shows for workflow
// and fills each "…" argument from intent; an argument the agent has no
// intent for fails the test.
func (p *pathAgent) startArgs(workflow string, intent map[string]string) map[string]any {
	p.t.Helper()
	run, ok := p.workflow[workflow]
	_, call, found := strings.Cut(run, "workflow.start ")
	if !ok || !found {
		p.t.Fatalf("tools.help does not say how to start %s: %q", workflow, run)
	}
	var args struct {
		Workflow string            `json:"workflow"`
		Args     map[string]string `json:"args"`
	}
	if err := json.NewDecoder(strings.NewReader(call)).Decode(&args); err != nil {
		p.t.Fatalf("tools.help's start call for %s: %v: %q", workflow, err, call)
	}
	filled := map[string]any{}
	for k, v := range args.Args {
		if v == "…" {
			if v, ok = intent[k]; !ok {
				p.t.Fatalf("workflow %s asks for %q, which the agent has no value for", workflow, k)
			}
		}
		filled[k] = v
	}
	return map[string]any{"workflow": args.Workflow, "args": filled}
}

// producer is the tool that makes a stage's content: the first of the
// tools the stage lists (its args hint becomes the agent's hint for it),
// else one the last answer's next steps name besides the workflow tools,
// else one the stage's purpose names among those tools.help listed.
func (p *pathAgent) producer(stage map[string]any) string {
	p.t.Helper()
	if tools, _ := stage["tools"].([]any); len(tools) > 0 {
		first, _ := tools[0].(map[string]any)
		tool, _ := first["tool"].(string)
		hint, _ := first["args_hint"].(map[string]any)
		if p.listed[tool] {
			for k, v := range hint {
				if s, ok := v.(string); ok && strings.HasPrefix(s, "<") {
					p.t.Fatalf("stage %v: %s's args hint leaves %s to fill (%s)", stage["name"], tool, k, s)
				}
			}
			p.hints[tool] = hint
			return tool
		}
	}
	for _, tool := range p.latest {
		if !strings.HasPrefix(tool, "workflow.") && p.listed[tool] {
			return tool
		}
	}
	purpose, _ := stage["purpose"].(string)
	for _, w := range strings.FieldsFunc(purpose, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ',' }) {
		if p.listed[w] {
			return w
		}
	}
	p.t.Fatalf("stage %v names no tool that produces its content", stage)
	return ""
}

// fillDotted sets each dotted path of doc (a JSON document) to the
// answer named by its last element.
func fillDotted(t *testing.T, doc map[string]any, paths []string) {
	t.Helper()
	for _, path := range paths {
		parts := strings.Split(path, ".")
		m := doc
		for _, k := range parts[:len(parts)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				t.Fatalf("to_fill names %s, which the document does not have", path)
			}
			m = next
		}
		leaf := parts[len(parts)-1]
		v, ok := answers[leaf]
		if !ok {
			t.Fatalf("to_fill asks for %q, which the agent has no answer for", leaf)
		}
		m[leaf] = v
	}
}

// TestAgentPathNewProjectToGreen: a new LightGBM project brought to a
// green, runnable outcome by the server-checked cursus-new-project
// workflow in at most 7 calls: tools.help (which says how to start it and
// with which arguments), workflow.start, the tool the first stage's purpose
// names for its content (project.init, whose files the agent keeps and
// fills), then one workflow.submit per stage.
func TestAgentPathNewProjectToGreen(t *testing.T) {
	env := newTestEnv(t, nil)
	workspace := env.cfg.Workspace.Root
	before := treeHash(t, workspace)
	p := newPathAgent(t, env, 7)
	intent := map[string]string{"name": "fraud", "framework": "lightgbm"}
	run := p.ok("workflow.start", p.startArgs("cursus-new-project", intent))

	next, _ := run["next"].(map[string]any)
	producer := p.producer(next)
	// Its arguments: the hint's where an answer gave one, the agent's
	// intent for the rest its schema declares.
	args := map[string]any{}
	for k, v := range p.hints[producer] {
		args[k] = v
	}
	for k := range p.schemas[producer] {
		if v, ok := intent[k]; ok {
			args[k] = v
		}
	}
	project := p.ok(producer, args)
	var files map[string]string
	p.decode(project["files"], &files)
	dagPath, _ := project["dag_file"].(string)
	configPath, _ := project["config_template"].(string)
	var dag, config map[string]any
	if err := json.Unmarshal([]byte(files[dagPath]), &dag); err != nil {
		t.Fatalf("%s's files have no DAG at %q: %v", producer, dagPath, err)
	}
	if err := json.Unmarshal([]byte(files[configPath]), &config); err != nil {
		t.Fatalf("%s's files have no config template at %q: %v", producer, configPath, err)
	}
	var toFill []string
	p.decode(project["to_fill"], &toFill)
	fillDotted(t, config, toFill)
	content := map[string]any{"dag": dag, "config": config, "files": files}

	var outcome map[string]any
	for next != nil {
		submit := p.hint("workflow.submit", nil, nil)
		stage := map[string]any{}
		var takes []string
		p.decode(next["takes"], &takes)
		for _, k := range takes {
			if v, ok := content[k]; ok {
				stage[k] = v
			}
		}
		submit["content"] = stage
		res := p.ok("workflow.submit", submit)
		if res["status"] != "passed" && res["status"] != "green" {
			t.Fatalf("stage %v: %v", submit["stage"], res)
		}
		next, _ = res["next"].(map[string]any)
		outcome = res
	}
	p.done()

	if outcome["status"] != "green" {
		t.Fatalf("the run ended %v: %v", outcome["status"], outcome)
	}
	// Green means runnable: no warning that a job would fail (a
	// script's package missing from its image, say).
	warnings, _ := outcome["warnings"].([]any)
	for _, w := range warnings {
		if strings.Contains(fmt.Sprint(w), "fails") {
			t.Errorf("a green outcome says a job would fail: %v", w)
		}
	}
	b := mustJSON(t, outcome["outcome"])
	if !strings.Contains(b, `"Steps"`) || !strings.Contains(b, "LightGBMTraining") {
		t.Errorf("the outcome is not the compiled LightGBM definition: %.300s", b)
	}
	if after := treeHash(t, workspace); after != before {
		t.Errorf("the workspace changed: %s → %s", before, after)
	}
}
