package strategies

import (
	"errors"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

func TestTable(t *testing.T) {
	l := Default()
	axes := l.Axes()
	if len(axes) != 2 || axes[0].Axis != AxisSageMakerStepType || axes[1].Axis != AxisStepAssembly || axes[1].StrategyCount != 3 {
		t.Fatalf("axes: %+v", axes)
	}
	if n := len(l.List("")); n != axes[0].StrategyCount+axes[1].StrategyCount {
		t.Fatalf("list all: %d", n)
	}
	if len(l.List("nope")) != 0 {
		t.Fatal("unknown axis should list nothing")
	}
	s, err := l.Resolve(AxisStepAssembly, "step_args")
	if err != nil || s.PresetKnobs["use_step_args"] != true || s.Handler != "ProcessingHandler" {
		t.Fatalf("step_args: %+v %v", s, err)
	}
	_, err = l.Resolve(AxisSageMakerStepType, "Lambda")
	var nb *NoBuilderError
	if !errors.As(err, &nb) || !nb.Known {
		t.Fatalf("Lambda: %v", err)
	}
	_, err = l.Resolve(AxisSageMakerStepType, "Nope")
	if !errors.As(err, &nb) || nb.Known {
		t.Fatalf("Nope: %v", err)
	}
	if axis, name := Route("Processing", ""); axis != AxisStepAssembly || name != "code" {
		t.Fatalf("route: %s %s", axis, name)
	}
	if axis, name := Route("Training", "step_args"); axis != AxisSageMakerStepType || name != "Training" {
		t.Fatalf("route: %s %s", axis, name)
	}
	if got := len(l.Find("code", "")); got != 1 {
		t.Fatalf("find: %d", got)
	}
}

func TestLoadRejectsBadTables(t *testing.T) {
	for _, doc := range []string{
		"strategies: [{axis: colour, name: x, handler: H}]",
		"strategies: [{axis: step_assembly, name: x, handler: H}, {axis: step_assembly, name: x, handler: H}]",
		"strategies: [{axis: step_assembly, name: x, handler: H, knobs: missing}]",
		"strategies: [{axis: step_assembly, name: x}]",
		"knob_sets: {k: [{name: a}]}\nstrategies: [{axis: step_assembly, name: x, handler: H, knobs: k, preset_knobs: {b: 1}}]",
	} {
		if _, err := Load([]byte(doc)); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
}

// Every SageMaker step type the built-ins use routes to an implemented
// strategy.
func TestEveryBuiltinRoutes(t *testing.T) {
	cat, problems, err := steps.LoadCatalog()
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	l := Default()
	for _, n := range cat.Names() {
		iface, _ := cat.Get(n)
		s, err := l.ForInterface(iface)
		if err != nil || !s.Implemented {
			t.Errorf("%s (%s/%s): %+v %v", n, iface.Registry.SageMakerStepType, iface.Patterns.StepAssembly, s, err)
		}
		v := l.Describe(iface)
		if !v.Patterns.CreateStep.Routable || v.Patterns.CreateStep.Handler == "" || v.Note != "" {
			t.Errorf("%s: patterns %+v", n, v.Patterns.CreateStep)
		}
	}
}

func TestDescribe(t *testing.T) {
	cat, _, _ := steps.LoadCatalog()
	l := Default()
	x, _ := cat.Get("XGBoostTraining")
	v := l.Describe(x)
	if v.Patterns.CreateStep.Handler != "TrainingHandler" || v.Patterns.Compute.SDKClass != "XGBoost" ||
		v.Patterns.Outputs.OutputPathToken != "xgboost_training" {
		t.Fatalf("%+v", v.Patterns)
	}
	if got := v.Knobs["direct_input_keys"]; strings.Join(got.([]string), ",") != "input_path" {
		t.Fatalf("knobs: %v", v.Knobs)
	}
	d, _ := cat.Get("DummyDataLoading")
	dv := l.Describe(d)
	if dv.Patterns.Compute.SDKClass != "" || dv.Patterns.Compute.Builds != "SKLearnProcessor" || dv.Patterns.Outputs.OutputPathToken != "dummydataloading" || !strings.Contains(strings.Join(dv.Patterns.Inputs.Deviations, ";"), "data_source←config.data_source") {
		t.Fatalf("%+v", dv.Patterns)
	}
	r, _ := cat.Get("Registration")
	if rv := l.Describe(r); rv.Patterns.Outputs.Pattern != "sink (no outputs)" || rv.Patterns.CreateStep.Handler != "RegisterModelHandler" {
		t.Fatalf("%+v", rv.Patterns)
	}
	internal := &steps.Interface{StepType: "CradleDataLoading", Registry: steps.Registry{SageMakerStepType: steps.SMCradleDataLoading}}
	if iv := l.Describe(internal); iv.Patterns.CreateStep.Implemented || iv.Note == "" {
		t.Fatalf("internal: %+v", iv)
	}
}
