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
