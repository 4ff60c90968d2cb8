package steps

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sm "github.com/aws/aws-sdk-go-v2/service/sagemaker"

	"github.com/cursus-dev/cursus/engine/finding"
)

// awsPropertyShapes are the responses each step type's properties come
// from, as the SageMaker Python SDK builds them.
var awsPropertyShapes = map[string][]struct {
	operation string
	shape     any
}{
	SMProcessing:    {{"DescribeProcessingJob", sm.DescribeProcessingJobOutput{}}},
	SMTraining:      {{"DescribeTrainingJob", sm.DescribeTrainingJobOutput{}}},
	SMTuning:        {{"DescribeHyperParameterTuningJob", sm.DescribeHyperParameterTuningJobOutput{}}, {"ListTrainingJobsForHyperParameterTuningJob", sm.ListTrainingJobsForHyperParameterTuningJobOutput{}}},
	SMCreateModel:   {{"DescribeModel", sm.DescribeModelOutput{}}},
	SMTransform:     {{"DescribeTransformJob", sm.DescribeTransformJobOutput{}}},
	SMRegisterModel: {{"DescribeModelPackage", sm.DescribeModelPackageOutput{}}},
}

// scalarPaths lists the paths of every scalar member reachable from t.
func scalarPaths(t reflect.Type, prefix string, seen map[reflect.Type]bool, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() {
		*out = append(*out, prefix)
		return
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
		*out = append(*out, prefix)
	case reflect.Slice, reflect.Map:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return // blobs are not readable as properties
		}
		scalarPaths(t.Elem(), prefix+"[*]", seen, out)
	case reflect.Struct:
		if seen[t] {
			return // a recursive shape: its members are listed once, above
		}
		seen[t] = true
		defer delete(seen, t)
		for f := range t.Fields() {
			if !f.IsExported() || f.Name == "ResultMetadata" || f.Name == "NextToken" {
				continue
			}
			p := f.Name
			if prefix != "" {
				p = prefix + "." + f.Name
			}
			scalarPaths(f.Type, p, seen, out)
		}
	}
}

func awsPropertyTable() PropertyTable {
	t := PropertyTable{
		About: "Readable property paths per SageMaker step type: the scalar members of the listed API operations' responses " +
			"(list elements and map values as [*]). Generated from the AWS SDK for Go's response types by " +
			"UPDATE_PROPERTY_TABLE=true go test ./engine/steps -run TestPropertyTableMatchesAWSShapes; do not edit by hand.",
		StepTypes: map[string]StepTypeProperties{},
	}
	for st, shapes := range awsPropertyShapes {
		var p StepTypeProperties
		for _, s := range shapes {
			p.Operations = append(p.Operations, s.operation)
			scalarPaths(reflect.TypeOf(s.shape), "", map[reflect.Type]bool{}, &p.Paths)
		}
		slices.Sort(p.Paths)
		p.Paths = slices.Compact(p.Paths)
		t.StepTypes[st] = p
	}
	return t
}

func TestPropertyTableMatchesAWSShapes(t *testing.T) {
	want, err := json.MarshalIndent(awsPropertyTable(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if os.Getenv("UPDATE_PROPERTY_TABLE") == "true" {
		if err := os.WriteFile("properties.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(propertiesJSON, want) {
		t.Fatal("properties.json differs from the AWS SDK's response shapes; regenerate it with UPDATE_PROPERTY_TABLE=true go test ./engine/steps -run TestPropertyTableMatchesAWSShapes")
	}
}

func TestPropertyTableHasWhatTheStepsRead(t *testing.T) {
	for _, c := range []struct{ smType, path string }{
		{SMProcessing, "properties.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"},
		{SMTraining, "properties.ModelArtifacts.S3ModelArtifacts"},
		{SMTraining, "properties.OutputDataConfig.S3OutputPath"},
		{SMTuning, "properties.BestTrainingJob.TrainingJobName"},
		{SMTuning, "properties.TrainingJobSummaries[0].TrainingJobName"},
		{SMTuning, "properties.TrainingJobDefinition.OutputDataConfig.S3OutputPath"},
		{SMCreateModel, "properties.ModelName"},
		{SMTransform, "properties.TransformOutput.S3OutputPath"},
		{SMRegisterModel, "properties.ModelPackageArn"},
	} {
		if known, ok, near := CheckPropertyPath(c.smType, c.path); !known || !ok {
			t.Errorf("%s %s: known %v ok %v (nearest %v)", c.smType, c.path, known, ok, near)
		}
	}
	for _, c := range []struct{ smType, path string }{
		{SMTuning, "properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts"},
		{SMTuning, "properties.OutputDataConfig.S3OutputPath"}, // a training job's, not a tuning job's
		{SMCreateModel, "properties.ModelArtifacts.S3ModelArtifacts"},
		{SMProcessing, "properties.ProcessingOutputConfig.Outputs['x'].S3Uri"},
	} {
		if _, ok, _ := CheckPropertyPath(c.smType, c.path); ok {
			t.Errorf("%s %s: accepted", c.smType, c.path)
		}
	}
	if known, _, _ := CheckPropertyPath(SMUtility, "properties.Anything"); known {
		t.Error("a step type without a Describe operation has no table")
	}
}

func TestNearestPathsShareTheValidParent(t *testing.T) {
	_, _, near := CheckPropertyPath(SMTuning, "properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts")
	if len(near) != 3 {
		t.Fatalf("nearest %v", near)
	}
	for _, p := range near {
		if !strings.HasPrefix(p, "properties.BestTrainingJob.") {
			t.Errorf("nearest %v: %q is not a member of BestTrainingJob", near, p)
		}
	}
}

func builtinYAML(t *testing.T, name string) string {
	t.Helper()
	data, err := builtinFS.ReadFile("catalog/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The example: an agent declared the best model of a tuning step as
// properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts, which no
// HyperParameterTrainingJobSummary has.
func TestInventedTuningPropertyIsRejected(t *testing.T) {
	good := builtinYAML(t, "pytorch_tuning.step.yaml")
	bad := strings.Replace(good, "      property_path: properties.TrainingJobSummaries[0].TrainingJobName\n      job_artifact: output/model.tar.gz\n",
		"      property_path: properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts\n", 1)
	if bad == good {
		t.Fatal("fixture: best_model property path not found")
	}
	f, ok := findRule(Validate(mustParse(t, bad)), "property_path_unknown")
	if !ok {
		t.Fatal("the invented path was accepted")
	}
	if f.Level != finding.Error || f.Path != "spec.outputs.best_model.property_path" {
		t.Errorf("finding %+v", f)
	}
	for _, want := range []string{"Tuning step", "DescribeHyperParameterTuningJob", "nearest valid paths: properties.BestTrainingJob.",
		"properties.TrainingJobSummaries[0].TrainingJobName with job_artifact: output/model.tar.gz"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not name %q", f.Message, want)
		}
	}
	if _, ok := findRule(Validate(mustParse(t, good)), "property_path_unknown"); ok {
		t.Error("the built-in interface is rejected")
	}
}

func TestJobArtifactRules(t *testing.T) {
	good := builtinYAML(t, "xgboost_tuning.step.yaml")
	for name, c := range map[string]struct{ old, new string }{
		"not a job name": {"properties.TrainingJobSummaries[0].TrainingJobName\n      job_artifact", "properties.BestTrainingJob.TrainingJobArn\n      job_artifact"},
		"absolute":       {"job_artifact: output/model.tar.gz", "job_artifact: /output/model.tar.gz"},
		"escapes":        {"job_artifact: output/model.tar.gz", "job_artifact: ../model.tar.gz"},
		"not tuning":     {"sagemaker_step_type: Tuning", "sagemaker_step_type: Training"},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Fatalf("%s: fixture unchanged", name)
		}
		if _, ok := findRule(Validate(mustParse(t, bad)), "job_artifact"); !ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, ok := findRule(Validate(mustParse(t, good)), "job_artifact"); ok {
		t.Error("the built-in interface is rejected")
	}
}
