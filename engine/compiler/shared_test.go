package compiler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
	"github.com/cursus-dev/cursus/engine/steps"
)

// Acceptance: every built-in shared DAG, with configs from the config
// requirements and sample values, compiles to a definition that validates
// against the SDK schema, compiles to the same bytes twice, and only
// references outputs its producers have.
func TestSharedDAGsCompile(t *testing.T) {
	cat, probs, err := pipelines.Load()
	if err != nil || len(probs) > 0 {
		t.Fatalf("pipelines: %v %v", err, probs)
	}
	if len(cat.List()) == 0 {
		t.Fatal("no shared DAGs")
	}
	for _, e := range cat.List() {
		t.Run(e.ID, func(t *testing.T) {
			in := sampleInput(t, e.DAG())
			res, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			sagemakertest.MustValidate(t, res.JSON)
			again, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.JSON, again.JSON) {
				t.Fatal("two compiles of the same input differ")
			}
			checkReferences(t, in, res)
			if len(res.Steps) != len(e.DAG().Nodes) {
				t.Fatalf("%d steps for %d nodes", len(res.Steps), len(e.DAG().Nodes))
			}
		})
	}
}

// checkReferences walks every Get in the definition: parameters must be
// declared, execution variables known, and step references must name an
// earlier step and a property path one of that step type's outputs has.
func checkReferences(t *testing.T, in Input, res *Result) {
	t.Helper()
	refs, err := sagemaker.References(res.JSON)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]bool{}
	for _, p := range res.Definition.Parameters {
		params[p.Name] = true
	}
	paths := map[string]map[string]bool{} // step name → property paths of its outputs
	smTypes := map[string]string{}        // step name → SageMaker step type
	c, _ := fixtures(t)
	for _, s := range res.Steps {
		iface, _, err := c.ForJobType(s.StepType, s.JobType)
		if err != nil {
			t.Fatal(err)
		}
		smTypes[s.StepName] = iface.Registry.SageMakerStepType
		m := map[string]bool{}
		for _, name := range iface.Spec.Outputs.Keys() {
			o, _ := iface.Spec.Outputs.Get(name)
			m[sagemaker.TrimPropertiesPrefix(o.PropertyPath)] = true
		}
		paths[s.StepName] = m
	}
	stepRefs := 0
	for _, r := range refs {
		switch {
		case strings.HasPrefix(r, "Parameters."):
			if !params[strings.TrimPrefix(r, "Parameters.")] {
				t.Errorf("reference to undeclared parameter %s", r)
			}
		case strings.HasPrefix(r, "Execution."):
			if v := strings.TrimPrefix(r, "Execution."); v != "PipelineName" && v != "PipelineExecutionId" {
				t.Errorf("unknown execution variable %s", r)
			}
		case strings.HasPrefix(r, "Steps."):
			stepRefs++
			rest := strings.TrimPrefix(r, "Steps.")
			dot := strings.Index(rest, ".")
			name, path := rest[:dot], rest[dot+1:]
			outs, ok := paths[name]
			if !ok {
				t.Errorf("reference %s names no step", r)
				continue
			}
			if !outs[path] {
				t.Errorf("reference %s: step %s has no output with property path %s", r, name, path)
			}
			if known, ok, nearest := steps.CheckPropertyPath(smTypes[name], path); !known || !ok {
				t.Errorf("reference %s: %s is not in the response shape of a %s step (table known: %v; nearest %v)",
					r, path, smTypes[name], known, nearest)
			}
		default:
			t.Errorf("unexpected reference %s", r)
		}
	}
	if len(in.DAG.Edges) > 0 && stepRefs == 0 {
		t.Error("a DAG with edges compiled without any step reference")
	}
}

// The best trial's model feeds CreateModel and RegisterModel as the SDK's
// get_top_model_s3_uri addresses it: <tuning output path>/<best job
// name>/output/model.tar.gz.
func TestTunedModelFeedsCreateModelAndRegistration(t *testing.T) {
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := cat.Get("pytorch_tuning_e2e")
	if !ok {
		t.Fatal("no pytorch_tuning_e2e shared DAG")
	}
	res, err := Compile(context.Background(), sampleInput(t, e.DAG()))
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	var def struct {
		Steps []struct {
			Name, Type string
			Arguments  map[string]any
		}
	}
	if err := json.Unmarshal(res.JSON, &def); err != nil {
		t.Fatal(err)
	}
	want := `{"Std:Join":{"On":"/","Values":[{"Get":"Parameters.EXECUTION_S3_PREFIX"},"pytorch_tuning",` +
		`{"Get":"Steps.PyTorchTuning.TrainingJobSummaries[0].TrainingJobName"},"output/model.tar.gz"]}}`
	got := map[string]string{}
	for _, s := range def.Steps {
		var v any
		switch s.Type {
		case "Model":
			v = s.Arguments["PrimaryContainer"].(map[string]any)["ModelDataUrl"]
		case "RegisterModel":
			v = s.Arguments["InferenceSpecification"].(map[string]any)["Containers"].([]any)[0].(map[string]any)["ModelDataUrl"]
		case "Transform":
			v = s.Arguments["ModelName"]
		default:
			continue
		}
		b, _ := json.Marshal(v)
		got[s.Type] = string(b)
	}
	for _, typ := range []string{"Model", "RegisterModel"} {
		if got[typ] != want {
			t.Errorf("%s ModelDataUrl = %s, want %s", typ, got[typ], want)
		}
	}
	if got["Transform"] != `{"Get":"Steps.PyTorchModel.ModelName"}` {
		t.Errorf("Transform ModelName = %s", got["Transform"])
	}
}

// overrideCatalog serves one interface in place of the built-in one, as a
// catalog that skipped validation would.
type overrideCatalog struct {
	Catalog
	iface *steps.Interface
}

func (c overrideCatalog) Get(stepType string) (*steps.Interface, bool) {
	if stepType == c.iface.StepType {
		return c.iface, true
	}
	return c.Catalog.Get(stepType)
}

// The compiler refuses to reference a property the producer's SageMaker
// step type does not have, even when the interface was never validated.
func TestCompileRejectsInventedPropertyPaths(t *testing.T) {
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, _ := cat.Get("pytorch_tuning_e2e")
	in := sampleInput(t, e.DAG())
	c, _ := fixtures(t)
	data, err := os.ReadFile("../steps/catalog/pytorch_tuning.step.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), "      property_path: properties.TrainingJobSummaries[0].TrainingJobName\n      job_artifact: output/model.tar.gz\n",
		"      property_path: properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts\n", 1)
	bad, err := steps.Parse("pytorch_tuning.step.yaml", []byte(doc)) // parsed, not validated
	if err != nil {
		t.Fatal(err)
	}
	in.Catalog = overrideCatalog{Catalog: c, iface: bad}

	_, err = Compile(context.Background(), in)
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("compiled: err %v", err)
	}
	for _, want := range []string{"Steps.PyTorchTuning.BestTrainingJob.ModelArtifacts.S3ModelArtifacts", "not a property of a Tuning step",
		"nearest valid paths: properties.BestTrainingJob."} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// Every framework's tuning step feeds its best model to a CreateModel step
// (where the framework has one) and to Registration.
func TestEveryTuningStepFeedsItsBestModel(t *testing.T) {
	for tuning, model := range map[string]string{"XGBoostTuning": "XGBoostModel", "PyTorchTuning": "PyTorchModel", "LightGBMTuning": ""} {
		t.Run(tuning, func(t *testing.T) {
			nodes := []string{"DummyDataLoading_training", "TabularPreprocessing_training", tuning, "Registration"}
			edges := [][2]string{{"DummyDataLoading_training", "TabularPreprocessing_training"}, {"TabularPreprocessing_training", tuning}, {tuning, "Registration"}}
			if model != "" {
				nodes = append(nodes, model)
				edges = append(edges, [2]string{tuning, model})
			}
			in := sampleInput(t, dag.New(nodes, edges))
			res, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			sagemakertest.MustValidate(t, res.JSON)
			checkReferences(t, in, res)
			want := `{"Std:Join":{"On":"/","Values":[{"Get":"Parameters.EXECUTION_S3_PREFIX"},"` + steps.CanonicalToSnake(tuning) + `",` +
				`{"Get":"Steps.` + tuning + `.TrainingJobSummaries[0].TrainingJobName"},"output/model.tar.gz"]}}`
			if n := strings.Count(string(res.JSON), want); n != len(nodes)-3 {
				t.Errorf("%d consumers read the best model as %s, want %d:\n%s", n, want, len(nodes)-3, res.JSON)
			}
		})
	}
}
