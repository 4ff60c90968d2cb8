package localrun

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The tiny pipeline: Prep (processing) → Train (training, script mode) →
// Model → Transform (DataProcessing joins id and label back), and Register
// answering Prep's payload. Its code is two small scripts, so a run takes
// a few seconds: the mutation and limit tests break it one way each.

const xgbImage = "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1"

// tinySample is id,label,f1,f2 with label = f1 > 0.5.
func tinySample() []byte {
	var b strings.Builder
	b.WriteString("id,label,f1,f2\n")
	for i := 0; i < 60; i++ {
		f1 := float64((i*37)%100) / 100
		f2 := float64((i*11)%100) / 100
		label := 0
		if f1 > 0.5 {
			label = 1
		}
		fmt.Fprintf(&b, "%d,%d,%.2f,%.2f\n", 1000+i, label, f1, f2)
	}
	return []byte(b.String())
}

// tarGzOf packs name → content.
func tarGzOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func codeURIOf(data []byte, name string) string {
	return "s3://b/tiny/code/" + sha(data) + "/" + name
}

func get(path string) map[string]any { return map[string]any{"Get": path} }

func join(values ...any) map[string]any {
	return map[string]any{"Std:Join": map[string]any{"On": "/", "Values": values}}
}

// tinyPipeline is the definition (as a JSON-shaped map) and its code.
func tinyPipeline(t testing.TB) (map[string]any, []Code) {
	t.Helper()
	prep, err := os.ReadFile("testdata/tiny/prep.py")
	if err != nil {
		t.Fatal(err)
	}
	train, err := os.ReadFile("testdata/tiny/train.py")
	if err != nil {
		t.Fatal(err)
	}
	src := tarGzOf(t, map[string][]byte{"train.py": train})
	prepURI, srcURI := codeURIOf(prep, "prep.py"), codeURIOf(src, "sourcedir.tar.gz")
	out := func(name string) map[string]any {
		return map[string]any{"OutputName": name, "S3Output": map[string]any{"LocalPath": "/opt/ml/processing/output/" + name,
			"S3Uri": join(get("Parameters.Prefix"), "prep", name), "S3UploadMode": "EndOfJob"}}
	}
	prepOut := func(name string) map[string]any {
		return get("Steps.Prep.ProcessingOutputConfig.Outputs['" + name + "'].S3Output.S3Uri")
	}
	def := map[string]any{
		"Version":    "2020-12-01",
		"Parameters": []any{map[string]any{"Name": "Prefix", "Type": "String", "DefaultValue": "s3://b/tiny/run"}},
		"Steps": []any{
			map[string]any{"Name": "Prep", "Type": "Processing", "Arguments": map[string]any{
				"AppSpecification": map[string]any{"ImageUri": "sklearn", "ContainerEntrypoint": []any{"python3", "/opt/ml/processing/input/code/prep.py"},
					"ContainerArguments": []any{"--job_type", "training"}},
				"Environment": map[string]any{"MODE": "tiny"},
				"ProcessingInputs": []any{
					map[string]any{"InputName": "data", "S3Input": map[string]any{"LocalPath": "/opt/ml/processing/input/data", "S3Uri": "s3://b/data/"}},
					map[string]any{"InputName": "code", "S3Input": map[string]any{"LocalPath": "/opt/ml/processing/input/code", "S3Uri": prepURI}},
				},
				"ProcessingOutputConfig": map[string]any{"Outputs": []any{out("train"), out("infer"), out("payload")}},
			}},
			map[string]any{"Name": "Train", "Type": "Training", "Arguments": map[string]any{
				"AlgorithmSpecification": map[string]any{"TrainingImage": xgbImage, "TrainingInputMode": "File"},
				"HyperParameters":        map[string]any{"sagemaker_program": `"train.py"`, "sagemaker_submit_directory": `"` + srcURI + `"`, "eta": "0.2"},
				"InputDataConfig": []any{map[string]any{"ChannelName": "train", "DataSource": map[string]any{"S3DataSource": map[string]any{
					"S3DataType": "S3Prefix", "S3Uri": prepOut("train")}}}},
				"OutputDataConfig": map[string]any{"S3OutputPath": join(get("Parameters.Prefix"), "train")},
			}},
			map[string]any{"Name": "Model", "Type": "Model", "Arguments": map[string]any{
				"ExecutionRoleArn": "arn:aws:iam::123456789012:role/R",
				"PrimaryContainer": map[string]any{"Image": xgbImage, "Environment": map[string]any{},
					"ModelDataUrl": get("Steps.Train.ModelArtifacts.S3ModelArtifacts")},
			}},
			map[string]any{"Name": "Transform", "Type": "Transform", "Arguments": map[string]any{
				"ModelName": get("Steps.Model.ModelName"),
				"TransformInput": map[string]any{"DataSource": map[string]any{"S3DataSource": map[string]any{"S3DataType": "S3Prefix", "S3Uri": prepOut("infer")}},
					"ContentType": "text/csv", "SplitType": "Line"},
				"TransformOutput":    map[string]any{"S3OutputPath": join(get("Parameters.Prefix"), "transform", get("Execution.PipelineExecutionId")), "Accept": "text/csv", "AssembleWith": "Line"},
				"TransformResources": map[string]any{"InstanceCount": 1, "InstanceType": "ml.m5.large"},
				"DataProcessing":     map[string]any{"InputFilter": "$[2:]", "JoinSource": "Input", "OutputFilter": "$[0,1,-1]"},
			}},
			map[string]any{"Name": "Register", "Type": "RegisterModel", "DependsOn": []any{"Model"}, "Arguments": map[string]any{
				"ModelPackageGroupName": "tiny",
				"InferenceSpecification": map[string]any{
					"Containers":                 []any{map[string]any{"Image": xgbImage, "ModelDataUrl": get("Steps.Train.ModelArtifacts.S3ModelArtifacts")}},
					"SupportedContentTypes":      []any{"text/csv"},
					"SupportedResponseMIMETypes": []any{"text/csv"},
				},
				"SamplePayloadUrl":    join(prepOut("payload"), "payload.tar.gz"),
				"ModelApprovalStatus": "PendingManualApproval",
			}},
		},
	}
	return def, []Code{{URI: prepURI, Data: prep}, {URI: srcURI, Data: src}}
}

// step returns the named step of a tiny definition, to mutate.
func stepOf(def map[string]any, name string) map[string]any {
	for _, s := range def["Steps"].([]any) {
		if m := s.(map[string]any); m["Name"] == name {
			return m
		}
	}
	panic("no step " + name)
}

func args(def map[string]any, name string) map[string]any {
	return stepOf(def, name)["Arguments"].(map[string]any)
}

func runTiny(t *testing.T, r *Runner, def map[string]any, code []Code, objects string) *Report {
	t.Helper()
	b, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), Request{Definition: b, Code: code, SampleData: map[string][]byte{"sample.csv": tinySample()}, ObjectDir: objects})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func stepReport(t *testing.T, rep *Report, name string) StepReport {
	t.Helper()
	for _, s := range rep.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %s in the report", name)
	return StepReport{}
}

func TestTinyPipelineRunsEndToEnd(t *testing.T) {
	needRuntime(t, "xgboost")
	def, code := tinyPipeline(t)
	objects := t.TempDir()
	var progress []string
	r := testRunner(t, Settings{})
	b, _ := json.Marshal(def)
	rep, err := r.Run(context.Background(), Request{Definition: b, Code: code, SampleData: map[string][]byte{"sample.csv": tinySample()}, ObjectDir: objects,
		Progress: func(done, total int, msg string) {
			progress = append(progress, fmt.Sprintf("%d/%d %s", done, total, msg))
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("not ok: %+v\n%s", rep.FirstFailure, logs(rep))
	}
	for _, s := range rep.Steps {
		if s.Status != StatusSucceeded {
			t.Errorf("step %s: %s", s.Name, s.Status)
		}
	}
	// Two progress notes per step: started and finished.
	if len(progress) != 2*len(rep.Steps) || !strings.HasPrefix(progress[len(progress)-1], "5/5 Register succeeded") {
		t.Errorf("progress: %q", progress)
	}
	// The processing job saw its arguments and environment.
	if tail := stepReport(t, rep, "Prep").LogTail; !strings.Contains(tail, "prep wrote 60 rows; args ['--job_type', 'training'] MODE tiny") {
		t.Errorf("prep log: %q", tail)
	}
	// The model is where SageMaker puts it, and the properties say so.
	train := stepReport(t, rep, "Train")
	modelURI := fmt.Sprintf("s3://b/tiny/run/train/pipelines-%s-Train/output/model.tar.gz", rep.PipelineExecutionID)
	if got := train.Properties["ModelArtifacts"].(map[string]any)["S3ModelArtifacts"]; got != modelURI {
		t.Errorf("S3ModelArtifacts = %v, want %s", got, modelURI)
	}
	if _, err := os.Stat(objects + "/b/tiny/run/train/pipelines-" + rep.PipelineExecutionID + "-Train/output/output.tar.gz"); err != nil {
		t.Errorf("output.tar.gz: %v", err)
	}
	// Transform rows carry id and label joined back, then the score.
	out, err := os.ReadFile(fmt.Sprintf("%s/b/tiny/run/transform/%s/infer.csv.out", objects, rep.PipelineExecutionID))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 60 {
		t.Fatalf("%d transform rows, want 60", len(lines))
	}
	for i, line := range lines {
		f := strings.Split(line, ",")
		if len(f) != 3 || f[0] != fmt.Sprint(1000+i) {
			t.Fatalf("row %d = %q, want id %d, label, score", i, line, 1000+i)
		}
	}
	if tail := stepReport(t, rep, "Register").LogTail; !strings.Contains(tail, "sample sample.csv answered") {
		t.Errorf("register log: %q", tail)
	}
}

func logs(rep *Report) string {
	var b strings.Builder
	for _, s := range rep.Steps {
		if s.LogTail != "" {
			fmt.Fprintf(&b, "--- %s (%s)\n%s\n", s.Name, s.Status, s.LogTail)
		}
	}
	return b.String()
}
