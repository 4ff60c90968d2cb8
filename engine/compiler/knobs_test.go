package compiler

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/strategies"
)

// editedCatalog serves edited interfaces in place of the built-in ones.
type editedCatalog struct {
	Catalog
	edited map[string]*steps.Interface
}

func (c editedCatalog) Get(stepType string) (*steps.Interface, bool) {
	if iface, ok := c.edited[stepType]; ok {
		return iface, true
	}
	return c.Catalog.Get(stepType)
}

// editedStepArgs compiles the end-to-end DAG with file (a built-in step file)
// edited by edit (nil: as built in), and returns the JSON of the named pipeline step's
// arguments.
func editedStepArgs(t *testing.T, file string, edit func(string) string, step string) string {
	t.Helper()
	data, err := os.ReadFile("../steps/catalog/" + file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if edit != nil {
		if doc = edit(doc); doc == string(data) {
			t.Fatalf("%s: the edit changed nothing", file)
		}
	}
	iface, err := steps.Parse(file, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if fs := steps.Validate(iface); finding.AnyBlocking(fs) {
		t.Fatalf("edited %s does not validate: %+v", file, fs)
	}
	in := sampleInput(t, e2eDAG())
	c, _ := fixtures(t)
	in.Catalog = editedCatalog{Catalog: c, edited: map[string]*steps.Interface{iface.StepType: iface}}
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Steps []struct {
			Name      string
			Arguments json.RawMessage
		}
	}
	if err := json.Unmarshal(res.JSON, &def); err != nil {
		t.Fatal(err)
	}
	for _, s := range def.Steps {
		if s.Name == step {
			return string(s.Arguments)
		}
	}
	t.Fatalf("no step %s in the definition", step)
	return ""
}

// Every knob author.rules lists (steps.PathKnobs) changes the compiled
// definition as the rules say.
func TestPathKnobsChangeTheCompiledDefinition(t *testing.T) {
	const prep, xgb = "tabular_preprocessing.step.yaml", "xgboost_training.step.yaml"
	setToken := func(token string) func(string) string {
		return func(s string) string {
			return strings.Replace(s, "\ncontract:\n", "\ncontract:\n  output_path_token: "+token+"\n", 1)
		}
	}
	noJobType := func(s string) string {
		return strings.Replace(s, "include_job_type_in_path: true", "include_job_type_in_path: false", 1)
	}
	cases := []struct {
		knob, name, file, step string
		edit                   func(string) string
		// want and absent are substrings of the step's arguments.
		want, absent []string
	}{
		{"contract.output_path_token", "unset: step type lower-cased, then job type", prep, "TabularPreprocessing-Training", nil,
			[]string{`"tabularpreprocessing","training","processed_data"`}, nil},
		{"contract.output_path_token", "set: the token replaces the step-type segment", prep, "TabularPreprocessing-Training", setToken("prep_out"),
			[]string{`"prep_out","training","processed_data"`}, []string{"tabularpreprocessing"}},
		{"contract.output_path_token", "unset: a training job writes under its snake_case step type", xgb, "XGBoostTraining", nil,
			[]string{`"xgboost_training"`}, nil},
		{"contract.output_path_token", "set: a training job writes under the token", xgb, "XGBoostTraining", setToken("xgb_models"),
			[]string{`"xgb_models"`}, []string{`"xgboost_training"`}},
		{"patterns.include_job_type_in_path", "false: the job type is dropped", prep, "TabularPreprocessing-Training", noJobType,
			[]string{`"tabularpreprocessing","processed_data"`}, []string{`"training","processed_data"`}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		t.Run(c.knob+"/"+c.name, func(t *testing.T) {
			covered[c.knob] = true
			args := editedStepArgs(t, c.file, c.edit, c.step)
			for _, w := range c.want {
				if !strings.Contains(args, w) {
					t.Errorf("arguments lack %s: %s", w, args)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(args, a) {
					t.Errorf("arguments still have %s: %s", a, args)
				}
			}
		})
	}
	for _, k := range steps.PathKnobs {
		if !covered[k.Field] {
			t.Errorf("author.rules lists knob %s, which no case here exercises", k.Field)
		}
	}
}

// The output path token steps.patterns reports is the one the compiler
// uses: written into the step file, it leaves the definition unchanged.
func TestReportedOutputPathTokenIsTheCompiledOne(t *testing.T) {
	c, _ := fixtures(t)
	base, err := Compile(context.Background(), sampleInput(t, e2eDAG()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, node := range e2eDAG().Nodes {
		stepType, _, _ := strings.Cut(node, "_")
		if seen[stepType] {
			continue
		}
		seen[stepType] = true
		iface, _ := c.Get(stepType)
		v := strategies.Default().Describe(iface)
		if v.Patterns.Outputs.Sink {
			continue
		}
		data, err := os.ReadFile("../steps/catalog/" + strings.TrimPrefix(iface.Source, steps.BuiltinPrefix))
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Replace(string(data), "\ncontract:\n", "\ncontract:\n  output_path_token: "+v.Patterns.Outputs.OutputPathToken+"\n", 1)
		edited, err := steps.Parse(iface.Source, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		in := sampleInput(t, e2eDAG())
		in.Catalog = editedCatalog{Catalog: c, edited: map[string]*steps.Interface{stepType: edited}}
		res, err := Compile(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if string(res.JSON) != string(base.JSON) {
			t.Errorf("%s: steps.patterns reports output_path_token %q, but writing it changes the compiled definition", stepType, v.Patterns.Outputs.OutputPathToken)
		}
	}
}
