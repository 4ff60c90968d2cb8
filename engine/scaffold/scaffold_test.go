package scaffold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// testCatalog reads the built-in interface files directly.
type testCatalog map[string]*steps.Interface

func (c testCatalog) Names() []string {
	var out []string
	for k := range c {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c testCatalog) Get(s string) (*steps.Interface, bool) { i, ok := c[s]; return i, ok }

// testGuide names tools as the handlers' project.init does, so the stubs'
// digests are those of the files users get.
var testGuide = Guide{
	Scaffold:     "project.init",
	RecommendDAG: "pipeline_catalog.recommend", LoadDAG: "pipeline_catalog.load_dag", CheckDAG: "dag.validate_integrity",
	ExplainConfig: "config.requirements", ConfigConstraints: "author.config_constraints", CheckConfig: "author.preflight_config",
	CheckScript: "author.check_script", Alignment: "validate.alignment", RunScripts: "validate.run_scripts",
	ValidatePipeline: "compile.validate", PreviewPipeline: "compile.preview", Compile: "compile.dag",
}

func loadCatalog(t *testing.T) testCatalog {
	t.Helper()
	cat, err := catalogFrom("../steps/catalog")
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func catalogFrom(dir string) (testCatalog, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.step.yaml"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no built-in catalog files: %v", err)
	}
	cat := testCatalog{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		iface, err := steps.Parse(filepath.Base(n), data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		cat[iface.StepType] = iface
	}
	return cat, nil
}

func newRoot(t *testing.T) *workspace.Root {
	t.Helper()
	root, err := workspace.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestEveryBuiltinScriptStubIsAligned(t *testing.T) {
	cat := loadCatalog(t)
	runner := scriptrun.NewRunner(2)
	canRun := runner.Available() == nil
	if !canRun && os.Getenv("CI") != "" {
		t.Fatalf("python3 is required in CI to run the stubs: %v", runner.Available())
	}
	n := 0
	for _, name := range cat.Names() {
		iface := cat[name]
		if !NeedsScript(iface) {
			continue
		}
		n++
		src := ScriptStub(iface, testGuide)
		fs, a, _ := validate.CheckScriptSource(context.Background(), iface, iface.Contract.EntryPoint, []byte(src))
		if a == nil || !a.Main.HasExpectedSignature() {
			t.Errorf("%s: stub has no proper main: %+v", name, fs)
		}
		for _, f := range fs {
			if f.Level != finding.Info {
				t.Errorf("%s: stub finding %+v", name, f)
			}
		}
		if !canRun {
			continue
		}
		dir := t.TempDir()
		script := filepath.Join(dir, iface.Contract.EntryPoint)
		if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, r := range iface.Contract.EnvVars.Required {
			env[r] = "x"
		}
		res, err := runner.Run(t.Context(), scriptrun.RunRequest{Interface: iface,
			Script: scriptrun.Source{FS: os.DirFS(dir), Path: iface.Contract.EntryPoint}, Env: env})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.Success {
			t.Errorf("%s: stub run failed: %s %s missing=%v", name, res.ErrorMessage, res.Stderr, res.MissingOutputs)
		}
	}
	if n == 0 {
		t.Fatal("no script steps in the catalog")
	}
}

func TestInitWritesAnAlignedProject(t *testing.T) {
	cat := loadCatalog(t)
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(t)
	res, err := Init(root, cat, schemas, Options{Guide: testGuide, Name: "fraud", Framework: "XGBoost", CreatedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if res.TargetPath != "projects/fraud_xgboost" || res.PipelineClass != "FraudPipeline" || !res.Ready {
		t.Errorf("result = %+v", res)
	}
	want := []string{"DummyDataLoading", "TabularPreprocessing", "XGBoostModelEval", "XGBoostTraining"}
	var got []string
	for _, s := range res.Scripts {
		got = append(got, s.StepType)
		if !s.Aligned {
			t.Errorf("%s stub not aligned: %+v", s.StepType, s.Findings)
		}
		if _, err := root.Stat(s.File); err != nil {
			t.Errorf("%s: %v", s.File, err)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("scripts for %v, want %v", got, want)
	}
	data, err := root.ReadFile(res.DAGFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Parse(data)
	if err != nil || len(d.Nodes) != 6 {
		t.Fatalf("dag.json: %v %+v", err, d)
	}
	tmpl, err := root.ReadFile(res.ConfigTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(tmpl, &doc); err != nil {
		t.Fatalf("config template is not JSON: %v", err)
	}
	if len(res.ToFill) == 0 || !strings.Contains(strings.Join(res.ToFill, " "), "configuration.shared.author") {
		t.Errorf("to_fill = %v", res.ToFill)
	}
	readme, _ := root.ReadFile("projects/fraud_xgboost/README.md")
	for _, s := range []string{"## Action items (remaining)", "- [ ] **1. Review the DAG", "## What is already done", "- [x]"} {
		if !strings.Contains(string(readme), s) {
			t.Errorf("README lacks %q:\n%s", s, readme)
		}
	}
	// The unfilled template is refused for exactly the values to fill.
	if _, err := config.Parse(tmpl, schemas); err == nil {
		t.Error("an unfilled template loaded without problems")
	}

	// A second init without overwrite is refused and changes nothing.
	before, _ := root.ReadFile("projects/fraud_xgboost/README.md")
	_, err = Init(root, cat, schemas, Options{Guide: testGuide, Name: "fraud", Framework: "xgboost"})
	var exists *workspace.ExistsError
	if !errors.As(err, &exists) {
		t.Errorf("err = %v, want ExistsError", err)
	}
	after, _ := root.ReadFile("projects/fraud_xgboost/README.md")
	if string(before) != string(after) {
		t.Error("a refused init changed files")
	}
	if _, err := Init(root, cat, schemas, Options{Guide: testGuide, Name: "fraud", Framework: "xgboost", Overwrite: true}); err != nil {
		t.Errorf("overwrite: %v", err)
	}
}

func TestInitRefusesEscapes(t *testing.T) {
	cat := loadCatalog(t)
	root := newRoot(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts Options
		want any
	}{
		{"dotdot name", Options{Name: "../x", Framework: "xgboost"}, &InputError{}},
		{"dot name", Options{Name: "..", Framework: "xgboost"}, &InputError{}},
		{"bad framework", Options{Name: "x", Framework: "sklearn"}, &InputError{}},
		{"dotdot target", Options{Name: "x", Framework: "xgboost", TargetDir: "a/../../b"}, &InputError{}},
		{"absolute outside", Options{Name: "x", Framework: "xgboost", TargetDir: outside}, &workspace.EscapeError{}},
		{"symlink escape", Options{Name: "x", Framework: "xgboost", TargetDir: "link/projects"}, &workspace.EscapeError{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Init(root, cat, nil, c.opts)
			switch c.want.(type) {
			case *InputError:
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Errorf("err = %v, want InputError", err)
				}
			case *workspace.EscapeError:
				var ee *workspace.EscapeError
				if !errors.As(err, &ee) {
					t.Errorf("err = %v, want EscapeError", err)
				}
			}
		})
	}
	for _, dir := range []string{outside, root.Dir()} {
		entries, _ := os.ReadDir(dir)
		if dir == root.Dir() && len(entries) != 1 || dir == outside && len(entries) != 0 {
			t.Errorf("%s changed: %v", dir, entries)
		}
	}
	// An absolute target inside the root is fine.
	res, err := Init(root, cat, nil, Options{Guide: testGuide, Name: "abs", Framework: "pytorch", TargetDir: filepath.Join(root.Dir(), "inside")})
	if err != nil || res.TargetPath != "inside/abs_pytorch" {
		t.Errorf("absolute inside: %v %+v", err, res)
	}
}

func TestStarterDAGForBedrockIsEmpty(t *testing.T) {
	d, note := StarterDAG("bedrock", loadCatalog(t), testGuide)
	if len(d.Nodes) != 0 || note == "" {
		t.Errorf("bedrock starter = %+v %q", d, note)
	}
}

// hiding is a catalog without some step types.
type hiding struct {
	Catalog
	hidden string
}

func (h hiding) Get(st string) (*steps.Interface, bool) {
	if st == h.hidden {
		return nil, false
	}
	return h.Catalog.Get(st)
}

// A framework without a starter still scaffolds: an empty dag.json to fill,
// no config template, and a note saying why.
func TestInitWithoutStarterWritesAnEmptyDAG(t *testing.T) {
	root := newRoot(t)
	res, err := Init(root, hiding{loadCatalog(t), "LightGBMModelEval"}, nil, Options{Guide: testGuide, Name: "gen", Framework: "lightgbm"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ConfigTemplate != "" || len(res.DAGNodes) != 0 || len(res.Notes) == 0 {
		t.Errorf("result = %+v", res)
	}
	data, err := root.ReadFile(res.DAGFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dag.ParseDocument(data)
	if err != nil {
		t.Fatalf("dag.json does not parse: %v\n%s", err, data)
	}
	if len(doc.DAG.Nodes) != 0 || doc.Metadata["framework"] != "lightgbm" {
		t.Errorf("dag.json = %s", data)
	}
}

// The frameworks a project can be built on are the model families the
// catalog trains: lightgbm, not lightgbmmt or bedrock, which no step
// trains.
func TestFrameworksComeFromTheCatalog(t *testing.T) {
	builtin, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Frameworks(), builtin.ModelFamilies(); !slices.Equal(got, want) {
		t.Fatalf("Frameworks() = %v, the catalog trains %v", got, want)
	}
	if got, want := Frameworks(), []string{"lightgbm", "pytorch", "xgboost"}; !slices.Equal(got, want) {
		t.Fatalf("Frameworks() = %v, want %v", got, want)
	}
	for _, f := range Frameworks() {
		if d, note := StarterDAG(f, loadCatalog(t), testGuide); len(d.Nodes) == 0 || note != "" {
			t.Errorf("%s: no starter DAG (%q)", f, note)
		}
	}
	root := newRoot(t)
	for _, f := range []string{"bedrock", "lightgbmmt"} {
		if _, err := Init(root, loadCatalog(t), nil, Options{Guide: testGuide, Name: "p", Framework: f}); err == nil {
			t.Errorf("framework %s accepted", f)
		}
	}
}

func TestReadmeShowsTheRunScriptsCallForTheProject(t *testing.T) {
	cat := loadCatalog(t)
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(t)
	res, err := Init(root, cat, schemas, Options{Guide: testGuide, Name: "run", Framework: "xgboost"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := root.ReadFile(res.TargetPath + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := `validate.run_scripts {"dag_file": "projects/run_xgboost/pipeline_config/dag.json", "config_path": "projects/run_xgboost/pipeline_config/config.json"`
	if !strings.Contains(string(data), want) {
		t.Errorf("README lacks %s:\n%s", want, data)
	}
}

// TestScriptsShipTheRequirementsTheirImageLacks: a LightGBM project's
// scripts folder has the requirements.txt the built-in LightGBM code
// ships (lightgbm is not in the image the job runs in, so without it the
// job fails on import); an XGBoost project, whose image has xgboost, has
// none.
func TestScriptsShipTheRequirementsTheirImageLacks(t *testing.T) {
	cat := loadCatalog(t)
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	_, files, err := Render(cat, schemas, Options{Guide: testGuide, Name: "lgb", Framework: "lightgbm"})
	if err != nil {
		t.Fatal(err)
	}
	req, ok := files["projects/lgb_lightgbm/scripts/requirements.txt"]
	if !ok || !strings.Contains(req, "lightgbm>=") || strings.Count(req, "lightgbm>=") != 1 {
		t.Errorf("the LightGBM project's scripts/requirements.txt = %q (present %v), want lightgbm listed once", req, ok)
	}
	_, files, err = Render(cat, schemas, Options{Guide: testGuide, Name: "xgb", Framework: "xgboost"})
	if err != nil {
		t.Fatal(err)
	}
	for p := range files {
		if strings.HasSuffix(p, "requirements.txt") {
			t.Errorf("the XGBoost project has %s", p)
		}
	}
}
