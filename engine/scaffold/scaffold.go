package scaffold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// Catalog is the part of the step catalog scaffolding reads;
// *steps.Catalog satisfies it.
type Catalog interface {
	Names() []string
	Get(stepType string) (*steps.Interface, bool)
}

// Frameworks are the project kinds project.init knows: the model families
// the built-in step catalog trains (steps.Catalog.ModelFamilies), sorted.
// They are written out rather than read from the catalog, because tool
// schemas and prompts name them at start-up and the catalog is parsed
// only when first used; TestFrameworksComeFromTheCatalog holds the list to
// the catalog.
func Frameworks() []string { return []string{"lightgbm", "pytorch", "xgboost"} }

// DefaultTargetDir is where projects go when no target_dir is given.
const DefaultTargetDir = "projects"

// Options describe the project to scaffold.
type Options struct {
	Name      string
	Framework string
	TargetDir string // relative to the workspace root (or absolute inside it)
	Overwrite bool
	// DAG is the pipeline; nil uses the framework's starter DAG.
	DAG *dag.DAG
	// CreatedAt is stored in the config template's metadata.
	CreatedAt string
	// Guide names how the user does each action the project's README and
	// script stubs point to.
	Guide Guide
}

// Guide names, for each action a scaffolded project's README and script
// stubs point the user to, the tool that does it. The caller supplies the
// names (this package knows no tool); each is written as given, so every
// field is set.
type Guide struct {
	Scaffold string // scaffolds (and re-scaffolds) a project; also its metadata's created_by, after "cursus "
	// The DAG.
	RecommendDAG, LoadDAG, CheckDAG string
	// The config template: the fields explained, their constraints, values checked.
	ExplainConfig, ConfigConstraints, CheckConfig string
	// The scripts: one checked against its contract, the alignment
	// report, every script run locally in DAG order.
	CheckScript, Alignment, RunScripts string
	// The pipeline: validated, previewed, compiled.
	ValidatePipeline, PreviewPipeline, Compile string
}

// InputError is an argument that cannot be used.
type InputError struct {
	Arg     string
	Message string
}

func (e *InputError) Error() string { return fmt.Sprintf("'%s': %s", e.Arg, e.Message) }

// Stub is one scaffolded script.
type Stub struct {
	StepType string   `json:"step_type"`
	Nodes    []string `json:"nodes"`
	File     string   `json:"file"`
	// Aligned is true when the stub passes the script↔contract check.
	Aligned  bool               `json:"aligned"`
	Findings []validate.Finding `json:"findings,omitempty"`
}

// Result describes the scaffolded project.
type Result struct {
	Project        string   `json:"project"`
	TargetPath     string   `json:"target_path"` // workspace-relative
	Framework      string   `json:"framework"`
	PipelineClass  string   `json:"pipeline_class"`
	DAGNodes       []string `json:"dag_nodes"`
	DAGFile        string   `json:"dag_file"`
	ConfigTemplate string   `json:"config_template,omitempty"`
	// ToFill lists the config values the user must supply
	// ("configuration.shared.author", "configuration.specific.<key>.<field>").
	ToFill       []string `json:"to_fill"`
	Scripts      []Stub   `json:"scripts"`
	FilesWritten []string `json:"files_written"`
	Notes        []string `json:"notes,omitempty"`
	Ready        bool     `json:"ready"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Check validates name, framework and target_dir without touching disk.
func Check(opts Options) (Options, error) {
	opts.Name = strings.TrimSpace(opts.Name)
	opts.Framework = strings.ToLower(strings.TrimSpace(opts.Framework))
	switch {
	case opts.Name == "":
		return opts, &InputError{"name", "must be a non-empty string"}
	case opts.Name == "." || opts.Name == ".." || strings.ContainsAny(opts.Name, `/\`):
		return opts, &InputError{"name", "must not contain a path separator or be '.' or '..'"}
	case !nameRE.MatchString(opts.Name):
		return opts, &InputError{"name", "must be 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit"}
	case !slices.Contains(Frameworks(), opts.Framework):
		return opts, &InputError{"framework", "must be one of [" + strings.Join(Frameworks(), ", ") + "]"}
	}
	if opts.TargetDir == "" {
		opts.TargetDir = DefaultTargetDir
	}
	if strings.ContainsRune(opts.TargetDir, 0) {
		return opts, &InputError{"target_dir", "contains a NUL byte"}
	}
	for _, part := range strings.FieldsFunc(opts.TargetDir, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return opts, &InputError{"target_dir", "must not contain a '..' component"}
		}
	}
	return opts, nil
}

// PipelineClass is PascalCase(name) + "Pipeline".
func PipelineClass(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String() + "Pipeline"
}

// StarterDAG is the framework's default pipeline: load → preprocess →
// train, and a calibration branch that evaluates the trained model. Nodes
// whose step type the catalog lacks make the starter empty (with a note;
// g names the tool that suggests a DAG instead).
func StarterDAG(framework string, cat Catalog, g Guide) (*dag.DAG, string) {
	pair := map[string][2]string{
		"xgboost":  {"XGBoostTraining", "XGBoostModelEval"},
		"pytorch":  {"PyTorchTraining", "PyTorchModelEval"},
		"lightgbm": {"LightGBMTraining", "LightGBMModelEval"},
	}[framework]
	train, eval := pair[0], pair[1]
	if train == "" {
		return dag.New(nil, nil), "no public starter pipeline exists for " + framework + "; author the DAG yourself (" + g.RecommendDAG + " can suggest one)"
	}
	for _, st := range []string{"DummyDataLoading", "TabularPreprocessing", train, eval} {
		if _, ok := cat.Get(st); !ok {
			return dag.New(nil, nil), "the catalog has no " + st + " step, so no starter DAG was written"
		}
	}
	nodes := []string{"DummyDataLoading_training", "TabularPreprocessing_training", train,
		"DummyDataLoading_calibration", "TabularPreprocessing_calibration", eval + "_calibration"}
	edges := [][2]string{
		{"DummyDataLoading_training", "TabularPreprocessing_training"},
		{"TabularPreprocessing_training", train},
		{"DummyDataLoading_calibration", "TabularPreprocessing_calibration"},
		{train, eval + "_calibration"},
		{"TabularPreprocessing_calibration", eval + "_calibration"},
	}
	return dag.New(nodes, edges), ""
}

type file struct {
	rel  string // relative to the project directory
	data []byte
}

// Init scaffolds the project inside root. Every file is rendered before
// anything is written, so a bad argument writes nothing.
func Init(root *workspace.Root, cat Catalog, schemas *config.Schemas, opts Options) (*Result, error) {
	opts, err := Check(opts)
	if err != nil {
		return nil, err
	}
	projRel := filepath.Join(opts.TargetDir, ProjectDir(opts))
	projAbs, err := root.Resolve(projRel)
	if err != nil {
		return nil, err
	}
	projRel = root.Rel(projAbs)
	if _, err := root.Stat(projRel); err == nil && !opts.Overwrite {
		return nil, &workspace.ExistsError{Path: projRel}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	res, files, err := render(cat, schemas, opts, projRel)
	if err != nil {
		return nil, err
	}
	if err := writeProject(root, projRel, files, opts.Overwrite); err != nil {
		res.Ready = false
		return res, err
	}
	for _, f := range files {
		res.FilesWritten = append(res.FilesWritten, path.Join(projRel, f.rel))
	}
	return res, nil
}

// ProjectDir is the project's folder name: <name>_<framework>.
func ProjectDir(opts Options) string { return opts.Name + "_" + opts.Framework }

// Render is Init without the disk: the project's files, path → text, at
// the paths Init writes them to (<target_dir>/<name>_<framework>/...),
// and the Result, whose FilesWritten stays empty. Producing the files is
// not writing them, so a read-only caller may have them.
func Render(cat Catalog, schemas *config.Schemas, opts Options) (*Result, map[string]string, error) {
	opts, err := Check(opts)
	if err != nil {
		return nil, nil, err
	}
	projRel := path.Join(filepath.ToSlash(opts.TargetDir), ProjectDir(opts))
	if path.IsAbs(projRel) {
		return nil, nil, &InputError{"target_dir", "must be relative to the workspace root"}
	}
	res, files, err := render(cat, schemas, opts, projRel)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		out[path.Join(projRel, f.rel)] = string(f.data)
	}
	return res, out, nil
}

// render renders the project at projRel (workspace-relative, slashes).
func render(cat Catalog, schemas *config.Schemas, opts Options, projRel string) (*Result, []file, error) {
	project := ProjectDir(opts)
	res := &Result{Project: project, TargetPath: projRel, Framework: opts.Framework, PipelineClass: PipelineClass(opts.Name),
		DAGFile: path.Join(projRel, "pipeline_config/dag.json"), ToFill: []string{}, Scripts: []Stub{}, FilesWritten: []string{}}
	d := opts.DAG
	if d == nil {
		var note string
		d, note = StarterDAG(opts.Framework, cat, opts.Guide)
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	res.DAGNodes = append([]string{}, d.Nodes...)

	known := func(s string) bool { _, ok := cat.Get(s); return ok }
	type nodeStep struct {
		node  string
		iface *steps.Interface
	}
	var resolved []nodeStep
	for _, n := range d.Nodes {
		st, _, ok := steps.SplitJobType(n, known)
		if !ok {
			return nil, nil, &InputError{"dag", fmt.Sprintf("node %q names no known step type", n)}
		}
		iface, _ := cat.Get(st)
		resolved = append(resolved, nodeStep{n, iface})
	}

	var files []file
	meta := map[string]any{"name": project, "framework": opts.Framework, "created_by": "cursus " + opts.Guide.Scaffold}
	var dagJSON []byte
	var err error
	if len(d.Nodes) == 0 {
		// No starter for this framework: an empty dag.json for the user to
		// fill (dag.Marshal refuses empty graphs, which is right for
		// finished DAGs but not for a scaffold).
		dagJSON, err = dag.MarshalDocument(dag.Document{Metadata: meta, DAG: d})
	} else {
		dagJSON, err = dag.Marshal(d, meta)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("render dag.json: %w", err)
	}
	files = append(files, file{"pipeline_config/dag.json", dagJSON})

	scriptsRel := path.Join(projRel, "scripts")
	if len(d.Nodes) > 0 && schemas != nil {
		tmpl, toFill, err := configTemplate(d, schemas, scriptsRel, opts.CreatedAt)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, file{"pipeline_config/config.json", tmpl})
		res.ConfigTemplate = path.Join(projRel, "pipeline_config/config.json")
		res.ToFill = toFill
	}

	byType := map[string]*Stub{}
	var order []string
	var modelSteps []string
	for _, ns := range resolved {
		if !NeedsScript(ns.iface) {
			if ns.iface.Registry.SageMakerStepType == steps.SMCreateModel {
				modelSteps = append(modelSteps, ns.node)
			}
			continue
		}
		st := ns.iface.StepType
		if s, ok := byType[st]; ok {
			s.Nodes = append(s.Nodes, ns.node)
			continue
		}
		rel := "scripts/" + ns.iface.Contract.EntryPoint
		src := ScriptStub(ns.iface, opts.Guide)
		// A stub is a few dozen lines: nothing to stop, so no error.
		fs, _, _ := validate.CheckScriptSource(context.Background(), ns.iface, path.Join(projRel, rel), []byte(src))
		stub := &Stub{StepType: st, Nodes: []string{ns.node}, File: path.Join(projRel, rel), Aligned: true}
		for _, f := range fs {
			if f.Blocking() {
				stub.Aligned = false
				stub.Findings = append(stub.Findings, f)
			}
		}
		byType[st] = stub
		order = append(order, st)
		files = append(files, file{rel, []byte(src)})
	}
	sort.Strings(order)
	for _, st := range order {
		res.Scripts = append(res.Scripts, *byType[st])
	}
	if req := requirementsTxt(order); req != "" {
		files = append(files, file{"scripts/requirements.txt", []byte(req)})
	}
	files = append(files, file{"README.md", []byte(readme(res, modelSteps, opts.Guide))})
	res.Ready = true
	for _, s := range res.Scripts {
		res.Ready = res.Ready && s.Aligned
	}
	return res, files, nil
}

// requirementsTxt is the requirements.txt the scripts' folder needs: the
// lines of the requirements.txt the built-in code of each of stepTypes
// ships (the packages its framework image lacks, which script mode
// installs before the job runs), once each; "" when none ships one.
func requirementsTxt(stepTypes []string) string {
	var lines []string
	for _, st := range stepTypes {
		dir, ok := stepcode.Dir(st)
		if !ok {
			continue
		}
		b, err := fs.ReadFile(stepcode.FS, path.Join(dir, "requirements.txt"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// writeProject writes files under projRel as one set (see the package
// documentation): a new project is built in a staged directory and renamed
// into place; an existing one (overwrite) is rebuilt in a staged directory
// beside it, with the files it does not replace carried over, and swapped
// with it.
func writeProject(root *workspace.Root, projRel string, files []file, overwrite bool) error {
	var stage *workspace.Staged
	if _, err := root.Lstat(projRel); err == nil {
		if !overwrite {
			return &workspace.ExistsError{Path: projRel}
		}
		if stage, err = root.StageReplace(projRel); err != nil {
			return err
		}
		rels := make([]string, len(files))
		for i, f := range files {
			rels[i] = f.rel
		}
		if err := stage.Keep(rels); err != nil {
			stage.Abort()
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if stage, err = root.Stage(projRel); err != nil {
		return err
	}
	for _, f := range files {
		if err := stage.WriteFile(f.rel, f.data); err != nil {
			stage.Abort()
			return err
		}
	}
	return stage.Commit()
}

// configTemplate renders a config.json in the Cursus layout with every
// required value set to null (to fill), job types prefilled from node
// names, and source_dir pointing at the scaffolded scripts.
func configTemplate(d *dag.DAG, schemas *config.Schemas, scriptsDir, createdAt string) ([]byte, []string, error) {
	// A starter DAG has a handful of nodes: nothing here runs long enough
	// to need the caller's context.
	req, err := config.Requirements(context.Background(), d, schemas)
	if err != nil {
		return nil, nil, fmt.Errorf("config requirements: %w", err)
	}
	if len(req.Unresolved) > 0 {
		return nil, nil, &InputError{"dag", fmt.Sprintf("node %q: %s", req.Unresolved[0].Node, req.Unresolved[0].Message)}
	}
	var toFill []string
	shared := map[string]any{"source_dir": scriptsDir}
	for _, f := range req.Shared.Required() {
		shared[f] = nil
		toFill = append(toFill, "configuration.shared."+f)
	}
	specific := map[string]any{}
	types := map[string]string{}
	for _, n := range req.Nodes {
		entry := map[string]any{"__model_type__": n.ConfigClass}
		for k, v := range n.Prefilled {
			entry[k] = v
		}
		for _, f := range n.Fields.Required() {
			entry[f] = nil
			toFill = append(toFill, "configuration.specific."+n.ConfigKey+"."+f)
		}
		specific[n.ConfigKey] = entry
		types[n.ConfigKey] = n.ConfigClass
	}
	doc := map[string]any{
		"configuration": map[string]any{"shared": shared, "specific": specific},
		"metadata":      map[string]any{"config_types": types, "created_at": createdAt},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(toFill)
	return append(out, '\n'), toFill, nil
}
