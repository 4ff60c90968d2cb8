package steps

import (
	"errors"
	"os"
	"path/filepath"
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

// DirsStamp changes when a file of a directory changes, even to one of
// the same size, and not otherwise.
func TestDirsStampSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := DirsStamp([]string{dir})
	write("a.step.yaml", "step_type: A\n")
	first := DirsStamp([]string{dir})
	if first == empty {
		t.Fatal("a new file is not seen")
	}
	if again := DirsStamp([]string{dir}); again != first {
		t.Fatal("the stamp changed with nothing changed")
	}
	write("a.step.yaml", "step_type: B\n")
	if DirsStamp([]string{dir}) == first {
		t.Fatal("a same-size edit is not seen")
	}
	write("notes.txt", "not a step file")
	second := DirsStamp([]string{dir})
	write("notes.txt", "still not one")
	if DirsStamp([]string{dir}) != second {
		t.Fatal("a file that is not a step interface changed the stamp")
	}
	if DirsStamp([]string{filepath.Join(dir, "missing")}) == DirsStamp([]string{dir}) {
		t.Fatal("a missing directory stamps like an existing one")
	}
}
