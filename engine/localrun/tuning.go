package localrun

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

type numericRange struct {
	Name        string `json:"Name"`
	MinValue    string `json:"MinValue"`
	MaxValue    string `json:"MaxValue"`
	ScalingType string `json:"ScalingType"`
}

type tuningArgs struct {
	HyperParameterTuningJobConfig struct {
		Strategy  string `json:"Strategy"`
		Objective struct {
			Type       string `json:"Type"`
			MetricName string `json:"MetricName"`
		} `json:"HyperParameterTuningJobObjective"`
		ResourceLimits struct {
			MaxNumberOfTrainingJobs int `json:"MaxNumberOfTrainingJobs"`
		} `json:"ResourceLimits"`
		ParameterRanges struct {
			ContinuousParameterRanges  []numericRange `json:"ContinuousParameterRanges"`
			IntegerParameterRanges     []numericRange `json:"IntegerParameterRanges"`
			CategoricalParameterRanges []struct {
				Name   string   `json:"Name"`
				Values []string `json:"Values"`
			} `json:"CategoricalParameterRanges"`
		} `json:"ParameterRanges"`
	} `json:"HyperParameterTuningJobConfig"`
	TrainingJobDefinition struct {
		trainingArgs
		StaticHyperParameters map[string]any `json:"StaticHyperParameters"`
	} `json:"TrainingJobDefinition"`
}

// tuning emulates a hyperparameter tuning job: a few trials (the run's
// max trials, at most the job's MaxNumberOfTrainingJobs) with the ranges
// sampled deterministically, each a training job whose objective is
// parsed from its log with the metric definitions' regexes; the best by
// the objective's type, as SageMaker picks it.
func (ru *run) tuning(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	var a tuningArgs
	if err := decode(args, &a); err != nil {
		return nil, fail("Arguments", "Regenerate the definition: compile it again with its report.", "the tuning arguments do not decode: %v", err)
	}
	cfg := a.HyperParameterTuningJobConfig
	obj := cfg.Objective
	defs := a.TrainingJobDefinition.AlgorithmSpecification.MetricDefinitions
	objField := "Arguments.HyperParameterTuningJobConfig.HyperParameterTuningJobObjective.MetricName"
	var regex string
	for _, d := range defs {
		if d.Name == obj.MetricName {
			regex = d.Regex
		}
	}
	if regex == "" {
		return nil, fail(objField, "Add a MetricDefinitions entry named like the objective (or name the objective after one).",
			"the objective metric %q has no metric definition to parse it from the log", obj.MetricName)
	}
	trials := ru.r.set.MaxTrials
	if ru.req.MaxTrials > 0 {
		trials = min(ru.req.MaxTrials, MaxTrialsCap)
	}
	if n := cfg.ResourceLimits.MaxNumberOfTrainingJobs; n > 0 && n < trials {
		trials = n
	}
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	rng := rand.New(rand.NewPCG(h.Sum64(), 35))
	tuningName := ru.jobName(s.Name)
	if len(tuningName) > 32 {
		tuningName = strings.TrimRight(tuningName[:32], "-")
	}
	res := &stepResult{}
	type done struct {
		trial Trial
		value float64
	}
	var ok []done
	var lastErr error
	for i := 0; i < trials; i++ {
		tuned, err := sample(rng, a, i, trials)
		if err != nil {
			return res, err
		}
		hps := map[string]any{}
		for k, v := range a.TrainingJobDefinition.StaticHyperParameters {
			hps[k] = v
		}
		for k, v := range tuned {
			hps[k] = v
		}
		name := fmt.Sprintf("%s-%03d-%08x", tuningName, i+1, rng.Uint32())
		tj, err := ru.trainingJob(ctx, s.Name, name, "Arguments.TrainingJobDefinition", a.TrainingJobDefinition.trainingArgs, hps)
		t := Trial{TrainingJobName: name, HyperParameters: tuned, Status: "Completed"}
		if tj != nil && tj.res != nil {
			res.script += tj.res.script
			res.logTail = tail(tj.res.log, ru.r.set.LogTailBytes)
		}
		if err != nil {
			t.Status = "Failed"
			res.trials = append(res.trials, t)
			if f := asFailure(err); f.fatal != nil || f.status == StatusRuntimeUnavailable {
				return res, err
			}
			lastErr = err
			continue
		}
		v, found := tj.metrics[obj.MetricName]
		if found {
			t.Objective = &v
			ok = append(ok, done{t, v})
		}
		res.trials = append(res.trials, t)
	}
	if len(ok) == 0 {
		if lastErr != nil {
			return res, lastErr
		}
		return res, fail("Arguments.TrainingJobDefinition.AlgorithmSpecification.MetricDefinitions",
			fmt.Sprintf("Make the training script print the objective %s in a line its regex %q matches.", obj.MetricName, regex),
			"no trial logged the objective metric %s", obj.MetricName)
	}
	maximize := !strings.EqualFold(obj.Type, "Minimize")
	sort.SliceStable(ok, func(i, j int) bool {
		if maximize {
			return ok[i].value > ok[j].value
		}
		return ok[i].value < ok[j].value
	})
	summary := func(d done) map[string]any {
		tuned := map[string]any{}
		for k, v := range d.trial.HyperParameters {
			tuned[k] = v
		}
		return map[string]any{"TrainingJobName": d.trial.TrainingJobName, "TrainingJobStatus": "Completed",
			"TrainingJobArn":                              "arn:aws:sagemaker:local:000000000000:training-job/" + d.trial.TrainingJobName,
			"TunedHyperParameters":                        tuned,
			"FinalHyperParameterTuningJobObjectiveMetric": map[string]any{"MetricName": obj.MetricName, "Value": d.value, "Type": obj.Type}}
	}
	var summaries []any
	for _, d := range ok {
		summaries = append(summaries, summary(d))
	}
	props := copyMap(args)
	props["HyperParameterTuningJobName"] = tuningName
	props["HyperParameterTuningJobStatus"] = "Completed"
	props["BestTrainingJob"] = summary(ok[0])
	props["TrainingJobSummaries"] = summaries
	res.props = props
	return res, nil
}

// sample picks trial i's values of every range: numeric ranges spread
// over the trials (shuffled per parameter, on a log scale when the range
// says Logarithmic), categorical ones in turn. Values are strings, as
// SageMaker passes tuned hyperparameters.
func sample(rng *rand.Rand, a tuningArgs, i, n int) (map[string]string, error) {
	out := map[string]string{}
	pr := a.HyperParameterTuningJobConfig.ParameterRanges
	frac := func() float64 { return (float64(i) + rng.Float64()) / float64(n) }
	num := func(kind string, r numericRange) (float64, error) {
		lo, err1 := strconv.ParseFloat(r.MinValue, 64)
		hi, err2 := strconv.ParseFloat(r.MaxValue, 64)
		if err1 != nil || err2 != nil || hi < lo {
			return 0, fail("Arguments.HyperParameterTuningJobConfig.ParameterRanges."+kind, "Give numeric MinValue ≤ MaxValue.",
				"range %s [%q, %q] is not a numeric range", r.Name, r.MinValue, r.MaxValue)
		}
		f := frac()
		if strings.EqualFold(r.ScalingType, "Logarithmic") && lo > 0 {
			return math.Exp(math.Log(lo) + f*(math.Log(hi)-math.Log(lo))), nil
		}
		return lo + f*(hi-lo), nil
	}
	for _, r := range pr.ContinuousParameterRanges {
		v, err := num("ContinuousParameterRanges", r)
		if err != nil {
			return nil, err
		}
		out[r.Name] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	for _, r := range pr.IntegerParameterRanges {
		v, err := num("IntegerParameterRanges", r)
		if err != nil {
			return nil, err
		}
		out[r.Name] = strconv.Itoa(int(math.Round(v)))
	}
	for _, r := range pr.CategoricalParameterRanges {
		if len(r.Values) == 0 {
			return nil, fail("Arguments.HyperParameterTuningJobConfig.ParameterRanges.CategoricalParameterRanges", "List the values to try.",
				"categorical range %s has no values", r.Name)
		}
		out[r.Name] = r.Values[(i+int(rng.IntN(len(r.Values))))%len(r.Values)]
	}
	return out, nil
}
