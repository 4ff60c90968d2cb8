package compiler

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// Acceptance tests of issue 29: per class of run-time misbehaviour, the
// affected shared DAGs (and config variants) compile to the corrected
// request, or are refused with a finding naming field, value and fix.

// sharedInput is the shared DAG's sample input with values set on every
// node (all) and on named nodes (per).
func sharedInput(t *testing.T, id string, all map[string]any, per map[string]map[string]any) Input {
	t.Helper()
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := cat.Get(id)
	if !ok {
		t.Fatalf("no shared DAG %s", id)
	}
	extra := map[string]map[string]any{}
	for _, n := range e.DAG().Nodes {
		extra[n] = map[string]any{}
		for k, v := range all {
			extra[n][k] = v
		}
		for k, v := range per[n] {
			extra[n][k] = v
		}
	}
	return sampleInputWith(t, e.DAG(), extra)
}

type decodedStep struct {
	Name      string         `json:"Name"`
	Type      string         `json:"Type"`
	DependsOn []string       `json:"DependsOn"`
	Arguments map[string]any `json:"Arguments"`
}

// compileShared compiles, validates against the SDK schema and decodes.
func compileShared(t *testing.T, in Input) (*Result, []decodedStep) {
	t.Helper()
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	var def struct{ Steps []decodedStep }
	if err := json.Unmarshal(res.JSON, &def); err != nil {
		t.Fatal(err)
	}
	return res, def.Steps
}

func stepsOfType(steps []decodedStep, typ string) []decodedStep {
	var out []decodedStep
	for _, s := range steps {
		if s.Type == typ {
			out = append(out, s)
		}
	}
	return out
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// refusal compiles in and returns the build error, failing when it
// compiles or fails otherwise; Validate must report the same finding.
func refusal(t *testing.T, in Input, node string, mentions ...string) {
	t.Helper()
	_, err := Compile(context.Background(), in)
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("compiled or failed otherwise: %v", err)
	}
	if be.Node != node {
		t.Errorf("refused node %s, want %s: %v", be.Node, node, err)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("finding %q does not say %q", err, m)
		}
	}
	v := Validate(context.Background(), in)
	if v.IsValid || !strings.Contains(strings.Join(v.ConfigErrors[node], "\n"), mentions[0]) {
		t.Errorf("compile.validate does not report it: %+v", v.ConfigErrors)
	}
}

// Class 1: registered models carry the serving environment the SDK sets,
// so the XGBoost image imports the configured inference code.
func TestIssue29RegisteredModelsCarryServingEnvironment(t *testing.T) {
	for _, id := range []string{"xgboost_complete_e2e", "pytorch_complete_e2e", "lightgbm_complete_e2e", "pytorch_tuning_e2e"} {
		t.Run(id, func(t *testing.T) {
			// A registration from a Package step names the program the
			// package's code/ holds; one the compiler repacks uses the
			// built-in inference code, whose entry point is inference.py.
			program := "serve.py"
			if id == "pytorch_tuning_e2e" {
				program = "inference.py"
			}
			_, steps := compileShared(t, sharedInput(t, id, nil, map[string]map[string]any{"Registration": {"inference_entry_point": program}}))
			regs := stepsOfType(steps, "RegisterModel")
			if len(regs) != 1 {
				t.Fatalf("%d RegisterModel steps", len(regs))
			}
			env, _ := at(regs[0].Arguments, "InferenceSpecification", "Containers", 0, "Environment").(map[string]any)
			want := map[string]any{"SAGEMAKER_PROGRAM": program, "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code",
				"SAGEMAKER_CONTAINER_LOG_LEVEL": "20", "SAGEMAKER_REGION": "us-east-1"}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("Environment[%s] = %v, want %v (%s)", k, env[k], v, jsonOf(env))
				}
			}
		})
	}
}

// Class 2: a model archive straight from a training or tuning job is
// repacked with its inference code before a PyTorch model or a
// registration uses it; an archive a Package step built is used as is.
func TestIssue29ModelsServeCodeInsideTheArchive(t *testing.T) {
	cases := map[string]struct{ model, register string }{
		"pytorch_e2e_with_model_creation": {model: "Steps.PyTorchModel-RepackModel.ModelArtifacts.S3ModelArtifacts"},
		"pytorch_tuning_e2e": {model: "Steps.PyTorchModel-RepackModel.ModelArtifacts.S3ModelArtifacts",
			register: "Steps.Registration-RepackModel.ModelArtifacts.S3ModelArtifacts"},
		"xgboost_e2e_with_model_creation": {}, // the XGBoost image fetches the code from S3: no repack
		"pytorch_complete_e2e":            {register: "Steps.Package.ProcessingOutputConfig.Outputs['packaged_model'].S3Output.S3Uri"},
	}
	for id, want := range cases {
		t.Run(id, func(t *testing.T) {
			res, steps := compileShared(t, sharedInput(t, id, nil, nil))
			for _, s := range steps {
				var got string
				switch s.Type {
				case "Model":
					if want.model == "" {
						continue
					}
					got = jsonOf(at(s.Arguments, "PrimaryContainer", "ModelDataUrl"))
					if !strings.Contains(got, want.model) {
						t.Errorf("%s ModelDataUrl %s, want %s", s.Name, got, want.model)
					}
				case "RegisterModel":
					if want.register == "" {
						continue
					}
					got = jsonOf(at(s.Arguments, "InferenceSpecification", "Containers", 0, "ModelDataUrl"))
					if !strings.Contains(got, want.register) {
						t.Errorf("%s ModelDataUrl %s, want %s", s.Name, got, want.register)
					}
				}
			}
			repacks := 0
			for _, r := range res.Steps {
				repacks += len(r.AddedSteps)
			}
			if wantRepacks := strings.Count(want.model+want.register, "RepackModel"); repacks != wantRepacks {
				t.Errorf("%d repack steps, want %d", repacks, wantRepacks)
			}
		})
	}
}

// Class 3: batch transform filters and joins records as configured.
func TestIssue29TransformDataProcessing(t *testing.T) {
	for _, id := range []string{"pytorch_tuning_e2e", "pytorch_e2e_with_model_creation", "xgboost_e2e_with_model_creation"} {
		t.Run(id, func(t *testing.T) {
			_, steps := compileShared(t, sharedInput(t, id, nil, nil))
			tr := stepsOfType(steps, "Transform")
			if len(tr) == 0 {
				t.Fatal("no Transform step")
			}
			for _, s := range tr {
				if got := jsonOf(s.Arguments["DataProcessing"]); got != `{"InputFilter":"$[1:]","JoinSource":"Input","OutputFilter":"$"}` {
					t.Errorf("%s DataProcessing %s", s.Name, got)
				}
			}
		})
	}
	in := sharedInput(t, "xgboost_e2e_with_model_creation", nil, map[string]map[string]any{
		"BatchTransform_testing": {"join_source": "None", "input_filter": "$[2:]", "output_filter": "$[0,-1]"}})
	_, steps := compileShared(t, in)
	for _, s := range stepsOfType(steps, "Transform") {
		if got := jsonOf(s.Arguments["DataProcessing"]); got != `{"InputFilter":"$[2:]","JoinSource":"None","OutputFilter":"$[0,-1]"}` {
			t.Errorf("%s DataProcessing %s", s.Name, got)
		}
	}
}

// Class 4: a caller's LightGBM source folder without requirements.txt is
// reported: the PyTorch image has no lightgbm.
func TestIssue29LightGBMRequirementsFinding(t *testing.T) {
	for _, withReq := range []bool{false, true} {
		in := sharedInput(t, "lightgbm_simple_training", nil, map[string]map[string]any{"LightGBMTraining": {"source_dir": "lgbm"}})
		files := fstest.MapFS{"lgbm/lightgbm_training.py": {Data: []byte("print(1)\n")}, "lgbm/hyperparams/hyperparameters.json": {Data: []byte("{}")}}
		if withReq {
			files["lgbm/requirements.txt"] = &fstest.MapFile{Data: []byte("lightgbm>=4.0\n")}
		}
		in.Sources = files
		res, err := Compile(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range res.Warnings {
			found = found || (strings.Contains(w, "lightgbm>=4.0") && strings.Contains(w, "requirements.txt") && strings.Contains(w, "LightGBMTraining"))
		}
		if found == withReq {
			t.Errorf("requirements.txt present %v: finding reported %v (%q)", withReq, found, res.Warnings)
		}
		v := Validate(context.Background(), in)
		if strings.Contains(strings.Join(v.Warnings, "\n"), "no requirements.txt") == withReq {
			t.Errorf("compile.validate warnings (requirements.txt present %v): %q", withReq, v.Warnings)
		}
	}
}

// Class 5: tuning settings SageMaker rejects are refused; Grid with
// categorical ranges compiles without MaxNumberOfTrainingJobs.
func TestIssue29TuningSettingsSageMakerRejects(t *testing.T) {
	tune := func(vals map[string]any) Input {
		return sharedInput(t, "xgboost_hyperparameter_tuning", nil, map[string]map[string]any{"XGBoostTuning": vals})
	}
	t.Run("hyperband_auto", func(t *testing.T) {
		refusal(t, tune(map[string]any{"tuning_strategy": "Hyperband", "early_stopping_type": "Auto"}), "XGBoostTuning",
			`early_stopping_type "Auto"`, "Hyperband", `early_stopping_type: "Off"`)
	})
	t.Run("grid_continuous", func(t *testing.T) {
		refusal(t, tune(map[string]any{"tuning_strategy": "Grid"}), "XGBoostTuning", "tuning_strategy Grid", "(continuous)", "categorical")
	})
	t.Run("objective_without_metric", func(t *testing.T) {
		refusal(t, tune(map[string]any{"objective_metric_name": "validation:logloss"}), "XGBoostTuning",
			`objective_metric_name "validation:logloss"`, "validation:auc")
	})
	t.Run("grid_categorical", func(t *testing.T) {
		_, steps := compileShared(t, tune(map[string]any{"tuning_strategy": "Grid",
			"search_space": map[string]any{"categorical": []any{map[string]any{"name": "max_depth", "values": []any{int64(3), int64(6)}}}}}))
		cfg := stepsOfType(steps, "Tuning")[0].Arguments["HyperParameterTuningJobConfig"].(map[string]any)
		if got := jsonOf(cfg["ResourceLimits"]); got != `{"MaxParallelTrainingJobs":1}` || cfg["Strategy"] != "Grid" {
			t.Errorf("Grid ResourceLimits %s strategy %v", got, cfg["Strategy"])
		}
		res, err := Compile(context.Background(), tune(map[string]any{"tuning_strategy": "Grid", "max_jobs": int64(50),
			"search_space": map[string]any{"categorical": []any{map[string]any{"name": "max_depth", "values": []any{int64(3), int64(6)}}}}}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(res.Warnings, "\n"), "config field max_jobs is not sent with tuning_strategy Grid") {
			t.Errorf("an explicit max_jobs with Grid is not reported: %q", res.Warnings)
		}
	})
	t.Run("hyperband_off", func(t *testing.T) {
		_, steps := compileShared(t, tune(map[string]any{"tuning_strategy": "Hyperband"}))
		cfg := stepsOfType(steps, "Tuning")[0].Arguments["HyperParameterTuningJobConfig"].(map[string]any)
		if cfg["Strategy"] != "Hyperband" || cfg["TrainingJobEarlyStoppingType"] != "Off" {
			t.Errorf("Hyperband config %s", jsonOf(cfg))
		}
	})
}

// Class 6: images for every region the SDK table has, the processor of
// the instance that runs the image, Graviton, and transform instance
// types from the API's list.
func TestIssue29Images(t *testing.T) {
	for region, accounts := range map[string][]string{
		"EU": {"eu-west-1", "141502667606"}, "FE": {"us-west-2", "246618743249"},
		"ap-southeast-3": {"ap-southeast-3"}, "eu-central-2": {"eu-central-2"}, "cn-north-1": {"amazonaws.com.cn"},
	} {
		for _, id := range []string{"xgboost_complete_e2e", "pytorch_complete_e2e", "lightgbm_complete_e2e"} {
			t.Run(region+"/"+id, func(t *testing.T) {
				res, _ := compileShared(t, sharedInput(t, id, map[string]any{"region": region}, nil))
				for _, a := range accounts {
					if !strings.Contains(string(res.JSON), a) {
						t.Errorf("no image of %s in the definition", a)
					}
				}
			})
		}
	}
	t.Run("region_without_images", func(t *testing.T) {
		refusal(t, sharedInput(t, "xgboost_simple_training", map[string]any{"region": "mx-central-1"}, nil), "DummyDataLoading_training",
			"not published in this region", "eu-west-1", "image_uri")
	})
	t.Run("gpu_transform", func(t *testing.T) {
		_, steps := compileShared(t, sharedInput(t, "pytorch_e2e_with_model_creation", nil,
			map[string]map[string]any{"BatchTransform_testing": {"transform_instance_type": "ml.g5.xlarge"}}))
		image := at(stepsOfType(steps, "Model")[0].Arguments, "PrimaryContainer", "Image").(string)
		if !strings.Contains(image, "pytorch-inference:") || !strings.Contains(image, "-gpu-") {
			t.Errorf("model image %s: want the GPU inference image of the transform's instance", image)
		}
	})
	t.Run("graviton_transform_refused", func(t *testing.T) {
		refusal(t, sharedInput(t, "xgboost_e2e_with_model_creation", nil, map[string]map[string]any{"BatchTransform_testing": {"transform_instance_type": "ml.c7g.xlarge"}}), "BatchTransform_testing",
			`transform_instance_type: "ml.c7g.xlarge" is not a batch transform instance type`, "no Graviton")
	})
	t.Run("graviton_registration", func(t *testing.T) {
		_, steps := compileShared(t, sharedInput(t, "pytorch_complete_e2e", nil,
			map[string]map[string]any{"Registration": {"inference_instance_types": []any{"ml.c7g.xlarge"}}}))
		image := at(stepsOfType(steps, "RegisterModel")[0].Arguments, "InferenceSpecification", "Containers", 0, "Image").(string)
		if !strings.Contains(image, "pytorch-inference-graviton:2.1.0-cpu-py310-ubuntu20.04-sagemaker") {
			t.Errorf("image %s: want the Graviton inference image", image)
		}
	})
	t.Run("graviton_xgboost_1_7_refused", func(t *testing.T) {
		refusal(t, sharedInput(t, "xgboost_complete_e2e", nil, map[string]map[string]any{"Registration": {"inference_instance_types": []any{"ml.m7g.large"}}}),
			"Registration", "no Graviton (arm64) image for this version", "1.5-1")
	})
	t.Run("graviton_training_refused", func(t *testing.T) {
		refusal(t, sharedInput(t, "pytorch_simple_training", nil, map[string]map[string]any{"PyTorchTraining": {"training_instance_type": "ml.c7g.4xlarge"}}),
			"PyTorchTraining", "Graviton (arm64) instances have no training image")
	})
}

// Class 7: outputs are scoped by the execution id unless the config keeps
// the fixed layout.
func TestIssue29ExecutionScopedOutputs(t *testing.T) {
	for _, scoped := range []bool{true, false} {
		var all map[string]any
		if !scoped {
			all = map[string]any{ExecutionScopedField: false}
		}
		for _, id := range []string{"xgboost_complete_e2e", "pytorch_tuning_e2e"} {
			_, steps := compileShared(t, sharedInput(t, id, all, nil))
			outputs := 0
			for _, s := range steps {
				var paths []any
				switch s.Type {
				case "Processing":
					for _, o := range at(s.Arguments, "ProcessingOutputConfig", "Outputs").([]any) {
						paths = append(paths, at(o, "S3Output", "S3Uri"))
					}
				case "Training":
					paths = append(paths, at(s.Arguments, "OutputDataConfig", "S3OutputPath"))
				case "Tuning":
					paths = append(paths, at(s.Arguments, "TrainingJobDefinition", "OutputDataConfig", "S3OutputPath"))
				case "Transform":
					paths = append(paths, at(s.Arguments, "TransformOutput", "S3OutputPath"))
				}
				for _, p := range paths {
					outputs++
					values := at(p, "Std:Join", "Values").([]any)
					has := jsonOf(values[1]) == `{"Get":"Execution.PipelineExecutionId"}`
					if jsonOf(values[0]) != `{"Get":"Parameters.EXECUTION_S3_PREFIX"}` || has != scoped {
						t.Errorf("%s %s (scoped %v): output %s", id, s.Name, scoped, jsonOf(p))
					}
				}
			}
			if outputs == 0 {
				t.Fatalf("%s: no outputs", id)
			}
		}
	}
}

// Class 8: training and tuning jobs get the region in their environment;
// the config's tags reach every request and the pipeline.
func TestIssue29EnvironmentAndTags(t *testing.T) {
	in := sharedInput(t, "pytorch_tuning_e2e", map[string]any{"region": "EU", "tags": map[string]any{"team": "risk", "cost-center": "42"}}, nil)
	res, steps := compileShared(t, in)
	for _, s := range steps {
		var env any
		switch s.Type {
		case "Training":
			env = s.Arguments["Environment"]
		case "Tuning":
			env = at(s.Arguments, "TrainingJobDefinition", "Environment")
		}
		if (s.Type == "Training" || s.Type == "Tuning") && !strings.HasSuffix(s.Name, "-RepackModel") {
			if e, _ := env.(map[string]any); e["AWS_REGION"] != "eu-west-1" || e["AWS_DEFAULT_REGION"] != "eu-west-1" {
				t.Errorf("%s Environment %s", s.Name, jsonOf(env))
			}
		}
		if got := jsonOf(s.Arguments["Tags"]); got != `[{"Key":"cost-center","Value":"42"},{"Key":"team","Value":"risk"}]` {
			t.Errorf("%s (%s) Tags %s", s.Name, s.Type, got)
		}
	}
	f := sagemakertest.NewFakeAWS(t)
	if _, err := Upsert(context.Background(), fakeDeployer(t, f), res, ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Calls() {
		if c.Operation == "CreatePipeline" && !strings.Contains(string(c.Body), `"Tags":[{"Key":"cost-center","Value":"42"},{"Key":"team","Value":"risk"}]`) {
			t.Errorf("CreatePipeline without the tags: %s", c.Body[:min(len(c.Body), 300)])
		}
	}
	if f.Count("CreatePipeline") != 1 {
		t.Fatalf("%d CreatePipeline calls", f.Count("CreatePipeline"))
	}
}

// Class 9: names stay within SageMaker's limits: derived names are
// bounded deterministically, an explicit name over the limit is refused.
func TestIssue29NamesWithinLimits(t *testing.T) {
	long := strings.Repeat("a", 60)
	in := sharedInput(t, "xgboost_complete_e2e", map[string]any{"author": long, "service_name": long}, nil)
	res, _ := compileShared(t, in)
	if len(res.PipelineName) > sagemaker.MaxExperimentNameLength || !sagemaker.ValidPipelineName(res.PipelineName) {
		t.Errorf("derived name %q (%d characters)", res.PipelineName, len(res.PipelineName))
	}
	again, _ := compileShared(t, in)
	if again.PipelineName != res.PipelineName {
		t.Error("bounded name is not deterministic")
	}
	// A pipeline_name_override is part of a derived name (with version and
	// "-pipeline"): bounded the same way.
	over := strings.Repeat("p", 130)
	res, _ = compileShared(t, sharedInput(t, "xgboost_simple_training", map[string]any{"pipeline_name_override": over}, nil))
	if len(res.PipelineName) != sagemaker.MaxExperimentNameLength || !strings.HasPrefix(res.PipelineName, over[:100]) {
		t.Errorf("override bounded to %q", res.PipelineName)
	}
	// A name given as is cannot be changed: refused with the limit and fix.
	in = sharedInput(t, "xgboost_simple_training", nil, nil)
	in.PipelineName = over
	if _, err := Compile(context.Background(), in); err == nil || !strings.Contains(err.Error(), "130 characters") || !strings.Contains(err.Error(), "at most 120") {
		t.Errorf("a 130-character pipeline name: %v", err)
	}
	if v := Validate(context.Background(), in); v.IsValid {
		t.Error("compile.validate accepts a 130-character pipeline name")
	}
	// A long job type gives a step name bounded to 64 characters.
	node := "XGBoostModelEval_calibration" + strings.Repeat("x", 60)
	d := dag.New([]string{node}, nil)
	res, err := CompileSingleNode(context.Background(), sampleInput(t, d), node,
		map[string]string{"model_input": "s3://bucket/model", "processed_data": "s3://bucket/data"}, true)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	name := res.Definition.Steps[0].Name
	if len(name) > sagemaker.MaxStepNameLength || !sagemaker.ValidStepName(name) || !strings.HasPrefix(name, "XGBoostModelEval-") {
		t.Errorf("step name %q (%d)", name, len(name))
	}
}

// compile.preview reports the build findings too, not only the mapping.
func TestIssue29PreviewReportsFindings(t *testing.T) {
	in := sharedInput(t, "xgboost_hyperparameter_tuning", nil, map[string]map[string]any{"XGBoostTuning": {"tuning_strategy": "Hyperband", "early_stopping_type": "Auto"}})
	p, err := PreviewResolution(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Findings, "\n"); !strings.Contains(got, `error: node "XGBoostTuning": early_stopping_type "Auto" with tuning_strategy Hyperband`) {
		t.Errorf("preview findings %q", p.Findings)
	}
	p, err = PreviewResolution(context.Background(), sharedInput(t, "xgboost_hyperparameter_tuning", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Findings {
		if strings.HasPrefix(f, "error:") {
			t.Errorf("a valid DAG previews with %s", f)
		}
	}
}
