package compiler

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// Acceptance: every built-in shared DAG, with configs from the config
// requirements and sample values, compiles to a definition that validates
// against the SDK schema, compiles to the same bytes twice, and only
// references outputs its producers have.
func TestSharedDAGsCompile(t *testing.T) {
	cat, probs, err := pipelines.Load()
	if err != nil || len(probs) > 0 {
		t.Fatalf("pipelines: %v %v", err, probs)
	}
	if len(cat.List()) == 0 {
		t.Fatal("no shared DAGs")
	}
	for _, e := range cat.List() {
		t.Run(e.ID, func(t *testing.T) {
			in := sampleInput(t, e.DAG())
			res, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			sagemakertest.MustValidate(t, res.JSON)
			again, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.JSON, again.JSON) {
				t.Fatal("two compiles of the same input differ")
			}
			checkReferences(t, in, res)
			if len(res.Steps) != len(e.DAG().Nodes) {
				t.Fatalf("%d steps for %d nodes", len(res.Steps), len(e.DAG().Nodes))
			}
		})
	}
}

// checkReferences walks every Get in the definition: parameters must be
// declared, execution variables known, and step references must name an
// earlier step and a property path one of that step type's outputs has.
func checkReferences(t *testing.T, in Input, res *Result) {
	t.Helper()
	refs, err := sagemaker.References(res.JSON)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]bool{}
	for _, p := range res.Definition.Parameters {
		params[p.Name] = true
	}
	paths := map[string]map[string]bool{} // step name → property paths of its outputs
	c, _ := fixtures(t)
	for _, s := range res.Steps {
		iface, _, err := c.ForJobType(s.StepType, s.JobType)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, name := range iface.Spec.Outputs.Keys() {
			o, _ := iface.Spec.Outputs.Get(name)
			m[sagemaker.TrimPropertiesPrefix(o.PropertyPath)] = true
		}
		paths[s.StepName] = m
	}
	steps := 0
	for _, r := range refs {
		switch {
		case strings.HasPrefix(r, "Parameters."):
			if !params[strings.TrimPrefix(r, "Parameters.")] {
				t.Errorf("reference to undeclared parameter %s", r)
			}
		case strings.HasPrefix(r, "Execution."):
			if v := strings.TrimPrefix(r, "Execution."); v != "PipelineName" && v != "PipelineExecutionId" {
				t.Errorf("unknown execution variable %s", r)
			}
		case strings.HasPrefix(r, "Steps."):
			steps++
			rest := strings.TrimPrefix(r, "Steps.")
			dot := strings.Index(rest, ".")
			name, path := rest[:dot], rest[dot+1:]
			outs, ok := paths[name]
			if !ok {
				t.Errorf("reference %s names no step", r)
				continue
			}
			if !outs[path] {
				t.Errorf("reference %s: step %s has no output with property path %s", r, name, path)
			}
		default:
			t.Errorf("unexpected reference %s", r)
		}
	}
	if len(in.DAG.Edges) > 0 && steps == 0 {
		t.Error("a DAG with edges compiled without any step reference")
	}
}
