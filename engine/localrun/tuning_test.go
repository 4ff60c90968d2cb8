package localrun

import (
	"strings"
	"testing"
)

// A tuning step runs the run's number of trials with the range sampled,
// parses each trial's objective from its log and picks the best as
// SageMaker does; a model reads the best trial's model.tar.gz through the
// tuning step's properties.
func TestTuningPicksTheBestTrial(t *testing.T) {
	needRuntime(t, "xgboost")
	def, code := tinyPipeline(t)
	train := stepOf(def, "Train")
	ta := train["Arguments"].(map[string]any)
	hps := ta["HyperParameters"].(map[string]any)
	delete(hps, "eta")
	train["Type"] = "Tuning"
	train["Arguments"] = map[string]any{
		"HyperParameterTuningJobConfig": map[string]any{
			"Strategy":                         "Bayesian",
			"HyperParameterTuningJobObjective": map[string]any{"Type": "Maximize", "MetricName": "validation:accuracy"},
			"ResourceLimits":                   map[string]any{"MaxNumberOfTrainingJobs": 10, "MaxParallelTrainingJobs": 1},
			"ParameterRanges": map[string]any{
				"ContinuousParameterRanges":  []any{map[string]any{"Name": "eta", "MinValue": "0.05", "MaxValue": "0.6", "ScalingType": "Auto"}},
				"IntegerParameterRanges":     []any{},
				"CategoricalParameterRanges": []any{},
			},
		},
		"TrainingJobDefinition": map[string]any{
			"StaticHyperParameters": hps,
			"AlgorithmSpecification": map[string]any{"TrainingImage": xgbImage, "TrainingInputMode": "File",
				"MetricDefinitions": []any{map[string]any{"Name": "validation:accuracy", "Regex": "validation:accuracy=([0-9\\.]+)"}}},
			"InputDataConfig":  ta["InputDataConfig"],
			"OutputDataConfig": ta["OutputDataConfig"],
		},
	}
	best := join(get("Parameters.Prefix"), "train", get("Steps.Train.BestTrainingJob.TrainingJobName"), "output/model.tar.gz")
	args(def, "Model")["PrimaryContainer"].(map[string]any)["ModelDataUrl"] = best
	args(def, "Register")["InferenceSpecification"].(map[string]any)["Containers"].([]any)[0].(map[string]any)["ModelDataUrl"] = best
	r := testRunner(t, Settings{MaxTrials: 3})
	rep := runTiny(t, r, def, code, "")
	if !rep.OK {
		t.Fatalf("not ok: %+v\n%s", rep.FirstFailure, logs(rep))
	}
	tr := stepReport(t, rep, "Train")
	if len(tr.Trials) != 3 {
		t.Fatalf("%d trials, want 3: %+v", len(tr.Trials), tr.Trials)
	}
	var bestName string
	bestValue := -1.0
	etas := map[string]bool{}
	for _, trial := range tr.Trials {
		if trial.Objective == nil {
			t.Fatalf("trial %s has no objective", trial.TrainingJobName)
		}
		etas[trial.HyperParameters["eta"]] = true
		if *trial.Objective > bestValue {
			bestName, bestValue = trial.TrainingJobName, *trial.Objective
		}
	}
	if len(etas) != 3 {
		t.Errorf("the trials did not sample distinct values: %v", etas)
	}
	got := tr.Properties["BestTrainingJob"].(map[string]any)
	if got["TrainingJobName"] != bestName || !strings.HasPrefix(bestName, "pipelines-") {
		t.Errorf("best = %v, want %s (%v)", got["TrainingJobName"], bestName, tr.Trials)
	}
	// The same request samples the same values.
	again := stepReport(t, runTiny(t, r, def, code, ""), "Train")
	for i := range again.Trials {
		if again.Trials[i].HyperParameters["eta"] != tr.Trials[i].HyperParameters["eta"] {
			t.Errorf("trial %d: eta %s then %s", i, tr.Trials[i].HyperParameters["eta"], again.Trials[i].HyperParameters["eta"])
		}
	}
}
