package config

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
)

func fixtureDAG() *dag.DAG {
	return dag.New(
		[]string{"TabularPreprocessing_training", "XGBoostTraining", "XGBoostModelEval_calibration", "XGBoostModel", "Registration"},
		[][2]string{{"TabularPreprocessing_training", "XGBoostTraining"}, {"XGBoostTraining", "XGBoostModelEval_calibration"}, {"XGBoostTraining", "XGBoostModel"}, {"XGBoostModel", "Registration"}},
	)
}

func names(fs []*Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func TestRequirements(t *testing.T) {
	s := fixtureSchemas(t)
	rep, err := Requirements(context.Background(), fixtureDAG(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Shared.Required(), ","); got != "author,bucket,role,region,service_name,pipeline_version" {
		t.Errorf("shared required = %s", got)
	}
	// framework_version has different defaults per step, so it is per node.
	for _, f := range rep.Shared.System {
		if f.Name == "framework_version" {
			t.Error("framework_version differs between steps but is shared")
		}
	}
	if got := strings.Join(names(rep.Shared.Derived), ","); got != "aws_region,pipeline_name,pipeline_description,pipeline_s3_loc" {
		t.Errorf("shared derived = %s", got)
	}
	byNode := map[string]NodeRequirements{}
	for _, n := range rep.Nodes {
		byNode[n.Node] = n
	}
	tp := byNode["TabularPreprocessing_training"]
	if tp.StepType != "TabularPreprocessing" || tp.JobType != "training" || tp.Prefilled["job_type"] != "training" {
		t.Errorf("tabular = %+v", tp)
	}
	if got := strings.Join(tp.Fields.Required(), ","); got != "label_name" {
		t.Errorf("tabular still needs %s", got)
	}
	if got := strings.Join(byNode["XGBoostTraining"].Fields.Required(), ","); got != "hyperparameters" {
		t.Errorf("training needs %s", got)
	}
	if got := strings.Join(byNode["Registration"].Fields.Required(), ","); got != "model_package_group_name" {
		t.Errorf("registration needs %s", got)
	}
	for _, f := range byNode["XGBoostModelEval_calibration"].Fields.System {
		if f.Name == "use_large_processing_instance" && (f.Default != true || f.Description == "") {
			t.Errorf("eval field = %+v", f)
		}
	}
	if byNode["XGBoostModel"].ConfigClass != "XGBoostModelStepConfig" {
		t.Errorf("class = %s", byNode["XGBoostModel"].ConfigClass)
	}

	rep, err = Requirements(context.Background(), dag.New([]string{"XGBoostTraining", "XGBoostTrainin_x", "Nope"}, nil), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unresolved) != 2 || len(rep.Nodes) != 1 {
		t.Fatalf("unresolved = %+v", rep.Unresolved)
	}
	if sg := rep.Unresolved[0].Suggestions; len(sg) == 0 || sg[0] != "XGBoostTraining" {
		t.Errorf("suggestions = %v", rep.Unresolved[0])
	}
	if _, err := Requirements(context.Background(), dag.New(nil, nil), s); err == nil {
		t.Error("empty DAG accepted")
	}
}

// Requirements → sample essentials → build → config.json → load → save
// gives the same bytes.
func TestSampleValuesRoundTrip(t *testing.T) {
	s := fixtureSchemas(t)
	d := fixtureDAG()
	rep, err := Requirements(context.Background(), d, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := SampleValues(rep)
	if len(missing) > 0 {
		t.Fatalf("no sample for %v", missing)
	}
	configs, probs, _ := s.BuildDAG(context.Background(), d, base, perNode)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	out, err := Marshal(configs, "2025-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(out, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) > 0 {
		t.Errorf("warnings: %v", f.Warnings)
	}
	if strings.Join(f.Keys(), ",") != "Registration,TabularPreprocessing_training,XGBoostModel,XGBoostModelEval_calibration,XGBoostTraining" {
		t.Errorf("keys = %v", f.Keys())
	}
	again, _ := Marshal(f.Configs, "2025-01-01T00:00:00Z")
	if !bytes.Equal(out, again) {
		t.Errorf("not byte-stable:\n%s\n---\n%s", out, again)
	}
}

func TestBuildDAGProblems(t *testing.T) {
	s := fixtureSchemas(t)
	d := fixtureDAG()
	base := validBase()
	base["procesing_volume_size"] = 3
	base["pipeline_s3_loc"] = "s3://x"
	configs, probs, _ := s.BuildDAG(context.Background(), d, base, map[string]map[string]any{
		"TabularPreprocessing_training": {"job_type": "calibration", "label_name": "y"},
		"XGBoostTraining":               {"hyperparameters": "not an object"},
		"Ghost":                         {},
	})
	type key struct{ node, field, kind string }
	got := map[key]bool{}
	for _, p := range probs {
		got[key{p.Node, p.Field, p.Kind}] = true
	}
	for _, want := range []key{
		{"TabularPreprocessing_training", "job_type", KindRule},
		{"XGBoostTraining", "hyperparameters", KindType},
		{"XGBoostModelEval_calibration", "id_name", KindMissing},
		{"Registration", "model_package_group_name", KindMissing},
		{"Ghost", "", KindUnknown},
		{"", "procesing_volume_size", KindUnknown},
		{"", "pipeline_s3_loc", KindUnknown},
	} {
		if !got[want] {
			t.Errorf("missing problem %+v in %v", want, probs)
		}
	}
	for _, c := range configs {
		if c.Key == "XGBoostModelEval_calibration" && c.JobType != "calibration" {
			t.Errorf("job type not taken from the node: %q", c.JobType)
		}
	}
}

func TestSampleValueConstraints(t *testing.T) {
	min5 := 5.0
	for _, f := range []*Field{
		{Name: "x", Field: fieldOf("integer", &min5, nil)},
		{Name: "y", Field: fieldOf("string", nil, nil)},
	} {
		if err := checkDecl(f); err != "" {
			t.Fatal(err)
		}
		v, ok := SampleValue(f)
		if !ok {
			t.Errorf("%s: no sample", f.Name)
		}
		if _, probs := checkValue(f, v); len(probs) > 0 {
			t.Errorf("%s: sample %v invalid: %v", f.Name, v, probs)
		}
	}
	impossible := &Field{Name: "z", Field: fieldOf("string", nil, nil)}
	impossible.Pattern = `^\d{40}$`
	_ = checkDecl(impossible)
	if _, ok := SampleValue(impossible); ok {
		t.Error("a sample that breaks the pattern was reported as valid")
	}
}
