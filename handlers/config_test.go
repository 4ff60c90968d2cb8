package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/registry"
)

// configEnv is a registry with the config tools and the config half of the
// author namespace over a temporary workspace.
func configEnv(t *testing.T) (*registry.Registry, *Deps) {
	t.Helper()
	deps, err := NewDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{},
		func() (registry.Namespace, error) { return configNamespace(deps) },
		func() (registry.Namespace, error) {
			return registry.Namespace{Name: "author", Description: "Config authoring checks.", Tools: authorConfigTools(deps)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range reg.Skipped() {
		t.Fatalf("namespace skipped: %v", e)
	}
	return reg, deps
}

func cfgJSONArg(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// details returns meta.details of a failure.
func cfgDetails(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(res.Encode(), &env); err != nil {
		t.Fatal(err)
	}
	meta, _ := env["meta"].(map[string]any)
	d, _ := meta["details"].(map[string]any)
	return d
}

func cfgWriteFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cfgSampleArgs(t *testing.T, deps *Deps, nodes []string) (map[string]any, map[string]map[string]any) {
	t.Helper()
	res, err := config.Requirements(context.Background(), cfgDAG(nodes), deps.catalogs(t.Context()).Config)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := config.SampleValues(res)
	if len(missing) > 0 {
		t.Fatalf("no samples for %v", missing)
	}
	return base, perNode
}

const twoNodeDAG = `{"nodes":["TabularPreprocessing_training","XGBoostTraining"],"edges":[["TabularPreprocessing_training","XGBoostTraining"]]}`

func TestConfigRequirements(t *testing.T) {
	reg, deps := configEnv(t)
	data := answer[configRequirementsOut](t, call(t, reg, "config.requirements", `{"dag":`+twoNodeDAG+`}`))
	base := data.Template.Base
	for _, f := range []string{"author", "bucket", "role", "region", "service_name", "pipeline_version"} {
		if _, ok := base[f]; !ok {
			t.Errorf("template base lacks %s: %v", f, base)
		}
	}
	tp, ok := data.Template.PerNode["TabularPreprocessing_training"]
	if _, asked := tp["job_type"]; !ok || asked {
		t.Errorf("per_node = %v: job_type comes from the node name and should not be asked for", data.Template.PerNode)
	}
	if data.ConfigClassMap["XGBoostTraining"] != "XGBoostTrainingConfig" {
		t.Errorf("class map = %v", data.ConfigClassMap)
	}
	// The summary describes each asked-for field once and gives every
	// other settable field's default; the full form lists every field.
	_, author := data.Required["author"]
	if f := data.Required["label_field"]; f.Type != "string" || f.Description == "" || !author {
		t.Errorf("required = %v", data.Required)
	}
	if opt := data.Optional; opt == nil || opt.PerNode["XGBoostTraining"] == nil {
		t.Errorf("optional = %+v", opt)
	} else if _, ok := opt.Shared["source_dir"]; !ok {
		t.Errorf("optional = %+v", opt)
	}
	if data.BaseConfigRequirements != nil || data.Nodes != nil || data.Detail != "summary" {
		t.Errorf("the summary carries the full form's keys")
	}
	data = answer[configRequirementsOut](t, call(t, reg, "config.requirements", `{"detail": "full", "dag":`+twoNodeDAG+`}`))
	if data.Detail != "full" || data.Nodes == nil || len(*data.Nodes) != 2 || data.Required != nil {
		t.Errorf("detail full: %+v", data)
	}
	// Cursus's keys say the same: base fields include the template's,
	// every node has its own list and is pending, and a processing node
	// brings processing fields.
	if data.BaseConfigRequirements == nil || data.StepRequirements == nil || data.PendingSteps == nil ||
		data.NeedsProcessingConfig == nil || data.BaseProcessingConfigRequirements == nil {
		t.Fatalf("detail full lacks Cursus's keys: %+v", data.cursusKeys)
	}
	names := map[string]bool{}
	for _, f := range *data.BaseConfigRequirements {
		names[f.Name] = true
	}
	for f := range base {
		if !names[f] {
			t.Errorf("base_config_requirements lacks the template's %s", f)
		}
	}
	steps, pending := *data.StepRequirements, *data.PendingSteps
	if len(steps) != 2 || len(pending) != 2 || len(steps["XGBoostTraining"]) == 0 {
		t.Errorf("step_requirements = %v, pending_steps = %v", steps, pending)
	}
	if !*data.NeedsProcessingConfig || len(*data.BaseProcessingConfigRequirements) == 0 {
		t.Errorf("a TabularPreprocessing node needs processing fields: %v", *data.NeedsProcessingConfig)
	}
	// The wrapped form and a file work too.
	mustOK(t, call(t, reg, "config.requirements", `{"dag":{"dag":`+twoNodeDAG+`}}`))
	cfgWriteFile(t, deps.Root.Dir(), "pc/dag.json", `{"dag":`+twoNodeDAG+`}`)
	mustOK(t, call(t, reg, "config.requirements", `{"dag_file":"pc/dag.json"}`))

	res := call(t, reg, "config.requirements", `{"dag":{"nodes":["XGBoostTraining","Nope_x"],"edges":[]}}`)
	mustOK(t, res)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "Nope_x") {
		t.Errorf("warnings = %v", res.Warnings)
	}

	mustFail(t, call(t, reg, "config.requirements", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag":`+twoNodeDAG+`,"dag_file":"pc/dag.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag":"x"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag":{"nodes":"x"}}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag_file":"missing.json"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "config.requirements", `{"dag_file":"../../etc/passwd"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag_file":"/etc/passwd"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag":`+twoNodeDAG+`,"extra":1}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.requirements", `{"dag":{"nodes":[],"edges":[]}}`), registry.CodeInvalidInput)
}

func TestConfigFieldInfo(t *testing.T) {
	reg, _ := configEnv(t)
	data := answer[configFieldInfoOut](t, call(t, reg, "config.field_info", `{"config_class":"XGBoostTrainingConfig"}`))
	if data.StepType != "XGBoostTraining" || data.Requirements == nil || len(*data.Requirements) == 0 {
		t.Fatalf("data = %+v", data)
	}
	if first := (*data.Requirements)[0]; first.Name != "author" || first.Tier != "essential" || first.Source != "base" {
		t.Errorf("first field = %+v", first)
	}
	data = answer[configFieldInfoOut](t, call(t, reg, "config.field_info", `{"config_class":"TabularPreprocessing","categorized":true}`))
	if data.Required == nil || len(*data.Required) == 0 || data.Derived == nil || len(*data.Derived) == 0 {
		t.Errorf("categorized = %+v", data)
	}
	res := call(t, reg, "config.field_info", `{"config_class":"XGBoostTrainingConfg"}`)
	d := failure[struct {
		Available   []string `json:"available"`
		Suggestions []string `json:"suggestions"`
	}](t, res, registry.CodeNotFound)
	if len(d.Available) == 0 || !slices.Contains(d.Suggestions, "XGBoostTraining") {
		t.Errorf("details = %+v", d)
	}
	mustFail(t, call(t, reg, "config.field_info", `{"config_class":""}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.field_info", `{"config_class":3}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.field_info", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.field_info", `{"config_class":"`+strings.Repeat("A", 5000)+`"}`), registry.CodeInvalidInput)
}

func TestConfigMergeSaveAndLoad(t *testing.T) {
	reg, deps := configEnv(t)
	nodes := []string{"TabularPreprocessing_training", "XGBoostTraining"}
	base, perNode := cfgSampleArgs(t, deps, nodes)
	args := map[string]any{"dag": json.RawMessage(twoNodeDAG), "base": base, "per_node": perNode, "created_at": "2025-01-01T00:00:00Z"}

	// Without output_file: the document comes back, nothing is written.
	data := answer[configMergeSaveOut](t, call(t, reg, "config.merge_save", cfgJSONArg(t, args)))
	if data.Written != nil {
		t.Errorf("written = %v", *data.Written)
	}
	var doc struct {
		Metadata struct {
			CreatedAt string `json:"created_at"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data.Document.RawMessage, &doc); err != nil || doc.Metadata.CreatedAt != "2025-01-01T00:00:00Z" {
		t.Errorf("document = %s (%v)", data.Document.RawMessage, err)
	}
	entries, _ := os.ReadDir(deps.Root.Dir())
	if len(entries) != 0 {
		t.Errorf("files written without output_file: %v", entries)
	}

	args["output_file"] = "pipeline_config/config_NA.json"
	data = answer[configMergeSaveOut](t, call(t, reg, "config.merge_save", cfgJSONArg(t, args)))
	first, err := os.ReadFile(filepath.Join(deps.Root.Dir(), "pipeline_config/config_NA.json"))
	if err != nil {
		t.Fatal(err)
	}
	if data.Written == nil || *data.Written != "pipeline_config/config_NA.json" || data.Bytes != len(first) {
		t.Errorf("data = %+v", data)
	}
	// Never overwrite unless asked.
	mustFail(t, call(t, reg, "config.merge_save", cfgJSONArg(t, args)), registry.CodeAlreadyExists)
	args["overwrite"] = true
	mustOK(t, call(t, reg, "config.merge_save", cfgJSONArg(t, args)))
	second, _ := os.ReadFile(filepath.Join(deps.Root.Dir(), "pipeline_config/config_NA.json"))
	if !bytes.Equal(first, second) {
		t.Error("same inputs gave different bytes")
	}

	// config.load reads it back.
	loaded := answer[configLoadOut](t, call(t, reg, "config.load", `{"config_file":"pipeline_config/config_NA.json"}`))
	if loaded.StepCount != 2 || loaded.SharedFieldCount == 0 {
		t.Errorf("load = %+v", loaded)
	}
	loaded = answer[configLoadOut](t, call(t, reg, "config.load", `{"path":"pipeline_config/config_NA.json","include_values":true}`))
	tp := loaded.Steps["TabularPreprocessing_training"]
	if tp.JobType != "training" || tp.Values == nil || (*tp.Values)["job_type"] != "training" {
		t.Errorf("step = %+v", tp)
	}

	// Without a DAG the per_node keys are the nodes.
	delete(args, "dag")
	delete(args, "output_file")
	mustOK(t, call(t, reg, "config.merge_save", cfgJSONArg(t, args)))
}

func TestConfigMergeSaveProblems(t *testing.T) {
	reg, deps := configEnv(t)
	base := map[string]any{"author": "jdoe", "bucket": "Bad_Bucket", "role": "arn:aws:iam::123456789012:role/R",
		"region": "XX", "service_name": "svc", "enable_caching": "yes", "procesing_volume_size": 3}
	args := map[string]any{"dag": json.RawMessage(twoNodeDAG), "base": base,
		"per_node": map[string]any{"XGBoostTraining": map[string]any{"training_instance_count": 0}}, "output_file": "out.json"}
	res := call(t, reg, "config.merge_save", cfgJSONArg(t, args))
	probs := failure[configProblemsDetails](t, res, registry.CodeConfigInvalid).Problems
	kinds := map[string]bool{}
	for _, p := range probs {
		kinds[p.Kind] = true
	}
	for _, k := range []string{"missing", "pattern", "enum", "type", "range", "unknown"} {
		if !kinds[k] {
			t.Errorf("no %s problem in %v", k, probs)
		}
	}
	if _, err := os.Stat(filepath.Join(deps.Root.Dir(), "out.json")); err == nil {
		t.Error("an invalid config was written")
	}
}

func TestConfigHostileInput(t *testing.T) {
	reg, deps := configEnv(t)
	base, perNode := cfgSampleArgs(t, deps, []string{"XGBoostModel"})
	dagArg := json.RawMessage(`{"nodes":["XGBoostModel"],"edges":[]}`)
	outside := filepath.Join(filepath.Dir(deps.Root.Dir()), "escaped.json")
	for name, out := range map[string]string{"dotdot": "../escaped.json", "absolute": outside} {
		res := call(t, reg, "config.merge_save", cfgJSONArg(t, map[string]any{"dag": dagArg, "base": base, "per_node": perNode, "output_file": out}))
		mustFail(t, res, registry.CodeInvalidInput)
		if _, err := os.Stat(outside); err == nil {
			t.Fatalf("%s: wrote outside the workspace", name)
		}
	}
	// A symlink leaving the workspace is refused too.
	if err := os.Symlink(filepath.Dir(deps.Root.Dir()), filepath.Join(deps.Root.Dir(), "link")); err == nil {
		mustFail(t, call(t, reg, "config.merge_save", cfgJSONArg(t, map[string]any{"dag": dagArg, "base": base, "output_file": "link/escaped.json"})), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, "config.load", `{"config_file":"link/x.json"}`), registry.CodeInvalidInput)
	}

	deep := any("x")
	for i := 0; i < 200; i++ {
		deep = map[string]any{"k": deep}
	}
	hostile := map[string]any{}
	for k, v := range base {
		hostile[k] = v
	}
	hostile["tags"] = deep
	hostile["author"] = strings.Repeat("a", config.MaxStringLen+10)
	res := call(t, reg, "config.merge_save", cfgJSONArg(t, map[string]any{"dag": dagArg, "base": hostile, "output_file": "h.json"}))
	mustFail(t, res, registry.CodeConfigInvalid)
	if len(res.Error) > 500 || strings.Contains(fmt.Sprint(cfgDetails(t, res)), strings.Repeat("a", 200)) {
		t.Error("the enormous value is echoed back")
	}
	mustFail(t, call(t, reg, "config.merge_save", `{"dag":{"nodes":["XGBoostModel"]},"base":"x"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.merge_save", `{"dag":{"nodes":["XGBoostModel"]},"per_node":{"XGBoostModel":3}}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.merge_save", `{"base":{}}`), registry.CodeInvalidInput)
	entries, _ := os.ReadDir(deps.Root.Dir())
	for _, e := range entries {
		if e.Name() != "link" {
			t.Errorf("file written on error: %s", e.Name())
		}
	}

	// config.load: escapes, missing files, non-config JSON, invalid values.
	mustFail(t, call(t, reg, "config.load", `{"config_file":"../x.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.load", `{"config_file":"/etc/passwd"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.load", `{"config_file":"nope.json"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "config.load", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.load", `{"config_file":"a.json","path":"b.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "config.load", `{"config_file":7}`), registry.CodeInvalidInput)
	cfgWriteFile(t, deps.Root.Dir(), "junk.json", `[1,2`)
	mustFail(t, call(t, reg, "config.load", `{"config_file":"junk.json"}`), registry.CodeInvalidInput)
	cfgWriteFile(t, deps.Root.Dir(), "bad.json", `{"configuration":{"shared":{},"specific":{"XGBoostModel":{"__model_type__":"XGBoostModelStepConfig","region":"Mars"}}},"metadata":{"config_types":{"XGBoostModel":"XGBoostModelStepConfig"}}}`)
	res = call(t, reg, "config.load", `{"config_file":"bad.json"}`)
	if probs := failure[configProblemsDetails](t, res, registry.CodeConfigInvalid).Problems; len(probs) != 6 { // region + five missing essentials
		t.Errorf("problems = %+v", probs)
	}
}

// TestConfigMergeSaveWritesOnlyThroughTheGate: on the default policy a
// remote caller gets the document, and the same call with output_file is
// refused as a write (nothing written) with the read-only way named.
func TestConfigMergeSaveWritesOnlyThroughTheGate(t *testing.T) {
	reg, deps := configEnv(t)
	const values = `"dag": {"nodes": ["XGBoostModel"], "edges": []}, "base": {"author": "jdoe", "bucket": "my-bucket", ` +
		`"role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}`
	data := answer[configMergeSaveOut](t, callRemote(t, reg, "config.merge_save", `{`+values+`}`))
	if data.Written != nil || len(data.Document.RawMessage) == 0 {
		t.Fatalf("written = %v, document = %s", data.Written, data.Document.RawMessage)
	}
	res := callRemote(t, reg, "config.merge_save", `{`+values+`, "output_file": "config.json"}`)
	details := failure[gateDetails](t, res, registry.CodeToolDisabled)
	if details.Alternative == nil || details.Alternative.Tool != "config.merge_save" || details.Gate != "writes" {
		t.Errorf("details = %+v", details)
	}
	if _, err := os.Stat(filepath.Join(deps.Root.Dir(), "config.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("config.json: %v, want not written", err)
	}
}

// Acceptance: every built-in shared DAG goes requirements → sample values →
// merge_save (written) → load, and the written bytes are stable.
func TestConfigSharedDAGsThroughTools(t *testing.T) {
	reg, deps := configEnv(t)
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range cat.List() {
		d := e.DAG()
		dagJSON := cfgJSONArg(t, map[string]any{"nodes": d.Nodes, "edges": d.Edges})
		req := answer[configRequirementsOut](t, call(t, reg, "config.requirements", `{"dag":`+dagJSON+`}`))
		if len(req.Unresolved) > 0 {
			t.Errorf("%s: unresolved %+v", e.ID, req.Unresolved)
			continue
		}
		base, perNode := cfgSampleArgs(t, deps, d.Nodes)
		out := fmt.Sprintf("cfg/%02d.json", i)
		args := cfgJSONArg(t, map[string]any{"dag": json.RawMessage(dagJSON), "base": base, "per_node": perNode,
			"output_file": out, "created_at": "2025-01-01T00:00:00Z"})
		mustOK(t, call(t, reg, "config.merge_save", args))
		first, _ := os.ReadFile(filepath.Join(deps.Root.Dir(), out))
		loaded := answer[configLoadOut](t, call(t, reg, "config.load", `{"config_file":"`+out+`"}`))
		if loaded.StepCount != len(d.Nodes) {
			t.Errorf("%s: %d steps for %d nodes", e.ID, loaded.StepCount, len(d.Nodes))
		}
		var overwrite map[string]any
		_ = json.Unmarshal([]byte(args), &overwrite)
		overwrite["overwrite"] = true
		mustOK(t, call(t, reg, "config.merge_save", cfgJSONArg(t, overwrite)))
		second, _ := os.ReadFile(filepath.Join(deps.Root.Dir(), out))
		if !bytes.Equal(first, second) {
			t.Errorf("%s: bytes differ across runs", e.ID)
		}
	}
}

// configProblemsDetails is config_invalid's details from config.merge_save
// and config.load: each problem with its field, kind and message.
type configProblemsDetails struct {
	Path         string `json:"path"`
	ProblemCount int    `json:"problem_count"`
	Problems     []struct {
		Node    string `json:"node"`
		Field   string `json:"field"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"problems"`
}

// gateDetails is the details of a call a gate refuses.
type gateDetails struct {
	Gate           string                `json:"gate"`
	RequiredScope  string                `json:"required_scope"`
	WriteArguments []string              `json:"write_arguments"`
	Setting        string                `json:"setting"`
	Alternative    *registry.Alternative `json:"alternative"`
}
