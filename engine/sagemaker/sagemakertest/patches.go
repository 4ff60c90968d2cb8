package sagemakertest

import (
	"fmt"
	"slices"
)

// Patches lists what applyPatches adds to the shared SDK-compatible schema
// before definitions are checked against it. Each is a key or value the
// SageMaker API takes and the SageMaker Python SDK emits in a pipeline
// definition, which the shared schema (derived from the stale published
// one) still rejects. The list is short, names each change, and adds no
// key the API lacks; everything else the shared schema says stands.
var Patches = []string{
	"TrainingStep.Arguments.Environment (CreateTrainingJob Environment; the SDK emits an estimator's environment)",
	"TuningStep.Arguments.TrainingJobDefinition.Environment (HyperParameterTrainingJobDefinition Environment)",
	"RegisterModelStep.Arguments.InferenceSpecification.Containers[].Environment (ModelPackageContainerDefinition Environment; the SDK's RegisterModel sets SAGEMAKER_PROGRAM, SAGEMAKER_SUBMIT_DIRECTORY, SAGEMAKER_CONTAINER_LOG_LEVEL, SAGEMAKER_REGION)",
	"TuningStep.Arguments.HyperParameterTuningJobConfig.Strategy accepts Hyperband and Grid (HyperParameterTuningJobStrategyType)",
	"TuningStep.Arguments.HyperParameterTuningJobConfig.ResourceLimits.MaxNumberOfTrainingJobs is optional (the API's ResourceLimits requires only MaxParallelTrainingJobs; the SDK omits it for Grid)",
}

// applyPatches makes the changes Patches lists to the decoded schema. A
// schema whose shape no longer has a patched place is an error, so a
// changed shared schema is noticed rather than silently left unpatched.
func applyPatches(doc map[string]any) error {
	defs, err := obj(doc, "definitions")
	if err != nil {
		return err
	}
	env := map[string]any{"type": "object", "patternProperties": map[string]any{".*": map[string]any{"$ref": "#/definitions/StringArgumentValue"}}}
	for _, path := range [][]string{
		{"TrainingStep", "properties", "Arguments", "properties"},
		{"HyperParameterTrainingJobDefinition", "properties"},
		{"RegisterModelStep", "properties", "Arguments", "properties", "InferenceSpecification", "properties", "Containers", "items", "properties"},
	} {
		props, err := obj(defs, path...)
		if err != nil {
			return err
		}
		props["Environment"] = env
	}
	cfg, err := obj(defs, "TuningStep", "properties", "Arguments", "properties", "HyperParameterTuningJobConfig", "properties")
	if err != nil {
		return err
	}
	strategy, err := obj(cfg, "Strategy")
	if err != nil {
		return err
	}
	enum, _ := strategy["enum"].([]any)
	for _, s := range []any{"Hyperband", "Grid"} {
		if !slices.Contains(enum, s) {
			enum = append(enum, s)
		}
	}
	strategy["enum"] = enum
	limits, err := obj(cfg, "ResourceLimits")
	if err != nil {
		return err
	}
	limits["required"] = []any{"MaxParallelTrainingJobs"}
	return nil
}

func obj(m map[string]any, path ...string) (map[string]any, error) {
	cur := m
	for i, k := range path {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("schema patch: no object at %v", path[:i+1])
		}
		cur = next
	}
	return cur, nil
}
