package localrun

import (
	"strings"
	"testing"
)

// Each emulated contract, broken in the definition one way: the run fails
// at the step that breaks it, and the remedy names the field to fix.
func TestMutationsFailAtTheirStepWithARemedy(t *testing.T) {
	needRuntime(t, "xgboost")
	cases := []struct {
		name        string
		mutate      func(def map[string]any)
		step, field string
		remedy      []string
	}{
		{"channel missing", func(def map[string]any) {
			// The script reads the train channel; the job has only "training".
			ch := args(def, "Train")["InputDataConfig"].([]any)[0].(map[string]any)
			ch["ChannelName"] = "training"
		}, "Train", "Arguments.InputDataConfig", []string{`"train" channel`, "InputDataConfig"}},
		{"wrong sagemaker_program", func(def map[string]any) {
			args(def, "Train")["HyperParameters"].(map[string]any)["sagemaker_program"] = `"training.py"`
		}, "Train", "Arguments.HyperParameters.sagemaker_program", []string{"sagemaker_program", "train.py"}},
		{"model archive without the served file", func(def map[string]any) {
			// output.tar.gz holds the job's metrics, not the model.
			pc := args(def, "Model")["PrimaryContainer"].(map[string]any)
			pc["ModelDataUrl"] = join(get("Steps.Train.OutputDataConfig.S3OutputPath"), get("Steps.Train.TrainingJobName"), "output", "output.tar.gz")
		}, "Model", "Arguments.PrimaryContainer.ModelDataUrl", []string{"model.tar.gz", "model file"}},
		{"DataProcessing dropped", func(def map[string]any) {
			delete(args(def, "Transform"), "DataProcessing")
		}, "Transform", "Arguments", []string{"DataProcessing.InputFilter"}},
		{"property path to an output the step never wrote", func(def map[string]any) {
			// Prep declares the output at a path its script never writes.
			outs := args(def, "Prep")["ProcessingOutputConfig"].(map[string]any)["Outputs"].([]any)
			outs[1].(map[string]any)["S3Output"].(map[string]any)["LocalPath"] = "/opt/ml/processing/output/scores"
		}, "Transform", "Arguments.TransformInput.DataSource.S3DataSource.S3Uri", []string{"Arguments.TransformInput.DataSource.S3DataSource.S3Uri", "nothing was written"}},
		{"property path the step does not have", func(def map[string]any) {
			args(def, "Model")["PrimaryContainer"].(map[string]any)["ModelDataUrl"] = get("Steps.Train.ModelArtifacts.S3ModelArtifact")
		}, "Model", "Arguments.PrimaryContainer.ModelDataUrl", []string{"Steps.Train.ModelArtifacts.S3ModelArtifact", "Arguments.PrimaryContainer.ModelDataUrl"}},
	}
	r := testRunner(t, Settings{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			def, code := tinyPipeline(t)
			c.mutate(def)
			rep := runTiny(t, r, def, code, "")
			f := rep.FirstFailure
			if rep.OK || f == nil {
				t.Fatalf("the broken pipeline ran: %+v", rep.Steps)
			}
			if f.Step != c.step || !strings.HasPrefix(f.Field, c.field) {
				t.Fatalf("failed at %s (%s), want %s (%s): %s\n%s", f.Step, f.Field, c.step, c.field, f.Reason, logs(rep))
			}
			for _, want := range c.remedy {
				if !strings.Contains(f.Remedy+" "+f.Reason, want) {
					t.Errorf("remedy %q (reason %q) does not say %q", f.Remedy, f.Reason, want)
				}
			}
			if !strings.Contains(f.Remedy, c.field) && !strings.Contains(f.Remedy, c.step) {
				t.Errorf("remedy %q names neither the field %s nor the step %s", f.Remedy, c.field, c.step)
			}
			// Every step after the failure is skipped, none ran.
			after := false
			for _, s := range rep.Steps {
				if after && s.Status != StatusSkipped {
					t.Errorf("step %s after the failure: %s", s.Name, s.Status)
				}
				after = after || s.Name == f.Step
			}
		})
	}
}
