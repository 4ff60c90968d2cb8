package config

import (
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

const overlayStep = `step_type: TabularPreprocessing
node_type: singular
registry: {sagemaker_step_type: Processing, description: a replacement}
contract: {}
config:
  fields:
    label_name: {type: string, tier: essential, description: the only field}
`

// An overlay builds schemas for the steps it replaces and shares the
// rest, leaving the original schemas as they were.
func TestSchemasOverlay(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	base, err := LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	ifaces, _, err := steps.ParseDocuments(t.Context(), []string{overlayStep})
	if err != nil {
		t.Fatal(err)
	}
	overCat, err := cat.Overlay(ifaces)
	if err != nil {
		t.Fatal(err)
	}
	over, problems := base.Overlay(overCat, []string{"TabularPreprocessing"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	before, _ := base.ForStep("TabularPreprocessing")
	after, _ := over.ForStep("TabularPreprocessing")
	if before == after {
		t.Fatal("the replaced step kept its schema")
	}
	f, ok := after.Field("label_name")
	if !ok || f.Description != "the only field" {
		t.Fatalf("label_name: %+v", f)
	}
	if f, _ := before.Field("label_name"); f != nil && f.Description == "the only field" {
		t.Fatal("the base schemas changed")
	}
	x1, _ := base.ForStep("XGBoostTraining")
	x2, _ := over.ForStep("XGBoostTraining")
	if x1 != x2 {
		t.Fatal("an untouched step's schema was rebuilt")
	}
	if n, err := over.ResolveNode("TabularPreprocessing_training"); err != nil || n.StepType != "TabularPreprocessing" {
		t.Fatalf("node: %+v %v", n, err)
	}
	if same, _ := base.Overlay(cat, nil); same != base {
		t.Fatal("an empty overlay is not the schemas themselves")
	}
}
