package compiler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
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
		// A model repack the compiler added is a Training step whose
		// repacked archive its node reads.
		for _, added := range s.AddedSteps {
			smTypes[added] = steps.SMTraining
			paths[added] = map[string]bool{"ModelArtifacts.S3ModelArtifacts": true}
		}
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

// The best trial's model is addressed as the SDK's get_top_model_s3_uri
// does (<tuning output path>/<best job name>/output/model.tar.gz) and
// repacked with the inference code before the PyTorch model and the
// registration use it: the PyTorch serving container loads handlers only
// from code/ inside the archive. Both containers point at code/.
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
			DependsOn  []string
			Arguments  map[string]any
		}
	}
	if err := json.Unmarshal(res.JSON, &def); err != nil {
		t.Fatal(err)
	}
	best := `{"Std:Join":{"On":"/","Values":[{"Get":"Parameters.EXECUTION_S3_PREFIX"},{"Get":"Execution.PipelineExecutionId"},"pytorch_tuning",` +
		`{"Get":"Steps.PyTorchTuning.TrainingJobSummaries[0].TrainingJobName"},"output/model.tar.gz"]}}`
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	repacks := map[string]map[string]any{}
	seen := map[string]int{}
	var model, register map[string]any
	for i, s := range def.Steps {
		seen[s.Name] = i
		switch {
		case strings.HasSuffix(s.Name, "-RepackModel"):
			repacks[s.Name] = s.Arguments
			if s.Type != "Training" {
				t.Errorf("%s is a %s step", s.Name, s.Type)
			}
		case s.Type == "Model":
			model = s.Arguments["PrimaryContainer"].(map[string]any)
			if !slices.Contains(s.DependsOn, "PyTorchModel-RepackModel") {
				t.Errorf("PyTorchModel DependsOn %v lacks its repack", s.DependsOn)
			}
		case s.Type == "RegisterModel":
			register = s.Arguments["InferenceSpecification"].(map[string]any)["Containers"].([]any)[0].(map[string]any)
		case s.Type == "Transform":
			if got := js(s.Arguments["ModelName"]); got != `{"Get":"Steps.PyTorchModel.ModelName"}` {
				t.Errorf("Transform ModelName = %s", got)
			}
		}
	}
	for _, name := range []string{"PyTorchModel-RepackModel", "Registration-RepackModel"} {
		args, ok := repacks[name]
		if !ok {
			t.Fatalf("no %s step among %v", name, slices.Collect(maps.Keys(seen)))
		}
		channels := args["InputDataConfig"].([]any)
		training := channels[0].(map[string]any)
		if training["ChannelName"] != "training" || js(training["DataSource"].(map[string]any)["S3DataSource"].(map[string]any)["S3Uri"]) != best {
			t.Errorf("%s training channel = %s, want the best trial's model %s", name, js(training), best)
		}
		if code := channels[1].(map[string]any); code["ChannelName"] != "code" {
			t.Errorf("%s has no code channel: %s", name, js(channels))
		}
		hp := args["HyperParameters"].(map[string]any)
		if hp["sagemaker_program"] != `"_repack_model.py"` || hp["inference_script"] != `"inference.py"` {
			t.Errorf("%s hyperparameters %s", name, js(hp))
		}
		image := args["AlgorithmSpecification"].(map[string]any)["TrainingImage"]
		if image != "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3" {
			t.Errorf("%s image %v, want the SDK's repack image (sklearn 1.2-1)", name, image)
		}
	}
	for typ, c := range map[string]map[string]any{"Model": model, "RegisterModel": register} {
		if c == nil {
			t.Fatalf("no %s step", typ)
		}
		repack := "PyTorchModel-RepackModel"
		if typ == "RegisterModel" {
			repack = "Registration-RepackModel"
		}
		if got, want := js(c["ModelDataUrl"]), `{"Get":"Steps.`+repack+`.ModelArtifacts.S3ModelArtifacts"}`; got != want {
			t.Errorf("%s ModelDataUrl = %s, want %s", typ, got, want)
		}
		env, _ := c["Environment"].(map[string]any)
		if env["SAGEMAKER_SUBMIT_DIRECTORY"] != "/opt/ml/model/code" || env["SAGEMAKER_PROGRAM"] != "inference.py" ||
			env["SAGEMAKER_CONTAINER_LOG_LEVEL"] != "20" || env["SAGEMAKER_REGION"] != "us-east-1" {
			t.Errorf("%s Environment = %s", typ, js(env))
		}
	}
	if seen["PyTorchModel-RepackModel"] > seen["PyTorchModel"] || seen["Registration-RepackModel"] > seen["Registration"] {
		t.Error("a repack step comes after the step that reads it")
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
			want := `{"Std:Join":{"On":"/","Values":[{"Get":"Parameters.EXECUTION_S3_PREFIX"},{"Get":"Execution.PipelineExecutionId"},"` + steps.CanonicalToSnake(tuning) + `",` +
				`{"Get":"Steps.` + tuning + `.TrainingJobSummaries[0].TrainingJobName"},"output/model.tar.gz"]}}`
			if n := strings.Count(string(res.JSON), want); n != len(nodes)-3 {
				t.Errorf("%d consumers read the best model as %s, want %d:\n%s", n, want, len(nodes)-3, res.JSON)
			}
		})
	}
}
