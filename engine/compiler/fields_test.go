package compiler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/steps"
)

// fieldHost is a DAG holding a node of one step type.
type fieldHost struct {
	dag  *dag.DAG
	node string
}

// fieldHosts finds, for every step type of the catalog, a shared DAG with
// a node of that type (or a small DAG for the types no shared DAG has).
func fieldHosts(t *testing.T) map[string]fieldHost {
	t.Helper()
	hosts := map[string]fieldHost{
		"DummyTraining": {dag: dag.New([]string{"DummyTraining"}, nil), node: "DummyTraining"},
		"LightGBMTuning": {dag: dag.New([]string{"DummyDataLoading_training", "TabularPreprocessing_training", "LightGBMTuning", "Registration"},
			[][2]string{{"DummyDataLoading_training", "TabularPreprocessing_training"}, {"TabularPreprocessing_training", "LightGBMTuning"}, {"LightGBMTuning", "Registration"}}),
			node: "LightGBMTuning"},
	}
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cat.List() {
		in := sampleInput(t, e.DAG())
		for _, c := range in.Configs {
			if _, ok := hosts[c.StepType]; ok {
				continue
			}
			for _, n := range e.DAG().Nodes {
				if strings.EqualFold(n, c.Key) {
					hosts[c.StepType] = fieldHost{dag: e.DAG(), node: n}
				}
			}
		}
	}
	return hosts
}

// fingerprint is everything a compile sends to SageMaker: the definition
// (artifact URIs are content addressed, so code and generated files show
// in it), the pipeline name and tags — or the refusal.
func fingerprint(in Input) (string, []string) {
	in.Sources = scripts(in) // real code, so what is packed with it shows
	res, err := Compile(context.Background(), in)
	if err != nil {
		return "error: " + err.Error(), nil
	}
	reported := slices.Clone(res.Warnings)
	for _, s := range res.Steps {
		reported = append(reported, s.UnusedFields...)
	}
	return fmt.Sprintf("%s\n%s\n%v", res.PipelineName, res.JSON, res.Tags), reported
}

// companions are values a field only takes effect with.
var companions = map[string]map[string]any{
	"processing_instance_type_large": {"use_large_processing_instance": true},
}

// alternatives are values other than cur a field of f's type could take,
// most likely to satisfy its constraints first.
func alternatives(f *config.Field, cur any) []any {
	var out []any
	for _, a := range f.Allowed {
		if f.Type == "array" {
			a = []any{a}
		}
		if fmt.Sprint(a) != fmt.Sprint(cur) {
			out = append(out, a)
		}
	}
	if len(out) > 0 {
		return out
	}
	switch f.Type {
	case "boolean":
		b, _ := cur.(bool)
		return []any{!b}
	case "integer":
		n, _ := cur.(int64)
		if i, ok := cur.(int); ok {
			n = int64(i)
		}
		return []any{n + 1, n - 1, int64(2), int64(60), int64(120)}
	case "number":
		x, _ := cur.(float64)
		return []any{x / 2, x + 0.1, 0.5}
	case "object":
		if f.Name == "search_space" {
			return []any{map[string]any{"categorical": []any{map[string]any{"name": "max_depth", "values": []any{"3", "6"}}}},
				map[string]any{"categorical": []any{map[string]any{"name": "lr", "values": []any{"0.1", "0.01"}}}},
				map[string]any{"categorical": []any{map[string]any{"name": "learning_rate", "values": []any{"0.1", "0.01"}}}}}
		}
		return []any{map[string]any{"id_name": "other_id"}, map[string]any{"k": "v"}}
	case "array":
		if f.Items == "object" {
			return []any{[]any{map[string]any{"Name": "validation:auc", "Regex": "auc=([0-9.]+)"}}, []any{map[string]any{"k": "v"}}}
		}
		return []any{[]any{"ml.m5.xlarge"}, []any{"application/json"}, []any{"text/csv"}, []any{"a", "b"}}
	}
	s, _ := cur.(string)
	return []any{s + "2", "ml.m5.xlarge", "ml.c5.2xlarge", "s3://other-bucket/prefix", "other.py", "sub/other.py", "other",
		"2.0.1", "1.5-1", "py311", "$[2:]", "text/csv", "application/json", "Input", "arn:aws:iam::123456789012:role/other",
		"other-bucket", "eu-west-1", "EUR", "ml.g5.xlarge"}
}

// Every config field of every built-in config class either reaches the
// request (changing it changes what is sent to SageMaker, or makes the
// compile refuse it) or is listed in UnusedConfigFields with the reason,
// and then the compiler reports it when a config sets it.
func TestEveryConfigFieldLandsOrIsReportedUnused(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every field of every step type")
	}
	_, schemas := fixtures(t)
	hosts := fieldHosts(t)
	for _, stepType := range schemas.Names() {
		t.Run(stepType, func(t *testing.T) {
			host, ok := hosts[stepType]
			if !ok {
				t.Fatalf("no DAG hosts %s", stepType)
			}
			sc, err := schemas.ForStep(stepType)
			if err != nil {
				t.Fatal(err)
			}
			base := sampleInput(t, host.dag)
			want, _ := fingerprint(base)
			var cfg config.Config
			for _, c := range base.Configs {
				if strings.EqualFold(c.Key, host.node) {
					cfg = c
				}
			}
			for _, f := range sc.Fields {
				if f.Tier == steps.TierDerived {
					continue
				}
				cur, _ := cfg.Get(f.Name)
				if f.Name == "job_type" {
					// The node name carries the job type: it lands in the
					// step name (and output paths) rather than being varied.
					if jt, _ := cur.(string); jt == "" || !strings.Contains(want, steps.Capitalize(jt)) {
						t.Errorf("%s job type %q is not in the definition", stepType, jt)
					}
					continue
				}
				lands, reported, tried := false, false, 0
				// Set on the node alone, then (pipeline-level fields such as
				// author or bucket, read from the naming step's config) on
				// every node, as a shared value.
				for _, shared := range []bool{false, true} {
					for _, alt := range alternatives(f, cur) {
						in, ok := withValue(t, host, f.Name, alt, shared)
						if !ok {
							continue
						}
						tried++
						got, warns := fingerprint(in)
						if got != want {
							lands = true
							break
						}
						for _, w := range warns {
							reported = reported || strings.Contains(w, "config field "+f.Name+" ") || strings.HasPrefix(w, f.Name+": ")
						}
					}
					if lands {
						break
					}
				}
				reason, listed := UnusedConfigFields[stepType+"."+f.Name]
				if !listed {
					reason, listed = UnusedConfigFields[f.Name]
				}
				switch {
				case lands && listed:
					t.Errorf("%s.%s reaches the request but is listed unused (%s)", stepType, f.Name, reason)
				case !lands && !reported:
					t.Errorf("%s.%s (%s, %d values tried) reaches no request and setting it reports nothing (listed unused: %v)", stepType, f.Name, f.Type, tried, listed)
				}
			}
		})
	}
}

// withValue is the host's sample input with one field of its node set;
// ok is false when the config rejects the value.
func withValue(t *testing.T, host fieldHost, field string, v any, shared bool) (Input, bool) {
	t.Helper()
	c, s := fixtures(t)
	rep, err := config.Requirements(context.Background(), host.dag, s)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, _ := config.SampleValues(rep)
	if perNode[host.node] == nil {
		perNode[host.node] = map[string]any{}
	}
	perNode[host.node][field] = v
	for k, cv := range companions[field] {
		perNode[host.node][k] = cv
	}
	if shared {
		base[field] = v
		for _, n := range host.dag.Nodes {
			if perNode[n] != nil {
				delete(perNode[n], field)
			}
		}
	}
	configs, probs, _ := s.BuildDAG(context.Background(), host.dag, base, perNode)
	if len(probs) > 0 {
		return Input{}, false
	}
	return Input{DAG: host.dag, Configs: configs, Catalog: c}, true
}
