package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/scaffold"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// TestProjectInitThenPreflightAndCompile is issue 7 acceptance 4, through the
// tools on a temporary workspace: for every framework with a starter DAG,
// project.init scaffolds a project whose every stub passes
// author.preflight_step, whose config template does not compile while it
// holds nulls, and does once the nulls are filled with sample values.
func TestProjectInitThenPreflightAndCompile(t *testing.T) {
	dir := t.TempDir()
	d, err := NewDeps(Options{WorkspaceRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(d)...)
	if err != nil {
		t.Fatal(err)
	}
	root := d.Root.Dir()
	scaffolded := 0
	for _, fw := range scaffold.Frameworks() {
		t.Run(fw, func(t *testing.T) {
			res := call(t, reg, "project.init", fmt.Sprintf(`{"name": "acc", "framework": %q, "target_dir": "projects"}`, fw))
			data := answer[projectInitOut](t, res)
			tmpl := data.ConfigTemplate
			if tmpl == "" {
				// No starter DAG for this framework: nothing to compile, and
				// the result must say why.
				if len(data.DAGNodes) != 0 || len(res.Warnings) == 0 {
					t.Errorf("no config template but nodes or no note: %s", res.Encode())
				}
				return
			}
			scaffolded++
			if !data.Ready {
				t.Errorf("scaffold not ready: %+v", data.Scripts)
			}
			target, dagFile, stubs := data.TargetPath, data.DAGFile, data.Scripts
			if len(stubs) == 0 {
				t.Fatal("no script stubs")
			}

			for _, s := range stubs {
				st := s.StepType
				pre := call(t, reg, "author.preflight_step", fmt.Sprintf(`{"step_name": %q, "source_dir": %q}`, st, target+"/scripts"))
				gates := answer[verify.PreflightReport](t, pre).Gates
				if len(gates) == 0 {
					t.Errorf("%s: preflight ran no gates", st)
				}
				for _, g := range gates {
					if !g.Passed {
						t.Errorf("%s: gate %v did not pass: %+v", st, g.Name, g)
					}
				}
			}

			args := fmt.Sprintf(`{"dag_file": %q, "config_file": %q}`, dagFile, tmpl)
			// The unfilled template is a finding of every node, not a failure.
			unfilled := answer[compiler.ValidationResult](t, call(t, reg, "compile.validate", args))
			if unfilled.IsValid || len(unfilled.ConfigErrors) == 0 {
				t.Fatalf("the unfilled template validated: %+v", unfilled)
			}
			mustFail(t, call(t, reg, "compile.with_report", args), registry.CodeConfigInvalid)

			filled := fillTemplate(t, d, root, dagFile, tmpl, data.ToFill)
			if err := os.WriteFile(filepath.Join(root, tmpl), filled, 0o644); err != nil {
				t.Fatal(err)
			}
			if v := answer[compiler.ValidationResult](t, call(t, reg, "compile.validate", args)); !v.IsValid {
				t.Fatalf("compile.validate on the filled template: %+v", v)
			}
			// And it really compiles: one pipeline step per DAG node.
			rep := answer[compileReport](t, call(t, reg, "compile.with_report", args))
			b, err := json.Marshal(rep.Definition)
			if err != nil {
				t.Fatal(err)
			}
			var def struct {
				Steps []json.RawMessage `json:"Steps"`
			}
			if err := json.Unmarshal(b, &def); err != nil {
				t.Fatalf("definition: %v", err)
			}
			if got, want := len(def.Steps), len(data.DAGNodes); got != want {
				t.Errorf("definition has %d steps for %d DAG nodes", got, want)
			}
		})
	}
	if scaffolded == 0 {
		t.Fatal("no framework produced a project with a config template")
	}
}

// fillTemplate replaces every null of the template with the engine's sample
// value for that field (config.SampleValues over the DAG's requirements),
// and checks that the nulls are exactly the template's to_fill list.
func fillTemplate(t *testing.T, d *Deps, root, dagFile, tmpl string, toFill []string) []byte {
	t.Helper()
	dagData, err := os.ReadFile(filepath.Join(root, dagFile))
	if err != nil {
		t.Fatal(err)
	}
	g, err := dag.Parse(dagData)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := config.Requirements(context.Background(), g, d.catalogs(context.Background()).Config)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := config.SampleValues(rep)
	if len(missing) > 0 {
		t.Fatalf("no sample for %v", missing)
	}
	byKey := map[string]map[string]any{}
	for _, n := range rep.Nodes {
		byKey[n.ConfigKey] = perNode[n.Node]
	}

	raw, err := os.ReadFile(filepath.Join(root, tmpl))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("template: %v", err)
	}
	cfg := doc["configuration"].(map[string]any)
	var nulls []string
	fill := func(section map[string]any, samples map[string]any, prefix string) {
		for k, v := range section {
			if v != nil {
				continue
			}
			nulls = append(nulls, prefix+k)
			s, ok := samples[k]
			if !ok {
				t.Errorf("%s%s: no sample value", prefix, k)
				continue
			}
			section[k] = s
		}
	}
	fill(cfg["shared"].(map[string]any), base, "configuration.shared.")
	for key, entry := range cfg["specific"].(map[string]any) {
		fill(entry.(map[string]any), byKey[key], "configuration.specific."+key+".")
	}
	sort.Strings(nulls)
	if fmt.Sprint(nulls) != fmt.Sprint(toFill) {
		t.Errorf("nulls in the template %v != to_fill %v", nulls, toFill)
	}
	if len(nulls) == 0 {
		t.Error("the template had nothing to fill")
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
