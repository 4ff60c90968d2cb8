package steps

import (
	"errors"
	"strings"
	"testing"
)

const overlayDoc = `step_type: XGBoostTraining
registry: {sagemaker_step_type: Processing, description: a replacement}
compute: {kind: sklearn, framework_version_field: processing_framework_version}
contract:
  entry_point: replaced.py
  outputs: {out: {path: /opt/ml/processing/output}}
spec:
  outputs:
    out: {type: processing_output, property_path: "properties.ProcessingOutputConfig.Outputs['out'].S3Output.S3Uri"}
`

// An overlay replaces a step in a new catalog and leaves the original as
// it was.
func TestOverlayLeavesTheBaseCatalogAlone(t *testing.T) {
	base := loadBuiltins(t)
	before, _ := base.Get("XGBoostTraining")
	ifaces, _, err := ParseDocuments(t.Context(), []string{overlayDoc})
	if err != nil {
		t.Fatal(err)
	}
	over, err := base.Overlay(ifaces)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := over.Get("XGBoostTraining")
	if got.Contract.EntryPoint != "replaced.py" || got.Source != "step_types[0]" || string(got.Text()) != overlayDoc {
		t.Fatalf("overlay: %+v", got)
	}
	if now, _ := base.Get("XGBoostTraining"); now != before || now.Contract.EntryPoint == "replaced.py" {
		t.Fatal("the base catalog changed")
	}
	if over.Len() != base.Len() {
		t.Fatalf("a replacement changed the count: %d vs %d", over.Len(), base.Len())
	}
	if same, err := base.Overlay(nil); err != nil || same != base {
		t.Fatal("an empty overlay is not the catalog itself")
	}
}

// A step type spelled like an existing one but for case is refused, as a
// step directory file would be.
func TestOverlayRefusesCanonicalKeyClash(t *testing.T) {
	base := loadBuiltins(t)
	doc := strings.Replace(overlayDoc, "step_type: XGBoostTraining", "step_type: XgboostTraining", 1)
	ifaces, _, err := ParseDocuments(t.Context(), []string{doc})
	if err != nil {
		t.Fatal(err)
	}
	_, err = base.Overlay(ifaces)
	var oe *OverlayError
	if !errors.As(err, &oe) || oe.Documents[0].Errors[0].Rule != "canonical_key_clash" {
		t.Fatalf("err = %v", err)
	}
}
