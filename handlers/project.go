package handlers

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/scaffold"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

// projectFramework is a framework project.init can scaffold.
type projectFramework string

func (projectFramework) JSONSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, f := range scaffold.Frameworks() {
		s.Enum = append(s.Enum, f)
	}
	return s
}

func projectNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	return registry.Namespace{
		Name:        "project",
		Description: "Scaffold new pipeline projects inside the workspace root and plan their bring-up.",
		Tools: []registry.ToolDef{
			projectInitTool(d),
			projectBringUpTool(d),
		},
	}, nil
}

// scaffoldError maps scaffolding failures to tool errors.
func scaffoldError(err error) error {
	var ie *scaffold.InputError
	if errors.As(err, &ie) {
		return registry.Errorf(registry.CodeInvalidInput, "%s", ie.Error()).WithDetails(map[string]any{"argument": ie.Arg})
	}
	perr := pathError("target_dir", err)
	var te *registry.ToolError
	if errors.As(perr, &te) && te.Code == registry.CodeAlreadyExists {
		return registry.Errorf(registry.CodeAlreadyExists, "%s", te.Message).
			Suggest("Pass overwrite: true to replace its files, or choose another name.", "project.init")
	}
	return perr
}

// projectGuide names the tools a scaffolded project's README and script
// stubs point to (TestProjectGuideNamesTools keeps each one registered).
var projectGuide = scaffold.Guide{
	Scaffold:     "project.init",
	RecommendDAG: "pipeline_catalog.recommend", LoadDAG: "pipeline_catalog.load_dag", CheckDAG: "dag.validate_integrity",
	ExplainConfig: "config.requirements", ConfigConstraints: "author.config_constraints", CheckConfig: "author.preflight_config",
	CheckScript: "author.check_script", Alignment: "validate.alignment", RunScripts: "validate.run_scripts",
	ValidatePipeline: "compile.validate", PreviewPipeline: "compile.preview", Compile: "compile.dag",
}

type projectInitIn struct {
	Name      string           `json:"name" jsonschema:"Project name: letters, digits, '_', '-', '.'; no path separators." schema:"minLength=1,maxLength=64"`
	Framework projectFramework `json:"framework" jsonschema:"Model framework."`
	TargetDir string           `json:"target_dir,omitempty" jsonschema:"Write the project under this workspace directory (else the files are returned)." schema:"minLength=1,maxLength=1024"`
	Overwrite bool             `json:"overwrite,omitempty" jsonschema:"With target_dir: replace an existing project's files as one set."`
	dagSource
}

// projectInitOut is the scaffold's result with Cursus's import_prefix,
// always null: the scaffold writes no Python package to import from.
type projectInitOut struct {
	scaffold.Result
	ImportPrefix *string `json:"import_prefix"`
	// Files are the project's files, path → text, when none were written
	// (no target_dir).
	Files map[string]string `json:"files,omitempty"`
}

func projectInitTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "project.init",
		Description: "Scaffold a project: returns its files, or writes them under target_dir. The folder <name>_<framework> holds dag.json, " +
			"a config.json template (nulls to fill), a contract-aligned stub per script and a README checklist; a write never overwrites unless asked.",
		When: "Starting a new project.",
		Examples: []string{
			`project.init {"name": "fraud", "framework": "xgboost"}  # starter DAG, files returned`,
			`project.init {"name": "demo", "framework": "pytorch", "target_dir": "work", "dag": {"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training"], "edges": [["DummyDataLoading_training", "TabularPreprocessing_training"]]}}  # writes`,
		},
		Tags:        []string{registry.PhasePlanner},
		WritesWith:  []string{"target_dir"},
		Alternative: &registry.Alternative{Tool: "project.init", How: "leave out target_dir and it returns the project's files in data.files, writing nothing."},
	}, d.projectInit)
}

func (d *Deps) projectInit(ctx context.Context, in projectInitIn) (registry.Reply[projectInitOut], error) {
	var reply registry.Reply[projectInitOut]
	g, err := d.loadDAG(ctx, in.dagSource, true)
	if err != nil {
		return reply, err
	}
	cv := d.catalogs(ctx)
	if in.TargetDir == "" {
		if in.Overwrite {
			return reply, registry.Errorf(registry.CodeInvalidInput, "'overwrite' applies to a write: give target_dir too, or leave overwrite out to get the files").
				WithDetails(map[string]any{"argument": "overwrite"})
		}
		res, files, err := scaffold.Render(cv.Steps, cv.Config, scaffold.Options{Name: in.Name, Framework: string(in.Framework),
			DAG: g, CreatedAt: time.Now().UTC().Format(time.RFC3339), Guide: projectGuide})
		if err != nil {
			return reply, scaffoldError(err)
		}
		reply.WithMeta("file_count", len(files))
		reply.Warn(res.Notes...)
		reply.Next(registry.NextStep{Tool: "workflow.start", When: "to check the project", Why: "cursus-init-project's Verify gate takes these files and the DAG",
			ArgsHint: map[string]any{"workflow": "cursus-init-project", "args": map[string]any{"name": in.Name, "framework": res.Framework}}},
			registry.NextStep{Tool: "config.merge_save", When: "to fill the config template", Why: "returns the checked config.json document",
				ArgsHint: map[string]any{"dag_file": res.DAGFile, "files": "<data.files>"}},
		)
		reply.Out = projectInitOut{Result: *res, Files: files}
		return reply, nil
	}
	res, err := scaffold.Init(d.Root, cv.Steps, cv.Config, scaffold.Options{Name: in.Name, Framework: string(in.Framework),
		TargetDir: in.TargetDir, Overwrite: in.Overwrite, DAG: g, CreatedAt: time.Now().UTC().Format(time.RFC3339), Guide: projectGuide})
	if err != nil {
		return reply, scaffoldError(err)
	}
	reply.WithMeta("file_count", len(res.FilesWritten))
	reply.Warn(res.Notes...)
	reply.Next(registry.NextStep{Tool: "author.preflight_step", When: "after editing a script", Why: "check the step's gates against the project scripts",
		ArgsHint: map[string]any{"step_name": firstScriptStep(res), "source_dir": res.TargetPath + "/scripts"}},
		registry.NextStep{Tool: "config.load", When: "after filling the config template", Why: "check every value",
			ArgsHint: map[string]any{"config_file": res.ConfigTemplate}},
		registry.NextStep{Tool: "compile.validate", When: "configs are filled", Why: "check DAG, configs and wiring together",
			ArgsHint: map[string]any{"dag_file": res.DAGFile, "config_file": res.ConfigTemplate}},
	)
	reply.Out = projectInitOut{Result: *res}
	return reply, nil
}

func firstScriptStep(r *scaffold.Result) string {
	if len(r.Scripts) > 0 {
		return r.Scripts[0].StepType
	}
	return ""
}

type projectBringUpIn struct {
	projectIn
	Region    string `json:"region,omitempty" jsonschema:"NA, EU, FE or an AWS region name (default NA)." schema:"minLength=2,maxLength=32" pattern:"^[A-Za-z0-9-]+$"`
	DAGSource string `json:"dag_source,omitempty" jsonschema:"Seed the DAG from the pipeline catalog or author it by hand (default catalog)." schema:"enum=catalog|manual"`
}

// bringUpPlan is the project.bring_up payload: the new-project workflow
// with the checked arguments filled in.
type bringUpPlan struct {
	Workflow    string       `json:"workflow"`
	Prompt      string       `json:"prompt"`
	Args        bringUpArgs  `json:"args"`
	Stages      []guideStage `json:"stages"`
	Outcome     string       `json:"outcome"`
	ProjectPath string       `json:"project_path"`
	Note        string       `json:"note"`
	// WorkflowPath is Cursus's name for where the workflow's text lives:
	// here the MCP resource of its guide.
	WorkflowPath string `json:"workflow_path"`
}

// projectIn names the project both project tools take.
type projectIn struct {
	Name      string           `json:"name" jsonschema:"Project name: letters, digits, '_', '-', '.'; no path separators." schema:"minLength=1,maxLength=64"`
	Framework projectFramework `json:"framework" jsonschema:"Model framework."`
	TargetDir string           `json:"target_dir,omitempty" jsonschema:"Directory under the workspace root (default projects)." schema:"minLength=1,maxLength=1024"`
}

type bringUpArgs struct {
	Name      string `json:"name"`
	Framework string `json:"framework"`
	TargetDir string `json:"target_dir"`
	Region    string `json:"region"`
	DAGSource string `json:"dag_source"`
}

func projectBringUpTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "project.bring_up",
		Description: "Plan a new project end to end (writing nothing): checks the arguments and returns the " +
			"cursus-new-project workflow (stages, tools, gates) with the arguments filled in.",
		When:     "Before scaffolding a new project.",
		Examples: []string{`project.bring_up {"name": "new_model", "framework": "pytorch", "dag_source": "manual"}`},
		Tags:     []string{registry.PhasePlanner},
	}, d.projectBringUp)
}

func (d *Deps) projectBringUp(ctx context.Context, in projectBringUpIn) (registry.Reply[bringUpPlan], error) {
	var reply registry.Reply[bringUpPlan]
	opts, err := scaffold.Check(scaffold.Options{Name: in.Name, Framework: string(in.Framework), TargetDir: in.TargetDir})
	if err != nil {
		return reply, scaffoldError(err)
	}
	if _, err := d.Root.Resolve(opts.TargetDir); err != nil {
		return reply, pathError("target_dir", err)
	}
	// Region names (us-east-1) are lower case, the short forms (NA) upper.
	region := strings.ToUpper(cmp.Or(in.Region, "NA"))
	if strings.Contains(region, "-") {
		region = strings.ToLower(region)
	}
	nw, _ := workflows.Get(workflows.NewProject)
	wf := guideOf(nw)
	note := "Nothing was written. Follow the stages in order (the MCP prompt '" + wf.Name + "' has the same plan); each stage's gate must pass before the next."
	if reg := registry.RegistryFrom(ctx); reg != nil {
		caller := registry.CallerFrom(ctx)
		wf = workflowFor(wf, func(tool string) bool { return reg.MayCall(caller, tool) })
		if reg.MayCall(caller, "workflow.start") && reg.MayCall(caller, "workflow.submit") {
			note += " " + HowToRun(wf.Name)
		}
	}
	reply.Next(registry.NextStep{Tool: "workflow.start", When: "to run the plan with the server checking each gate", Why: "returns a run token and the first stage",
		ArgsHint: map[string]any{"workflow": wf.Name, "args": map[string]any{"name": opts.Name, "framework": opts.Framework, "target_dir": opts.TargetDir}}},
		registry.NextStep{Tool: "project.init", When: "to start the Scaffold stage", Why: "returns the project files (add target_dir to write them)",
			ArgsHint: map[string]any{"name": opts.Name, "framework": opts.Framework}},
		registry.NextStep{Tool: "pipeline_catalog.recommend", When: "to pick the project's DAG (writes nothing)",
			Why: "ranks the shared DAGs for the framework", ArgsHint: map[string]any{"framework": opts.Framework}})
	reply.Out = bringUpPlan{
		Workflow: wf.Name, Prompt: wf.Name, Stages: wf.Stages, Outcome: wf.Outcome,
		Args: bringUpArgs{Name: opts.Name, Framework: opts.Framework, TargetDir: opts.TargetDir, Region: region,
			DAGSource: cmp.Or(in.DAGSource, "catalog")},
		ProjectPath:  opts.TargetDir + "/" + opts.Name + "_" + opts.Framework,
		Note:         note,
		WorkflowPath: "cursus://workflows/" + wf.Name,
	}
	return reply, nil
}
