package sagemaker

// Request shapes of the step arguments, in the field order the SDK writes.
// Fields typed `any` take a literal or an expression (Get, Join); a nil
// optional field is left out.

// Container paths and defaults the SDK uses.
const (
	ProcessingCodeDir       = "/opt/ml/processing/input/code"
	ProcessingEntrypointDir = "/opt/ml/processing/input/entrypoint"
	RunProcScript           = "runproc.sh"
	SourceDirTarball        = "sourcedir.tar.gz"
	DefaultTrainingRuntime  = 86400
	DefaultTrainingVolumeGB = 30
)

// ---- Processing (CreateProcessingJob) ----

// ProcessingArgs is the CreateProcessingJob request without the job name.
type ProcessingArgs struct {
	ProcessingResources    ProcessingResources     `json:"ProcessingResources"`
	AppSpecification       AppSpecification        `json:"AppSpecification"`
	RoleArn                any                     `json:"RoleArn"`
	ProcessingInputs       []ProcessingInput       `json:"ProcessingInputs,omitempty"`
	ProcessingOutputConfig *ProcessingOutputConfig `json:"ProcessingOutputConfig,omitempty"`
	Environment            map[string]any          `json:"Environment,omitempty"`
	NetworkConfig          *NetworkConfig          `json:"NetworkConfig,omitempty"`
	StoppingCondition      *StoppingCondition      `json:"StoppingCondition,omitempty"`
	Tags                   []Tag                   `json:"Tags,omitempty"`
}

// Tag is one resource tag of a job, model or model package request.
type Tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// ProcessingResources wraps the cluster config.
type ProcessingResources struct {
	ClusterConfig ClusterConfig `json:"ClusterConfig"`
}

// ClusterConfig sizes a processing cluster.
type ClusterConfig struct {
	InstanceType   any `json:"InstanceType"`
	InstanceCount  any `json:"InstanceCount"`
	VolumeSizeInGB any `json:"VolumeSizeInGB"`
}

// AppSpecification names the image and how to start it.
type AppSpecification struct {
	ImageURI            any   `json:"ImageUri"`
	ContainerArguments  []any `json:"ContainerArguments,omitempty"`
	ContainerEntrypoint []any `json:"ContainerEntrypoint,omitempty"`
}

// ProcessingInput is one S3 input of a processing job.
type ProcessingInput struct {
	InputName  string  `json:"InputName"`
	AppManaged bool    `json:"AppManaged"`
	S3Input    S3Input `json:"S3Input"`
}

// S3Input is where a processing input comes from and goes to.
type S3Input struct {
	S3URI                  any    `json:"S3Uri"`
	LocalPath              string `json:"LocalPath"`
	S3DataType             string `json:"S3DataType"`
	S3InputMode            string `json:"S3InputMode"`
	S3DataDistributionType string `json:"S3DataDistributionType"`
	S3CompressionType      string `json:"S3CompressionType"`
}

// NewProcessingInput fills the SDK defaults (S3Prefix, File,
// FullyReplicated, no compression).
func NewProcessingInput(name string, s3URI any, localPath string) ProcessingInput {
	return ProcessingInput{
		InputName: name,
		S3Input: S3Input{
			S3URI:                  s3URI,
			LocalPath:              localPath,
			S3DataType:             "S3Prefix",
			S3InputMode:            "File",
			S3DataDistributionType: "FullyReplicated",
			S3CompressionType:      "None",
		},
	}
}

// ProcessingOutputConfig lists the outputs.
type ProcessingOutputConfig struct {
	Outputs []ProcessingOutput `json:"Outputs"`
}

// ProcessingOutput is one S3 output of a processing job.
type ProcessingOutput struct {
	OutputName string   `json:"OutputName"`
	AppManaged bool     `json:"AppManaged"`
	S3Output   S3Output `json:"S3Output"`
}

// S3Output is where an output is read in the container and written in S3.
type S3Output struct {
	S3URI        any    `json:"S3Uri"`
	LocalPath    string `json:"LocalPath"`
	S3UploadMode string `json:"S3UploadMode"`
}

// NewProcessingOutput uploads at the end of the job (the SDK default).
func NewProcessingOutput(name, localPath string, s3URI any) ProcessingOutput {
	return ProcessingOutput{
		OutputName: name,
		S3Output:   S3Output{S3URI: s3URI, LocalPath: localPath, S3UploadMode: "EndOfJob"},
	}
}

// NetworkConfig is the processing job network block.
type NetworkConfig struct {
	EnableInterContainerTrafficEncryption any        `json:"EnableInterContainerTrafficEncryption,omitempty"`
	EnableNetworkIsolation                any        `json:"EnableNetworkIsolation,omitempty"`
	VpcConfig                             *VpcConfig `json:"VpcConfig,omitempty"`
}

// VpcConfig names subnets and security groups.
type VpcConfig struct {
	SecurityGroupIDs []any `json:"SecurityGroupIds"`
	Subnets          []any `json:"Subnets"`
}

// StoppingCondition bounds a job's run time.
type StoppingCondition struct {
	MaxRuntimeInSeconds any `json:"MaxRuntimeInSeconds"`
}

// ---- Training (CreateTrainingJob) ----

// TrainingArgs is the CreateTrainingJob request without the job name. It
// has no Environment: the definition schema does not accept one there.
type TrainingArgs struct {
	AlgorithmSpecification AlgorithmSpecification `json:"AlgorithmSpecification"`
	OutputDataConfig       OutputDataConfig       `json:"OutputDataConfig"`
	StoppingCondition      StoppingCondition      `json:"StoppingCondition"`
	ResourceConfig         ResourceConfig         `json:"ResourceConfig"`
	RoleArn                any                    `json:"RoleArn"`
	InputDataConfig        []Channel              `json:"InputDataConfig"`
	HyperParameters        map[string]any         `json:"HyperParameters,omitempty"`
	DebugHookConfig        *DebugHookConfig       `json:"DebugHookConfig,omitempty"`
	ProfilerConfig         *ProfilerConfig        `json:"ProfilerConfig,omitempty"`
	Environment            map[string]any         `json:"Environment,omitempty"`
	Tags                   []Tag                  `json:"Tags,omitempty"`
}

// DebugHookConfig is where SageMaker Debugger writes tensors. The SDK
// emits it on every training job unless the debugger is disabled: the
// job's output path and no collections.
type DebugHookConfig struct {
	S3OutputPath             any   `json:"S3OutputPath"`
	CollectionConfigurations []any `json:"CollectionConfigurations"`
}

// ProfilerConfig is where SageMaker Profiler writes system metrics; the
// SDK's default is the job's output path with the profiler enabled.
type ProfilerConfig struct {
	S3OutputPath    any  `json:"S3OutputPath,omitempty"`
	DisableProfiler bool `json:"DisableProfiler"`
}

// AlgorithmSpecification names the training image.
type AlgorithmSpecification struct {
	TrainingImage     any                `json:"TrainingImage"`
	TrainingInputMode string             `json:"TrainingInputMode"`
	MetricDefinitions []MetricDefinition `json:"MetricDefinitions,omitempty"`
}

// MetricDefinition is a metric the job logs.
type MetricDefinition struct {
	Name  string `json:"Name"`
	Regex string `json:"Regex"`
}

// OutputDataConfig is where the model artifacts go.
type OutputDataConfig struct {
	S3OutputPath any `json:"S3OutputPath"`
}

// ResourceConfig sizes a training job.
type ResourceConfig struct {
	InstanceCount  any `json:"InstanceCount"`
	InstanceType   any `json:"InstanceType"`
	VolumeSizeInGB any `json:"VolumeSizeInGB"`
}

// Channel is one training input channel.
type Channel struct {
	ChannelName string     `json:"ChannelName"`
	DataSource  DataSource `json:"DataSource"`
}

// DataSource wraps an S3 data source.
type DataSource struct {
	S3DataSource S3DataSource `json:"S3DataSource"`
}

// S3DataSource is an S3 prefix read by a training job.
type S3DataSource struct {
	S3DataType             string `json:"S3DataType"`
	S3URI                  any    `json:"S3Uri"`
	S3DataDistributionType string `json:"S3DataDistributionType,omitempty"`
}

// NewChannel fills the SDK defaults (S3Prefix, FullyReplicated).
func NewChannel(name string, s3URI any) Channel {
	return Channel{ChannelName: name, DataSource: DataSource{S3DataSource: S3DataSource{
		S3DataType: "S3Prefix", S3URI: s3URI, S3DataDistributionType: "FullyReplicated",
	}}}
}

// ---- Model (CreateModel) ----

// ModelArgs is the CreateModel request without the model name.
type ModelArgs struct {
	ExecutionRoleArn any                 `json:"ExecutionRoleArn"`
	PrimaryContainer ContainerDefinition `json:"PrimaryContainer"`
	Tags             []Tag               `json:"Tags,omitempty"`
}

// ContainerDefinition is a model container. Environment is always written,
// possibly empty, as the SDK does.
type ContainerDefinition struct {
	Image        any            `json:"Image"`
	Environment  map[string]any `json:"Environment"`
	ModelDataURL any            `json:"ModelDataUrl,omitempty"`
}

// ---- Transform (CreateTransformJob) ----

// TransformArgs is the CreateTransformJob request without the job name.
type TransformArgs struct {
	ModelName          any                `json:"ModelName"`
	TransformInput     TransformInput     `json:"TransformInput"`
	TransformOutput    TransformOutput    `json:"TransformOutput"`
	TransformResources TransformResources `json:"TransformResources"`
	DataProcessing     *DataProcessing    `json:"DataProcessing,omitempty"`
	Tags               []Tag              `json:"Tags,omitempty"`
}

// DataProcessing is a transform job's record filtering and joining:
// InputFilter selects what the model sees of each record, JoinSource
// "Input" joins each prediction to its input record, OutputFilter selects
// what of the joined record is written.
type DataProcessing struct {
	InputFilter  string `json:"InputFilter,omitempty"`
	JoinSource   string `json:"JoinSource,omitempty"`
	OutputFilter string `json:"OutputFilter,omitempty"`
}

// TransformInput is the data a batch transform reads.
type TransformInput struct {
	DataSource  TransformDataSource `json:"DataSource"`
	ContentType string              `json:"ContentType,omitempty"`
	SplitType   string              `json:"SplitType,omitempty"`
}

// TransformDataSource wraps the S3 source of a transform.
type TransformDataSource struct {
	S3DataSource TransformS3DataSource `json:"S3DataSource"`
}

// TransformS3DataSource is an S3 prefix.
type TransformS3DataSource struct {
	S3DataType string `json:"S3DataType"`
	S3URI      any    `json:"S3Uri"`
}

// TransformOutput is where predictions go.
type TransformOutput struct {
	S3OutputPath any    `json:"S3OutputPath"`
	Accept       string `json:"Accept,omitempty"`
	AssembleWith string `json:"AssembleWith,omitempty"`
}

// TransformResources sizes a transform job.
type TransformResources struct {
	InstanceCount any `json:"InstanceCount"`
	InstanceType  any `json:"InstanceType"`
}

// ---- Tuning (CreateHyperParameterTuningJob) ----

// TuningArgs is the CreateHyperParameterTuningJob request without the job
// name.
type TuningArgs struct {
	HyperParameterTuningJobConfig TuningJobConfig       `json:"HyperParameterTuningJobConfig"`
	TrainingJobDefinition         TrainingJobDefinition `json:"TrainingJobDefinition"`
	Tags                          []Tag                 `json:"Tags,omitempty"`
}

// TuningJobConfig is the search itself.
type TuningJobConfig struct {
	Strategy                         string          `json:"Strategy"`
	HyperParameterTuningJobObjective TuningObjective `json:"HyperParameterTuningJobObjective"`
	ResourceLimits                   ResourceLimits  `json:"ResourceLimits"`
	ParameterRanges                  ParameterRanges `json:"ParameterRanges"`
	TrainingJobEarlyStoppingType     string          `json:"TrainingJobEarlyStoppingType"`
}

// TuningObjective is the metric to optimise.
type TuningObjective struct {
	Type       string `json:"Type"`
	MetricName string `json:"MetricName"`
}

// ResourceLimits bounds the search.
type ResourceLimits struct {
	MaxNumberOfTrainingJobs int `json:"MaxNumberOfTrainingJobs,omitempty"`
	MaxParallelTrainingJobs int `json:"MaxParallelTrainingJobs"`
}

// ParameterRanges always carries all three lists, as the SDK writes them.
type ParameterRanges struct {
	ContinuousParameterRanges  []NumericRange     `json:"ContinuousParameterRanges"`
	CategoricalParameterRanges []CategoricalRange `json:"CategoricalParameterRanges"`
	IntegerParameterRanges     []NumericRange     `json:"IntegerParameterRanges"`
}

// NumericRange is a continuous or integer range; bounds are strings.
type NumericRange struct {
	Name        string `json:"Name"`
	MinValue    string `json:"MinValue"`
	MaxValue    string `json:"MaxValue"`
	ScalingType string `json:"ScalingType"`
}

// CategoricalRange lists the values to try.
type CategoricalRange struct {
	Name   string   `json:"Name"`
	Values []string `json:"Values"`
}

// TrainingJobDefinition is the template of each tuning trial.
type TrainingJobDefinition struct {
	StaticHyperParameters  map[string]any         `json:"StaticHyperParameters"`
	RoleArn                any                    `json:"RoleArn"`
	OutputDataConfig       OutputDataConfig       `json:"OutputDataConfig"`
	StoppingCondition      StoppingCondition      `json:"StoppingCondition"`
	ResourceConfig         ResourceConfig         `json:"ResourceConfig"`
	AlgorithmSpecification AlgorithmSpecification `json:"AlgorithmSpecification"`
	InputDataConfig        []Channel              `json:"InputDataConfig"`
	Environment            map[string]any         `json:"Environment,omitempty"`
}

// ---- RegisterModel (CreateModelPackage) ----

// RegisterModelArgs is the CreateModelPackage request of a RegisterModel
// step.
type RegisterModelArgs struct {
	ModelPackageGroupName      any                    `json:"ModelPackageGroupName"`
	ModelPackageDescription    string                 `json:"ModelPackageDescription,omitempty"`
	InferenceSpecification     InferenceSpecification `json:"InferenceSpecification"`
	ModelApprovalStatus        any                    `json:"ModelApprovalStatus"`
	SamplePayloadURL           any                    `json:"SamplePayloadUrl,omitempty"`
	CustomerMetadataProperties map[string]string      `json:"CustomerMetadataProperties,omitempty"`
	SkipModelValidation        string                 `json:"SkipModelValidation"`
	ModelMetrics               *ModelMetrics          `json:"ModelMetrics,omitempty"`
	Tags                       []Tag                  `json:"Tags,omitempty"`
}

// ModelMetrics attaches evaluation reports to a model package; the SDK's
// ModelMetrics(model_statistics=MetricsSource(...)) gives ModelQuality.
type ModelMetrics struct {
	ModelQuality MetricsReports `json:"ModelQuality"`
}

// MetricsReports holds the statistics report of one metrics kind.
type MetricsReports struct {
	Statistics MetricsSource `json:"Statistics"`
}

// MetricsSource is one report object.
type MetricsSource struct {
	ContentType string `json:"ContentType"`
	S3URI       any    `json:"S3Uri"`
}

// InferenceSpecification says how the registered model is served.
type InferenceSpecification struct {
	Containers                              []PackageContainer `json:"Containers"`
	SupportedContentTypes                   []string           `json:"SupportedContentTypes"`
	SupportedResponseMIMETypes              []string           `json:"SupportedResponseMIMETypes"`
	SupportedRealtimeInferenceInstanceTypes []string           `json:"SupportedRealtimeInferenceInstanceTypes,omitempty"`
	SupportedTransformInstanceTypes         []string           `json:"SupportedTransformInstanceTypes,omitempty"`
}

// PackageContainer is one container of a model package.
type PackageContainer struct {
	Image        any            `json:"Image"`
	Environment  map[string]any `json:"Environment,omitempty"`
	ModelDataURL any            `json:"ModelDataUrl,omitempty"`
}
