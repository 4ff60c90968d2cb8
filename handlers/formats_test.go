package handlers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/registry"
)

// servedSchema compiles the schema steps.format serves for format.
func servedSchema(t *testing.T, reg *registry.Registry, format string) *jsonschema.Schema {
	t.Helper()
	data := catOK(t, call(t, reg, "steps.format", `{"format": "`+format+`"}`))
	raw, err := json.Marshal(data["schema"])
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(format+".json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(format + ".json")
	if err != nil {
		t.Fatalf("served %s schema does not compile: %v", format, err)
	}
	return s
}

// yamlAsJSON reads YAML text as the JSON value it denotes.
func yamlAsJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every built-in .step.yaml, as steps.source serves it, is valid against
// the served step_yaml schema, and the schema refuses what the loader
// refuses: a key of the wrong shape.
func TestServedStepYAMLSchemaHoldsForEveryBuiltin(t *testing.T) {
	deps, reg := newDepsRegistry(t, Options{})
	schema := servedSchema(t, reg, formatStepYAML)
	names := deps.catalogs(t.Context()).Steps.Names()
	if len(names) < 20 {
		t.Fatalf("only %d built-in step types", len(names))
	}
	for _, n := range names {
		src := catOK(t, call(t, reg, "steps.source", `{"step_name": "`+n+`"}`))
		if !strings.HasPrefix(src["source"].(string), "builtin:") {
			t.Fatalf("%s: source %v", n, src["source"])
		}
		if err := schema.Validate(yamlAsJSON(t, src["yaml"].(string))); err != nil {
			t.Errorf("%s does not validate against the served schema: %v", n, err)
		}
	}
	for _, bad := range []string{"step_type: Broken\ncontract: {}\nspec: [1]\n", "contract: {}\n", "step_type: bad_name\ncontract: {}\n", "step_type: X\ncontract: {}\nnode_type: middle\n"} {
		if err := schema.Validate(yamlAsJSON(t, bad)); err == nil {
			t.Errorf("the schema accepts %q", bad)
		}
	}
}

// The example project's config.json is valid against the served
// config_json schema, and a document without config types is not.
func TestServedConfigJSONSchemaHoldsForTheExample(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	schema := servedSchema(t, reg, formatConfigJSON)
	raw, err := os.ReadFile(filepath.Join("..", "examples", "xgboost-tabular", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("the example config.json does not validate: %v", err)
	}
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"configuration": {"specific": {"A": {}}}, "metadata": {"config_types": {"A": 1}}}`))
	if err := schema.Validate(bad); err == nil {
		t.Fatal("the schema accepts a config class that is not a string")
	}
}

// steps.source returns a step sent in step_types as it was sent.
func TestStepsSourceOfAStepTypeSent(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	doc := shapStep("ShapExplain", "explanations")
	src := catOK(t, call(t, reg, "steps.source", stepTypesArgs(t, []string{doc}, map[string]any{"step_name": "ShapExplain"})))
	if src["yaml"] != doc || src["source"] != "step_types[0]" {
		t.Fatalf("source: %v", src)
	}
}

// catalog.step_spec names port types as the YAML does (type), and keeps
// the reference's dependency_type and output_type with the same value.
func TestStepSpecPortTypesUseTheYAMLKey(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	spec := catOK(t, call(t, reg, "catalog.step_spec", `{"step_name": "XGBoostTraining"}`))
	for _, d := range catList(t, spec["dependencies"]) {
		if m := catMap(t, d); m["type"] == nil || m["type"] != m["dependency_type"] {
			t.Fatalf("dependency: %v", m)
		}
	}
	for _, o := range catList(t, spec["outputs"]) {
		if m := catMap(t, o); m["type"] != "model_artifacts" && m["type"] != "processing_output" || m["type"] != m["output_type"] {
			t.Fatalf("output: %v", m)
		}
	}
}
