package verify

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
)

// inventedTuningYAML is the built-in PyTorchTuning interface with the best
// model read from a property no tuning job has.
func inventedTuningYAML(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../steps/catalog/pytorch_tuning.step.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(data)
	bad := strings.Replace(good, "      property_path: properties.TrainingJobSummaries[0].TrainingJobName\n      job_artifact: output/model.tar.gz\n",
		"      property_path: properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts\n", 1)
	if bad == good {
		t.Fatal("fixture: best_model property path not found")
	}
	return bad
}

// validate.step_interface and the interface gate of author.preflight_step
// reject a property path that is not in the step type's response shape.
func TestInterfaceChecksRejectInventedPropertyPaths(t *testing.T) {
	c, s := fixtures(t)
	suite := &Suite{Steps: c, Config: s}
	bad := inventedTuningYAML(t)

	rep, err := suite.CheckInterfaces(context.Background(), InterfaceRequest{YAML: bad})
	if err != nil {
		t.Fatal(err)
	}
	var found *finding.Finding
	for i, f := range rep.Results[0].Errors {
		if f.Rule == "property_path_unknown" {
			found = &rep.Results[0].Errors[i]
		}
	}
	if found == nil || rep.Results[0].OK {
		t.Fatalf("validate.step_interface accepted the invented path: %+v", rep.Results[0])
	}
	if !strings.Contains(found.Message, "Tuning step") || !strings.Contains(found.Message, "nearest valid paths: properties.BestTrainingJob.") {
		t.Errorf("finding does not name the step type and the nearest paths: %s", found.Message)
	}

	iface, err := steps.Parse("inline.step.yaml", []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	g := suite.interfaceGate(iface)
	if g.Passed || !strings.Contains(g.Detail, "spec.outputs.best_model.property_path") {
		t.Errorf("preflight interface gate: %+v", g)
	}
	builtin, _ := c.Get("PyTorchTuning")
	if g := suite.interfaceGate(builtin); !g.Passed {
		t.Errorf("the built-in interface fails the gate: %+v", g)
	}
}
