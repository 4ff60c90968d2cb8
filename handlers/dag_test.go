package handlers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

const dagTrain = `"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"], "edges": [["DummyDataLoading_training", "TabularPreprocessing_training"], ["TabularPreprocessing_training", "XGBoostTraining"]]`

func TestDAGConstruct(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[dagDocument](t, call(t, reg, "dag.construct", `{`+dagTrain+`, "metadata": {"name": "demo"}}`))
	if data.Version != "1.0.0" || data.CreatedAt != nil {
		t.Errorf("document head = %v / %v", data.Version, data.CreatedAt)
	}
	if stats := data.Statistics; stats.MaxDepth != 2 || stats.HasCycles {
		t.Errorf("stats = %+v", stats)
	}
	if m := data.Mermaid; !strings.HasPrefix(m, "flowchart TD\n") || !strings.Contains(m, ":::source") {
		t.Errorf("mermaid = %q", m)
	}
	res := call(t, reg, "dag.construct", `{"nodes": ["A", "B"], "edges": [["A", "B"], ["B", "A"]]}`)
	mustOK(t, res)
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "cycle") {
		t.Errorf("warnings = %v", res.Warnings)
	}
	for _, bad := range []string{
		`{"nodes": "A"}`,
		`{"nodes": ["A"], "edges": [["A"]]}`,
		`{"nodes": ["A"], "edges": [["A", "B", "C"]]}`,
		`{"nodes": ["../etc/passwd"]}`,
		`{"nodes": ["A"], "metadata": []}`,
		`{"nodes": ["` + strings.Repeat("A", 300) + `"]}`,
	} {
		mustFail(t, call(t, reg, "dag.construct", bad), registry.CodeInvalidInput)
	}
}

func TestDAGValidateIntegrity(t *testing.T) {
	reg, _ := newTestRegistry(t)
	mustOK(t, call(t, reg, "dag.validate_integrity", `{`+dagTrain+`}`))

	res := call(t, reg, "dag.validate_integrity", `{"nodes": ["TabularPreprocessing_training", "XGBoostTraining", "Package"], "edges": [["TabularPreprocessing_training", "XGBoostTraining"], ["XGBoostTraining", "Package"], ["Package", "XGBoostTraining"]]}`)
	mustFail(t, res, registry.CodeValidationFailed)
	if !strings.Contains(res.Error, "XGBoostTraining -> Package -> XGBoostTraining") {
		t.Errorf("cycle not named: %s", res.Error)
	}
	res = call(t, reg, "dag.validate_integrity", `{"nodes": ["TabularPreprocessing", "XGBoostTraining"], "edges": [["TabularPreprocessing", "XGBoostTrainng"]]}`)
	if details := failure[map[string]any](t, res, registry.CodeValidationFailed); len(details) == 0 {
		t.Fatalf("no details: %v", res.Meta)
	}
	enc := string(res.Encode())
	if !strings.Contains(enc, `"edge":["TabularPreprocessing","XGBoostTrainng"]`) || !strings.Contains(enc, "dangling_dependencies") {
		t.Errorf("dangling edge not reported with the edge: %s", enc)
	}
	res = call(t, reg, "dag.validate_integrity", `{"nodes": ["XGBoostTrainin", "DummyDataLoading_training", "TabularPreprocessing_training"], "edges": [["TabularPreprocessing_training", "DummyDataLoading_training"], ["TabularPreprocessing_training", "XGBoostTrainin"]]}`)
	mustFail(t, res, registry.CodeValidationFailed)
	enc = string(res.Encode())
	for _, want := range []string{"missing_steps", "XGBoostTraining", "node_type_rules", "source step"} {
		if !strings.Contains(enc, want) {
			t.Errorf("report lacks %q: %s", want, enc)
		}
	}
}

func TestDAGResolvePlan(t *testing.T) {
	reg, _ := newTestRegistry(t)
	res := call(t, reg, "dag.resolve_plan", `{`+dagTrain+`, "include_breakdown": true}`)
	data := answer[wiringPlan](t, res)
	order := fmt.Sprint(data.ExecutionOrder)
	if order != "[DummyDataLoading_training TabularPreprocessing_training XGBoostTraining]" {
		t.Errorf("order = %v", order)
	}
	// step_configs (the Cursus key) holds an empty object for exactly the
	// nodes of execution_order.
	enc := string(res.Encode())
	if len(data.StepConfigs) != len(data.ExecutionOrder) {
		t.Errorf("step_configs = %v, want one entry per node of %v", data.StepConfigs, order)
	}
	for _, n := range data.ExecutionOrder {
		if _, ok := data.StepConfigs[n]; !ok || !strings.Contains(enc, `"`+n+`":{}`) {
			t.Errorf("step_configs[%s] is not {}: %s", n, enc)
		}
	}
	for _, want := range []string{
		`"Get":"Steps.TabularPreprocessing-Training.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"`,
		`"dependency":"input_path"`, `"semantic_similarity"`, `"is_complete":true`, `processed_data → input_path`,
	} {
		if !strings.Contains(enc, want) {
			t.Errorf("plan lacks %s: %s", want, enc)
		}
	}
	// A required dependency with nothing to feed it: reported with reason.
	res = call(t, reg, "dag.resolve_plan", `{"nodes": ["TabularPreprocessing_training", "Package"], "edges": [["TabularPreprocessing_training", "Package"]]}`)
	data = answer[wiringPlan](t, res)
	if data.IsComplete || !strings.Contains(strings.Join(res.Warnings, "\n"), "Package.model_input (model_artifacts) is unresolved: no output of an upstream node has a compatible type") {
		t.Errorf("unresolved not reported: %v %v", data.Unresolved, res.Warnings)
	}
	res = call(t, reg, "dag.resolve_plan", `{"nodes": ["A", "B"], "edges": [["A", "B"], ["B", "A"]]}`)
	mustFail(t, res, registry.CodeValidationFailed)
	if !strings.Contains(res.Error, "A -> B -> A") {
		t.Errorf("cycle not named: %s", res.Error)
	}
}

func TestDAGDependencies(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[nodeNeighbours](t, call(t, reg, "dag.dependencies", `{"step": "B", "nodes": ["A", "B", "C"], "edges": [["A", "B"], ["B", "C"]]}`))
	if fmt.Sprint(data.Dependencies) != "[A]" || fmt.Sprint(data.Dependents) != "[C]" {
		t.Errorf("data = %+v", data)
	}
	res := call(t, reg, "dag.dependencies", `{"step": "Z", "nodes": ["A"]}`)
	mustFail(t, res, registry.CodeNotFound)
	mustFail(t, call(t, reg, "dag.dependencies", `{"nodes": ["A"]}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "dag.dependencies", `{"step": "", "nodes": ["A"]}`), registry.CodeInvalidInput)
}

func TestDAGSerializeRoundTrip(t *testing.T) {
	reg, dir := newTestRegistry(t)
	data := answer[dagSerialized](t, call(t, reg, "dag.serialize", `{`+dagTrain+`, "path": "pipeline_config/dag.json", "metadata": {"name": "demo", "n": 3}}`))
	if data.Path != filepath.Join("pipeline_config", "dag.json") {
		t.Errorf("path = %v", data.Path)
	}
	first, err := os.ReadFile(filepath.Join(dir, "pipeline_config", "dag.json"))
	if err != nil {
		t.Fatal(err)
	}
	back := answer[dagFile](t, call(t, reg, "dag.deserialize", `{"path": "pipeline_config/dag.json"}`))
	if back.Metadata["name"] != "demo" {
		t.Errorf("metadata = %v", back.Metadata)
	}
	// Serialise what was read back; the bytes must be identical.
	again := answer[dagSerialized](t, call(t, reg, "dag.serialize", `{`+dagTrain+`, "metadata": {"name": "demo", "n": 3}}`))
	if again.JSON != string(first) {
		t.Errorf("round trip differs:\n%s\n---\n%s", first, again.JSON)
	}
	// Overwrite is refused unless asked.
	mustFail(t, call(t, reg, "dag.serialize", `{`+dagTrain+`, "path": "pipeline_config/dag.json"}`), registry.CodeAlreadyExists)
	mustOK(t, call(t, reg, "dag.serialize", `{`+dagTrain+`, "path": "pipeline_config/dag.json", "overwrite": true, "pretty": false}`))
	compact, _ := os.ReadFile(filepath.Join(dir, "pipeline_config", "dag.json"))
	if strings.Contains(string(compact), "\n  ") {
		t.Errorf("pretty false still indented")
	}
	// Invalid DAGs are not written.
	res := call(t, reg, "dag.serialize", `{"nodes": ["A", "B"], "edges": [["A", "B"], ["B", "A"]], "path": "cyclic.json"}`)
	mustFail(t, res, registry.CodeValidationFailed)
	mustFail(t, call(t, reg, "dag.serialize", `{"nodes": [], "path": "empty.json"}`), registry.CodeInvalidInput)
	for _, f := range []string{"cyclic.json", "empty.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

func TestDAGSerializeConfinement(t *testing.T) {
	reg, dir := newTestRegistry(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(outside, "abs.json"),
		"../outside.json",
		"a/../../outside.json",
		"escape/through_dir.json",
		"link.json",
	} {
		res := call(t, reg, "dag.serialize", `{"nodes": ["A"], "path": "`+p+`"}`)
		if res.OK || (res.Code != registry.CodeInvalidInput && res.Code != registry.CodeAlreadyExists) {
			t.Errorf("path %q: ok=%v code=%s", p, res.OK, res.Code)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Errorf("files written outside the workspace: %v", entries)
	}
	// Remote callers cannot write while writes are disabled.
	res := callRemote(t, reg, "dag.serialize", `{"nodes": ["A"], "path": "remote.json"}`)
	if res.OK {
		t.Errorf("remote write allowed")
	}
	if _, err := os.Stat(filepath.Join(dir, "remote.json")); err == nil {
		t.Error("remote call wrote a file")
	}
}

func TestDAGDeserializeErrors(t *testing.T) {
	reg, dir := newTestRegistry(t)
	mustFail(t, call(t, reg, "dag.deserialize", `{"path": "nope.json"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "dag.deserialize", `{"path": "../../etc/passwd"}`), registry.CodeInvalidInput)
	for name, body := range map[string]string{
		"bad.json":     `{not json`,
		"v2.json":      `{"version": "2.0.0", "dag": {"nodes": ["A"], "edges": []}}`,
		"nodag.json":   `{"something": 1}`,
		"badedge.json": `{"dag": {"nodes": ["A"], "edges": [["A"]]}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		res := call(t, reg, "dag.deserialize", `{"path": "`+name+`"}`)
		mustFail(t, res, registry.CodeInvalidInput)
		if !strings.Contains(res.Error, name) {
			t.Errorf("%s: error does not name the file: %s", name, res.Error)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "flat.json"), []byte(`{"nodes": ["A", "B"], "edges": [["A", "B"]]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := answer[dagFile](t, call(t, reg, "dag.deserialize", `{"path": "flat.json"}`))
	if data.Version != nil || len(data.Nodes) != 2 {
		t.Errorf("flat = %+v", data)
	}
}

func TestDAGMermaid(t *testing.T) {
	reg, _ := newTestRegistry(t)
	m := answer[dagMermaidOut](t, call(t, reg, "dag.mermaid", `{`+dagTrain+`, "wiring": true}`)).Mermaid
	if !strings.Contains(m, `TabularPreprocessing_training -->|"processed_data → input_path"| XGBoostTraining`) {
		t.Errorf("mermaid = %s", m)
	}
	mustFail(t, call(t, reg, "dag.mermaid", `{"nodes": ["Nope"], "wiring": true}`), registry.CodeValidationFailed)
	mustOK(t, call(t, reg, "dag.mermaid", `{"nodes": ["Nope"]}`))
}
