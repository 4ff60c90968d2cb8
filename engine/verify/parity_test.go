package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/workspace"
)

func fixtures(t testing.TB) (*steps.Catalog, *config.Schemas) { return enginetest.Catalog(t) }

// Acceptance: for every Processing step of the example project and of
// every built-in shared DAG, the environment and command line
// validate.run_scripts starts the script with are the compiled
// definition's Environment and ContainerArguments.
func TestRunScriptsStartsScriptsAsCompiled(t *testing.T) {
	_, s := fixtures(t)
	t.Run("example", func(t *testing.T) {
		g := readDAG(t, "../../examples/xgboost-tabular/dag.json")
		data, err := os.ReadFile("../../examples/xgboost-tabular/config.json")
		if err != nil {
			t.Fatal(err)
		}
		// A large whole number in float form: JSON gives 1e+06 and the
		// pipeline definition says 1000000.
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		specific := doc["configuration"].(map[string]any)["specific"].(map[string]any)
		specific["Payload"].(map[string]any)["default_numeric_value"] = 1e6
		if data, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		checkParity(t, g, data)
	})
	dags, probs, err := pipelines.Load()
	if err != nil || len(probs) > 0 {
		t.Fatalf("pipelines: %v %v", err, probs)
	}
	for _, e := range dags.List() {
		t.Run(e.ID, func(t *testing.T) {
			g := e.DAG()
			rep, err := config.Requirements(context.Background(), g, s)
			if err != nil {
				t.Fatal(err)
			}
			base, perNode, missing := config.SampleValues(rep)
			if len(missing) > 0 {
				t.Fatalf("no sample values for %v", missing)
			}
			withLargeNumbers(t, g, perNode)
			configs, cprobs, _ := s.BuildDAG(context.Background(), g, base, perNode)
			if len(cprobs) > 0 {
				t.Fatalf("config problems: %v", cprobs)
			}
			data, err := config.Marshal(configs, "2026-01-01T00:00:00Z")
			if err != nil {
				t.Fatal(err)
			}
			checkParity(t, g, data)
		})
	}
}

// withLargeNumbers gives every Payload node a default numeric value that
// JSON writes as 1e+06.
func withLargeNumbers(t *testing.T, g *dag.DAG, perNode map[string]map[string]any) {
	c, _ := fixtures(t)
	for _, n := range g.Nodes {
		if res, err := c.Resolve(n); err == nil && res.StepType == "Payload" {
			if perNode[n] == nil {
				perNode[n] = map[string]any{}
			}
			perNode[n]["default_numeric_value"] = 1e6
		}
	}
}

func readDAG(t *testing.T, file string) *dag.DAG {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	g, err := dag.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkParity plans a run of g with configJSON in a workspace of stub
// scripts, compiles the same config file and compares each Processing
// step's start values.
func checkParity(t *testing.T, g *dag.DAG, configJSON []byte) {
	t.Helper()
	c, s := fixtures(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), configJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	writeStubScripts(t, c, filepath.Join(dir, "scripts"))
	root, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	suite := &Suite{Steps: c, Config: s, Root: root}
	plan, err := suite.PlanScripts(context.Background(), RunScriptsRequest{Nodes: g.Nodes, Edges: g.Edges,
		ConfigPath: "config.json", Search: ScriptSearch{SourceDir: "scripts"}})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	runs := map[string]PlannedRun{}
	for _, r := range plan.Runs {
		runs[r.Node] = r
	}

	f, err := config.Parse(configJSON, s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(context.Background(), compiler.Input{DAG: g, Configs: f.Configs, Catalog: c})
	if err != nil {
		t.Fatal(err)
	}
	nodeOf := map[string]string{}
	for _, st := range res.Steps {
		nodeOf[st.StepName] = st.Node
	}
	var def struct {
		Steps []struct {
			Name      string
			Type      string
			Arguments struct {
				Environment      map[string]any
				AppSpecification struct{ ContainerArguments []any }
			}
		}
	}
	if err := json.Unmarshal(res.JSON, &def); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, st := range def.Steps {
		if st.Type != "Processing" {
			continue
		}
		run, ok := runs[nodeOf[st.Name]]
		if !ok {
			t.Errorf("%s: Processing step %s has no planned run (skipped: %q)", nodeOf[st.Name], st.Name, plan.Skipped[nodeOf[st.Name]])
			continue
		}
		env, _, argv := scriptrun.Invocation(run.Interface.Contract, run.Env, run.JobArgs)
		if want := stringMap(t, st.Arguments.Environment); !reflect.DeepEqual(env, want) {
			t.Errorf("%s: run_scripts environment\n%v\nwant the compiled\n%v", run.Node, env, want)
		}
		if want := stringList(t, st.Arguments.AppSpecification.ContainerArguments); !reflect.DeepEqual(argv, want) {
			t.Errorf("%s: run_scripts arguments %q, want the compiled %q", run.Node, argv, want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no Processing step was compared")
	}
	t.Logf("%d Processing step(s) compared", checked)
}

// writeStubScripts writes an empty script for the entry point of every
// step type and job-type variant.
func writeStubScripts(t *testing.T, c *steps.Catalog, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Names() {
		base, _ := c.Get(n)
		ifaces := []*steps.Interface{base}
		for _, v := range base.Variants.Keys() {
			iface, _, err := c.ForJobType(n, v)
			if err != nil {
				t.Fatal(err)
			}
			ifaces = append(ifaces, iface)
		}
		for _, iface := range ifaces {
			if e := iface.Contract.EntryPoint; e != "" {
				if err := os.WriteFile(filepath.Join(dir, e), []byte("def main(*args):\n    pass\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func stringMap(t *testing.T, m map[string]any) map[string]string {
	t.Helper()
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("environment %s is %T, not a string", k, v)
		}
		out[k] = s
	}
	return out
}

func stringList(t *testing.T, l []any) []string {
	t.Helper()
	var out []string
	for _, v := range l {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("container argument %v is %T, not a string", v, v)
		}
		out = append(out, s)
	}
	return out
}
