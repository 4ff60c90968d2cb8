package scaffold

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/cursus-dev/cursus/engine/steps"
)

// stubEdges is a step type whose contract exercises every branch of the
// stub: a description holding a docstring's quotes and non-ASCII text, an
// input without a path, an optional input, optional variables, a flag
// given without dashes and a flag repeated under another spelling.
const stubEdges = `
step_type: StubEdges
node_type: internal
registry: {sagemaker_step_type: Processing, description: edges}
compute: {kind: sklearn, framework_version_field: framework_version}
contract:
  entry_point: stub_edges.py
  description: 'Reads """quoted""" data — and writes “it” back'
  inputs:
    input_data: {path: /opt/ml/processing/input/data, required: true}
    no_path: {required: true}
    extra: {path: /opt/ml/processing/input/extra, required: false}
  outputs:
    processed_data: {path: /opt/ml/processing/output}
    report: {path: /opt/ml/processing/report}
  env_vars:
    required: [LABEL_FIELD, ID_FIELD]
    optional: {TRAIN_RATIO: "0.7", QUOTE: "a\"b"}
  job_arguments:
    - {flag: --job_type, source: job_type}
    - {flag: job-type, source: job_type}
    - {flag: mode, source: mode}
spec:
  dependencies:
    input_data: {type: processing_output}
    no_path: {type: processing_output}
    extra: {type: processing_output, required: false}
  outputs:
    processed_data: {type: processing_output, property_path: "properties.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"}
    report: {type: processing_output, property_path: "properties.ProcessingOutputConfig.Outputs['report'].S3Output.S3Uri"}
`

// TestScriptStubMatchesGolden: ScriptStub's output for an edge-case
// contract is byte for byte testdata/stubs/StubEdges.py, and for every
// built-in script step it has the SHA-256 testdata/stubs/digests.txt
// records (UPDATE_STUBS=true rewrites both; review the diff).
func TestScriptStubMatchesGolden(t *testing.T) {
	edges, err := steps.Parse("stub_edges.step.yaml", []byte(stubEdges))
	if err != nil {
		t.Fatal(err)
	}
	cat := loadCatalog(t)
	var digests strings.Builder
	for _, name := range cat.Names() {
		if NeedsScript(cat[name]) {
			fmt.Fprintf(&digests, "%x %s\n", sha256.Sum256([]byte(ScriptStub(cat[name], testGuide))), name)
		}
	}
	golden := map[string]string{
		filepath.Join("testdata", "stubs", "StubEdges.py"): ScriptStub(edges, testGuide),
		filepath.Join("testdata", "stubs", "digests.txt"):  digests.String(),
	}
	if strings.Count(digests.String(), "\n") < 5 {
		t.Fatalf("only %d built-in script steps", strings.Count(digests.String(), "\n"))
	}
	for file, got := range golden {
		if os.Getenv("UPDATE_STUBS") == "true" {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (UPDATE_STUBS=true writes it)", err)
		}
		if got != string(want) {
			diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(string(want)), B: difflib.SplitLines(got),
				FromFile: file, ToFile: "ScriptStub", Context: 2})
			t.Errorf("the stubs differ from %s:\n%s", file, diff)
		}
	}
}
