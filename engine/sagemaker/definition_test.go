package sagemaker

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
	"github.com/cursus-dev/cursus/internal/verbatim"
)

const testRole = "arn:aws:iam::111122223333:role/SageMakerRole"

// sampleDefinition has one step of every type this package builds, wired
// the way a compiled pipeline is.
func sampleDefinition() *Definition {
	d := NewDefinition()
	d.Parameters = append(d.Parameters, Parameter{Name: "EXECUTION_S3_PREFIX", Type: ParamString, DefaultValue: "s3://bucket/MODS/p_1.0"})
	prefix := Param("EXECUTION_S3_PREFIX")
	cache := &CacheConfig{Enabled: false, ExpireAfter: DefaultCacheExpiry}
	proc := ProcessingArgs{
		ProcessingResources: ProcessingResources{ClusterConfig{InstanceType: "ml.m5.2xlarge", InstanceCount: 1, VolumeSizeInGB: 500}},
		AppSpecification: AppSpecification{
			ImageURI:            "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3",
			ContainerArguments:  []any{"--job_type", "training"},
			ContainerEntrypoint: []any{"python3", ProcessingCodeDir + "/prep.py"},
		},
		RoleArn: testRole,
		ProcessingInputs: []ProcessingInput{
			NewProcessingInput("DATA", "s3://bucket/data/", "/opt/ml/processing/input/data"),
			NewProcessingInput("code", "s3://bucket/p/code/abc/prep.py", ProcessingCodeDir),
		},
		ProcessingOutputConfig: &ProcessingOutputConfig{Outputs: []ProcessingOutput{
			NewProcessingOutput("processed_data", "/opt/ml/processing/output", JoinPath(prefix, "tabularpreprocessing", "training", "processed_data")),
		}},
		Environment: map[string]any{"LABEL_FIELD": "label"},
	}
	d.Steps = append(d.Steps, Step{Name: "TabularPreprocessing-Training", Type: TypeProcessing, Arguments: proc, CacheConfig: cache})
	data := StepProperty("TabularPreprocessing-Training", "properties.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri")
	train := TrainingArgs{
		AlgorithmSpecification: AlgorithmSpecification{TrainingImage: "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1", TrainingInputMode: "File"},
		OutputDataConfig:       OutputDataConfig{S3OutputPath: JoinPath(prefix, "xgboost_training")},
		StoppingCondition:      StoppingCondition{MaxRuntimeInSeconds: DefaultTrainingRuntime},
		ResourceConfig:         ResourceConfig{InstanceCount: 1, InstanceType: "ml.m5.4xlarge", VolumeSizeInGB: DefaultTrainingVolumeGB},
		RoleArn:                testRole,
		InputDataConfig:        []Channel{NewChannel("train", JoinPath(data, "train/"))},
		HyperParameters:        map[string]any{"sagemaker_program": `"train.py"`},
	}
	d.Steps = append(d.Steps, Step{Name: "XGBoostTraining", Type: TypeTraining, Arguments: train,
		DependsOn: []string{"TabularPreprocessing-Training"}, CacheConfig: cache})
	model := ModelArgs{ExecutionRoleArn: testRole, PrimaryContainer: ContainerDefinition{
		Image: "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1", Environment: map[string]any{},
		ModelDataURL: "s3://bucket/model.tar.gz"}}
	d.Steps = append(d.Steps, Step{Name: "XGBoostModel", Type: TypeModel, Arguments: model, DependsOn: []string{"XGBoostTraining"}})
	tr := TransformArgs{
		ModelName:          StepProperty("XGBoostModel", "properties.ModelName"),
		TransformInput:     TransformInput{DataSource: TransformDataSource{TransformS3DataSource{S3DataType: "S3Prefix", S3URI: data}}, ContentType: "text/csv", SplitType: "Line"},
		TransformOutput:    TransformOutput{S3OutputPath: JoinPath(prefix, "batchtransform", "transform_output"), Accept: "text/csv", AssembleWith: "Line"},
		TransformResources: TransformResources{InstanceCount: 1, InstanceType: "ml.m5.large"},
	}
	d.Steps = append(d.Steps, Step{Name: "BatchTransform-Testing", Type: TypeTransform, Arguments: tr, DependsOn: []string{"XGBoostModel"}})
	tune := TuningArgs{
		HyperParameterTuningJobConfig: TuningJobConfig{
			Strategy: "Bayesian", HyperParameterTuningJobObjective: TuningObjective{Type: "Maximize", MetricName: "validation:auc"},
			ResourceLimits:               ResourceLimits{MaxNumberOfTrainingJobs: 20, MaxParallelTrainingJobs: 1},
			ParameterRanges:              ParameterRanges{ContinuousParameterRanges: []NumericRange{{Name: "eta", MinValue: "0.01", MaxValue: "0.3", ScalingType: "Auto"}}, CategoricalParameterRanges: []CategoricalRange{}, IntegerParameterRanges: []NumericRange{}},
			TrainingJobEarlyStoppingType: "Off",
		},
		TrainingJobDefinition: TrainingJobDefinition{
			StaticHyperParameters: map[string]any{}, RoleArn: testRole,
			OutputDataConfig: train.OutputDataConfig, StoppingCondition: train.StoppingCondition,
			ResourceConfig: train.ResourceConfig, AlgorithmSpecification: train.AlgorithmSpecification,
			InputDataConfig: train.InputDataConfig,
		},
	}
	d.Steps = append(d.Steps, Step{Name: "Tuning", Type: TypeTuning, Arguments: tune, CacheConfig: cache})
	reg := RegisterModelArgs{
		ModelPackageGroupName: "group",
		InferenceSpecification: InferenceSpecification{
			Containers:            []PackageContainer{{Image: "img", ModelDataURL: StepProperty("XGBoostTraining", "properties.ModelArtifacts.S3ModelArtifacts")}},
			SupportedContentTypes: []string{"text/csv"}, SupportedResponseMIMETypes: []string{"application/json"},
			SupportedRealtimeInferenceInstanceTypes: []string{"ml.m5.large"}, SupportedTransformInstanceTypes: []string{"ml.m5.large"},
		},
		ModelApprovalStatus: "PendingManualApproval",
		SkipModelValidation: "None",
	}
	d.Steps = append(d.Steps, Step{Name: "Registration-NA", Type: TypeRegisterModel, Arguments: reg, DependsOn: []string{"XGBoostTraining"}})
	return d
}

func TestSampleDefinitionValidates(t *testing.T) {
	b, err := Encode(sampleDefinition())
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, b)
}

func TestSchemaRejectsUnknownKey(t *testing.T) {
	d := sampleDefinition()
	d.Steps[0].Arguments = map[string]any{"NotAnArgument": 1}
	b, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := sagemakertest.Validate(t, b); err == nil {
		t.Fatal("schema accepted an unknown processing argument")
	}
}

func TestEncodeIsDeterministic(t *testing.T) {
	a, err := Encode(sampleDefinition())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		b, err := Encode(sampleDefinition())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("encoding %d differs", i)
		}
	}
}

func TestExpressions(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{Param("P"), `{"Get":"Parameters.P"}`},
		{Execution("PipelineExecutionId"), `{"Get":"Execution.PipelineExecutionId"}`},
		{StepProperty("Train", "properties.ModelArtifacts.S3ModelArtifacts"), `{"Get":"Steps.Train.ModelArtifacts.S3ModelArtifacts"}`},
		{StepProperty("Prep", "ProcessingOutputConfig.Outputs['x'].S3Output.S3Uri"), `{"Get":"Steps.Prep.ProcessingOutputConfig.Outputs['x'].S3Output.S3Uri"}`},
		{JoinPath(Param("P"), "a"), `{"Std:Join":{"On":"/","Values":[{"Get":"Parameters.P"},"a"]}}`},
		{JoinPath(JoinPath("s3://b", "x"), "y"), `{"Std:Join":{"On":"/","Values":["s3://b","x","y"]}}`},
		{Join{On: ","}, `{"Std:Join":{"On":",","Values":[]}}`},
	}
	for _, c := range cases {
		b, err := verbatim.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("got %s, want %s", b, c.want)
		}
	}
}

func TestTopLevelShape(t *testing.T) {
	b, err := Encode(NewDefinition())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Version":"2020-12-01","Metadata":{},"Parameters":[],"PipelineExperimentConfig":{"ExperimentName":{"Get":"Execution.PipelineName"},"TrialName":{"Get":"Execution.PipelineExecutionId"}},"Steps":[]}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
}

func TestReferences(t *testing.T) {
	b, err := Encode(sampleDefinition())
	if err != nil {
		t.Fatal(err)
	}
	refs, err := References(b)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(refs, "\n")
	for _, want := range []string{
		"Parameters.EXECUTION_S3_PREFIX",
		"Steps.TabularPreprocessing-Training.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri",
		"Steps.XGBoostModel.ModelName",
		"Steps.XGBoostTraining.ModelArtifacts.S3ModelArtifacts",
		"Execution.PipelineName",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("reference %q not found in %v", want, refs)
		}
	}
}
