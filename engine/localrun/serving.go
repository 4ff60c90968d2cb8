package localrun

import (
	"context"
	"fmt"
)

// model emulates CreateModel: the model is recorded under its name.
func (ru *run) model(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	name := ru.jobName(s.Name)
	props := copyMap(args)
	props["ModelName"] = name
	props["ModelArn"] = "arn:aws:sagemaker:local:000000000000:model/" + name
	return &stepResult{props: props}, nil
}

// transform needs the serving emulation.
func (ru *run) transform(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	return nil, &stepFailure{status: StatusRuntimeUnavailable, missing: "serving", reason: fmt.Sprintf("step %s: batch transform is not emulated yet", s.Name),
		remedy: "Run the pipeline on SageMaker to exercise the transform."}
}

// registerModel emulates CreateModelPackage: the package is recorded.
func (ru *run) registerModel(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	name := ru.jobName(s.Name)
	props := copyMap(args)
	props["ModelPackageArn"] = "arn:aws:sagemaker:local:000000000000:model-package/" + name
	props["ModelPackageStatus"] = "Completed"
	return &stepResult{props: props}, nil
}
