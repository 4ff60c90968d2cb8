package enginetest

import (
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

// ToyPrepInterface is a toy Processing step type: two inputs (one
// optional), one output, a required and an optional environment variable
// and a job argument.
const ToyPrepInterface = `
step_type: ToyPreprocessing
node_type: internal
registry: {sagemaker_step_type: Processing, description: toy}
compute: {kind: sklearn, framework_version_field: framework_version}
contract:
  entry_point: toy_preprocessing.py
  inputs:
    input_data: {path: /opt/ml/processing/input/data, required: true}
    signature: {path: /opt/ml/processing/input/signature, required: false}
  outputs:
    processed_data: {path: /opt/ml/processing/output}
  env_vars:
    required: [LABEL_FIELD]
    optional: {TRAIN_RATIO: "0.7"}
  job_arguments:
    - {flag: --job_type, source: job_type}
spec:
  dependencies:
    input_data: {type: processing_output, compatible_sources: [ToySource]}
    signature: {type: processing_output, required: false, compatible_sources: [ToySource]}
  outputs:
    processed_data:
      type: processing_output
      property_path: "properties.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"
`

// ToyPrepScript satisfies ToyPrepInterface exactly.
const ToyPrepScript = `import argparse
import os


def main(input_paths, output_paths, environ_vars, job_args):
    src = input_paths["input_data"]
    sig = input_paths.get("signature")
    label = environ_vars["LABEL_FIELD"]
    ratio = float(environ_vars.get("TRAIN_RATIO", "0.7"))
    out = output_paths["processed_data"]
    return {"job_type": job_args.job_type}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_type", required=True)
    args = parser.parse_args()
    main(
        {"input_data": "/opt/ml/processing/input/data", "signature": "/opt/ml/processing/input/signature"},
        {"processed_data": "/opt/ml/processing/output"},
        {"LABEL_FIELD": os.environ["LABEL_FIELD"], "TRAIN_RATIO": os.environ.get("TRAIN_RATIO", "0.7")},
        args,
    )
`

// Interface parses a .step.yaml document or fails the test.
func Interface(t testing.TB, src string) *steps.Interface {
	t.Helper()
	iface, err := steps.Parse("toy.step.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse interface: %v", err)
	}
	return iface
}
