package deps_test

import (
	"context"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
)

// The resolution report lists an optional binding from a producer outside
// the dependency's compatible_sources, with its score; Cursus binds it
// silently. (XGBoostTraining is not a listed source of
// Registration.model_metrics; its evaluation_output still scores 0.5442.)
func TestPlanReportWarnsOfBindingsOutsideSources(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	d := dag.New([]string{"XGBoostTraining", "Registration"}, [][2]string{{"XGBoostTraining", "Registration"}})
	plan, err := deps.Resolve(context.Background(), d, cat)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := deps.PlanReport(context.Background(), plan, cat)
	if err != nil {
		t.Fatal(err)
	}
	ws := rep.Report.Warnings
	if len(ws) != 1 {
		t.Fatalf("warnings = %+v", ws)
	}
	if w := ws[0]; w.Node != "Registration" || w.Dependency != "model_metrics" || w.FromNode != "XGBoostTraining" ||
		w.FromOutput != "evaluation_output" || w.Score != 0.5442 {
		t.Errorf("warning = %+v", w)
	}
	if got := rep.Report.StepDetails["Registration"].ResolvedDependencies["model_metrics"]; got != "XGBoostTraining.evaluation_output" {
		t.Errorf("model_metrics bound to %q", got)
	}
}

// Without a calibration step, Package gets no calibration model: a
// training's evaluation_output (predictions) is not one, though under the
// Cursus step data it would feed calibration_model (0.5522). The built-in
// types say so (calibration_model and calibration_output are model_artifacts).
func TestPackageTakesNoPredictionsAsCalibrationModel(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	d := dag.New([]string{"XGBoostTraining", "Package"}, [][2]string{{"XGBoostTraining", "Package"}})
	plan, err := deps.Resolve(context.Background(), d, cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range plan.Bindings["Package"] {
		if b.Dependency == "calibration_model" {
			t.Errorf("calibration_model <- %s.%s (%.4f)", b.FromNode, b.FromOutput, b.Score)
		}
	}
	if len(plan.Warnings) > 0 {
		t.Errorf("warnings = %+v", plan.Warnings)
	}
}
