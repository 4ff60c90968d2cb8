package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cursus-dev/cursus/registry"
)

// goldenPath overrides a tool's examples where none of them can succeed
// in the test workspace (a copy of examples/xgboost-tabular).
var goldenPath = map[string][]string{
	// config, compile, execdoc, author (config half): the examples name
	// files of a user's project.
	"config.load": {
		`{"config_file": "examples/xgboost-tabular/config.json"}`,
		`{"path": "examples/xgboost-tabular/config.json", "include_values": true}`,
	},
	// dag.*: the integrity example fails on purpose (a typo), and the file
	// the deserialize example reads exists only after dag.serialize ran.
	"dag.validate_integrity": {
		`{"nodes": ["TabularPreprocessing", "XGBoostTraining"], "edges": [["TabularPreprocessing", "XGBoostTrainng"]]}`,
		`{"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"], "edges": [["DummyDataLoading_training", "TabularPreprocessing_training"], ["TabularPreprocessing_training", "XGBoostTraining"]]}`,
	},
	"dag.deserialize": {`{"path": "pipeline_config/dag.json"}`, `{"path": "examples/xgboost-tabular/dag.json"}`},
	// validate, author (steps half): the check_script examples name script
	// directories of a user's project; the example project has its own.
	"author.check_script": {
		`{"step_name": "TabularPreprocessing", "source_dir": "scripts"}`,
		`{"step_name": "TabularPreprocessing", "source_dir": "examples/xgboost-tabular/scripts"}`,
		`{"step_name": "XGBoostTraining", "script_path": "examples/xgboost-tabular/scripts/xgboost_training.py"}`,
	},
	"validate.alignment": {
		`{"target_scripts": ["TabularPreprocessing"], "source_dir": "examples/xgboost-tabular/scripts"}`,
		`{}`,
	},
}

// TestEveryToolAnswersItsOutputSchema runs every tool's golden-path call
// (its examples, or the override above) in a workspace holding the example
// project and checks that every envelope it answers — successes and
// failures — validates against the tool's outputSchema, that the data of
// every success validates against the whole data schema, and that at
// least one call succeeds.
func TestEveryToolAnswersItsOutputSchema(t *testing.T) {
	// compile.dag's deploy example upserts: to the loopback fake.
	reg, _ := exampleRegistry(t, fakeAWS(t).URL())
	for _, tool := range reg.Tools("") {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.OutputSchema() == nil {
				t.Fatal("no outputSchema")
			}
			schema := compileSchema(t, tool.Name+".output", tool.OutputSchema())
			dataSchema := compileSchema(t, tool.Name+".data", tool.DataSchema())
			calls := goldenPath[tool.Name]
			if calls == nil {
				calls = exampleArgsOf(tool)
			}
			calls = withRunToken(t, reg, calls)
			succeeded := 0
			for _, args := range calls {
				res := call(t, reg, tool.Name, args)
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.Encode()))
				if err != nil {
					t.Fatalf("%s: envelope is not JSON: %v", args, err)
				}
				if err := schema.Validate(doc); err != nil {
					t.Errorf("%s: envelope does not match the outputSchema: %v\n%s", args, err, res.Encode())
				}
				if res.OK {
					succeeded++
					if err := dataSchema.Validate(doc.(map[string]any)["data"]); err != nil {
						t.Errorf("%s: data does not match the data schema: %v\n%s", args, err, res.Encode())
					}
				}
			}
			if succeeded == 0 {
				t.Errorf("no golden-path call succeeded (tried %d)", len(calls))
			}
		})
	}
}

func exampleArgsOf(tool *registry.ToolDef) []string {
	var out []string
	for _, ex := range tool.Examples {
		_, rest, _ := strings.Cut(ex, " ")
		body, _, _ := strings.Cut(rest, "  #")
		out = append(out, strings.TrimSpace(body))
	}
	return out
}

func compileSchema(t *testing.T, name string, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "cursus:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s schema does not compile: %v", name, err)
	}
	return s
}

// TestGoldenPathsGuideReadOnlyCallersToOpenTools runs every tool's
// golden-path calls (as TestEveryToolAnswersItsOutputSchema does, in the
// example project's workspace) as a remote caller of the default,
// read-only policy: no answer, success or failure, names another tool
// closed to that caller, in its next steps and their args hints, its
// remedy, or anywhere else in the envelope. (A refusal names the tool the
// caller asked for.)
func TestGoldenPathsGuideReadOnlyCallersToOpenTools(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	remote := registry.Caller{Remote: true}
	closedOtherThan := func(self *registry.ToolDef) *regexp.Regexp {
		var names []string
		for _, tool := range reg.Tools("") {
			if tool != self && !reg.Admit(remote, tool).Allowed {
				names = append(names, regexp.QuoteMeta(tool.Name), regexp.QuoteMeta(tool.WireName()))
			}
		}
		return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	}
	succeeded, steps := 0, 0
	for _, tool := range reg.Tools("") {
		closed := closedOtherThan(tool)
		calls := goldenPath[tool.Name]
		if calls == nil {
			calls = exampleArgsOf(tool)
		}
		for _, args := range calls {
			res := callRemote(t, reg, tool.Name, args)
			if res.OK {
				succeeded++
			}
			steps += len(res.NextSteps)
			guidance := res.Encode()
			if tool.Name == "project.init" {
				// The project's files (its README's checklist) are a
				// document for whoever works on the project, the same
				// whether returned or written: the envelope around them
				// is what guides this caller.
				var env map[string]any
				_ = json.Unmarshal(guidance, &env)
				if data, ok := env["data"].(map[string]any); ok {
					delete(data, "files")
				}
				guidance, _ = json.Marshal(env)
			}
			if m := closed.Find(guidance); m != nil {
				t.Errorf("%s %s names %q to a read-only caller:\n%.2000s", tool.Name, args, m, res.Encode())
			}
		}
	}
	if succeeded < 60 || steps < 60 {
		t.Fatalf("only %d calls succeeded with %d next steps", succeeded, steps)
	}
}

// withRunToken puts a fresh run's token where a workflow example says
// "<token>": a run token is made by the server, so no example can hold one.
func withRunToken(t *testing.T, reg *registry.Registry, calls []string) []string {
	t.Helper()
	out := make([]string, len(calls))
	for i, args := range calls {
		if strings.Contains(args, `"<token>"`) {
			run := mustOK(t, call(t, reg, "workflow.start", `{"workflow": "cursus-configure-pipeline"}`))["run"].(string)
			args = strings.ReplaceAll(args, `"<token>"`, `"`+run+`"`)
		}
		out[i] = args
	}
	return out
}

// TestTextAndArgumentsBindAlike runs every read-only tool's golden-path
// calls twice, binding the input once from the arguments (as MCP and
// in-process calls do) and once from the JSON text they were decoded from
// (as REST does), and finds the same envelope both times: the tool got
// the same input either way.
func TestTextAndArgumentsBindAlike(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	compared := 0
	for _, tool := range reg.Tools("") {
		if !tool.ReadOnly() {
			continue
		}
		calls := goldenPath[tool.Name]
		if calls == nil {
			calls = exampleArgsOf(tool)
		}
		for i := range calls {
			// A run token moves its run once: each binding gets its own.
			text := withRunToken(t, reg, calls[i:i+1])[0]
			args, bad := registry.DecodeArgs([]byte(text))
			if bad != nil {
				t.Fatalf("%s %s: %s", tool.Name, text, bad.Error)
			}
			fromArgs := sansRunToken(envelopeSansTiming(t, reg.Call(context.Background(), tool.Name, args)))
			text = withRunToken(t, reg, calls[i:i+1])[0]
			args, _ = registry.DecodeArgs([]byte(text)) // a fresh copy: a handler may keep what it was given
			fromText := sansRunToken(envelopeSansTiming(t, reg.CallJSON(context.Background(), tool.Name, args, []byte(text))))
			if !reflect.DeepEqual(fromArgs, fromText) {
				t.Errorf("%s %s:\nfrom the arguments: %v\nfrom the text:      %v", tool.Name, text, fromArgs, fromText)
			}
			compared++
		}
	}
	t.Logf("compared %d calls", compared)
	if compared < 50 {
		t.Fatalf("compared %d calls, want every read-only tool's golden path", compared)
	}
}

// sansRunToken drops the run tokens a workflow answer holds: each is
// unique (its nonce), so two equal answers differ there.
func sansRunToken(env map[string]any) map[string]any {
	if data, ok := env["data"].(map[string]any); ok {
		delete(data, "run")
	}
	if steps, ok := env["next_steps"].([]any); ok {
		for _, s := range steps {
			if hint, ok := s.(map[string]any)["args_hint"].(map[string]any); ok {
				delete(hint, "run")
			}
		}
	}
	return env
}

func envelopeSansTiming(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(res.Encode(), &env); err != nil {
		t.Fatal(err)
	}
	if meta, ok := env["meta"].(map[string]any); ok {
		delete(meta, "duration_ms")
	}
	return env
}
