package config

import (
	"context"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
)

// The DAG's training framework sets model_class on every node: in a
// LightGBM or PyTorch pipeline no node's pipeline name says xgboost, built
// for the DAG and reloaded from the saved file alike.
func TestDAGFrameworkSetsModelClassOnEveryNode(t *testing.T) {
	s := builtinSchemas(t)
	checked := 0
	for _, e := range nonXGBoostDAGs(t, s) {
		checked++
		d, rep, family := e.dag, e.rep, e.family
		base, perNode, _ := SampleValues(rep)
		configs, probs, err := s.BuildDAG(context.Background(), d, base, perNode)
		if err != nil || len(probs) > 0 {
			t.Fatalf("%s: %v %v", e.ID, err, probs)
		}
		out, err := Marshal(configs, "2025-01-01T00:00:00Z")
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(out, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range [][]Config{configs, f.Configs} {
			for _, c := range set {
				name, _ := c.Get("pipeline_name")
				if mc, ok := c.Values["model_class"]; ok && mc != family || !strings.Contains(name.(string), family) {
					t.Errorf("%s: node %s has model_class %v and pipeline name %v; the DAG trains %s", e.ID, c.Key, mc, name, family)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no shared DAG trains a framework other than xgboost")
	}
}

// A model_class the user set that differs from the framework the file's
// training step trains is a finding; one that agrees is not.
func TestModelClassConflictingWithTheTrainedFrameworkIsAFinding(t *testing.T) {
	s := builtinSchemas(t)
	file := func(modelClass string) string {
		return `{"configuration": {"shared": {"author": "jdoe", "bucket": "b", "role": "arn:aws:iam::123456789012:role/R", "region": "NA",
			"service_name": "svc", "pipeline_version": "1.0.0", "model_class": "` + modelClass + `"},
			"specific": {"LightGBMTraining": {}, "TabularPreprocessing_training": {"job_type": "training", "label_name": "label"}}},
			"metadata": {"config_types": {"LightGBMTraining": "LightGBMTrainingConfig", "TabularPreprocessing_training": "TabularPreprocessingConfig"}}}`
	}
	conflict := func(f *File) bool {
		for _, w := range f.Warnings {
			if strings.Contains(w, "TabularPreprocessing_training") && strings.Contains(w, `model_class "xgboost" differs`) {
				return true
			}
		}
		return false
	}
	f, err := ParseForCheck([]byte(file("xgboost")), s)
	if err != nil {
		t.Fatal(err)
	}
	if !conflict(f) {
		t.Fatalf("no finding for model_class xgboost in a LightGBM pipeline: %v", f.Warnings)
	}
	f, err = ParseForCheck([]byte(file("lightgbm")), s)
	if err != nil {
		t.Fatal(err)
	}
	if conflict(f) {
		t.Fatalf("a finding for the framework trained: %v", f.Warnings)
	}
}

// TestRequirementsDefaultModelClassToTheDAGFramework: config.requirements'
// report gives every node of a LightGBM or PyTorch DAG the model_class
// default the built configs get (the family the DAG trains), not the base
// layer's xgboost.
func TestRequirementsDefaultModelClassToTheDAGFramework(t *testing.T) {
	s := builtinSchemas(t)
	checked := 0
	for _, e := range nonXGBoostDAGs(t, s) {
		rep, family := e.rep, e.family
		check := func(where string, g FieldGroups) {
			for _, fs := range [][]*Field{g.Essential, g.System, g.Derived} {
				for _, f := range fs {
					if f.Name == "model_class" {
						checked++
						if f.Default != family {
							t.Errorf("%s: %s defaults model_class to %v; the DAG trains %s", e.ID, where, f.Default, family)
						}
					}
				}
			}
		}
		check("shared", rep.Shared)
		for _, n := range rep.Nodes {
			check(n.Node, n.Fields)
		}
	}
	if checked == 0 {
		t.Fatal("no model_class field in any report")
	}
}

// frameworkDAG is a shared DAG with its framework and requirements report.
type frameworkDAG struct {
	ID     string
	dag    *dag.DAG
	family string
	rep    *RequirementsReport
}

// nonXGBoostDAGs are the shared DAGs that train a framework other than
// xgboost, the base layer's default, each with its requirements report.
func nonXGBoostDAGs(t *testing.T, s *Schemas) []frameworkDAG {
	t.Helper()
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []frameworkDAG
	for _, e := range cat.List() {
		d := e.DAG()
		family := s.dagFamily(d)
		if family == "" || family == "xgboost" {
			continue
		}
		rep, err := Requirements(context.Background(), d, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, frameworkDAG{ID: e.ID, dag: d, family: family, rep: rep})
	}
	return out
}
