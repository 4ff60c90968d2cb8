package handlers

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cursus-dev/cursus/engine/scaffold"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

var projectNameSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 64,
	"description": "Project name: letters, digits, '_', '-', '.'; no path separators."}

func projectNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil || d.Config == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	frameworks := scaffold.Frameworks
	return registry.Namespace{
		Name:        "project",
		Description: "Scaffold new pipeline projects inside the workspace root and plan their bring-up.",
		Tools: []registry.ToolDef{
			{
				Name: "project.init",
				Description: "Scaffold a project at <target_dir>/<name>_<framework> inside the workspace root: pipeline_config/dag.json " +
					"(the given DAG or the framework's starter), pipeline_config/config.json (a config template: every null is a value to fill), " +
					"a script stub in scripts/ for every script step (each already passes the script ↔ contract check), and a README " +
					"whose checklist is the action-item ledger. Refuses paths outside the root and never overwrites unless asked.",
				When: "You are starting a new pipeline project.",
				Examples: []string{
					`project.init {"name": "fraud", "framework": "xgboost"}  # starter DAG`,
					`project.init {"name": "demo", "framework": "pytorch", "target_dir": "work", "dag": {"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training"], "edges": [["DummyDataLoading_training", "TabularPreprocessing_training"]]}}`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"name":       projectNameSchema,
					"framework":  registry.Enum("Model framework.", frameworks...),
					"target_dir": map[string]any{"type": "string", "minLength": 1, "maxLength": 1024, "description": "Directory under the workspace root (default projects)."},
					"overwrite":  registry.Boolean("Replace files of an existing project (default false)."),
					"dag":        configDAGSchema,
					"dag_file":   configDAGFileSchema,
				}, "name", "framework"),
				Destructive: true,
				Writes:      true,
				Handler:     d.projectInit,
			},
			{
				Name: "project.bring_up",
				Description: "Plan a new project end to end without writing anything: checks the arguments and returns the " +
					"cursus-new-project workflow (stages, tools, gates) with the arguments filled in.",
				When:     "You want the full new-project procedure before scaffolding.",
				Examples: []string{`project.bring_up {"name": "new_model", "framework": "pytorch", "dag_source": "manual"}`},
				Tags:     []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"name":       projectNameSchema,
					"framework":  registry.Enum("Model framework.", frameworks...),
					"target_dir": map[string]any{"type": "string", "minLength": 1, "maxLength": 1024, "description": "Directory under the workspace root (default projects)."},
					"region":     map[string]any{"type": "string", "minLength": 2, "maxLength": 32, "pattern": `^[A-Za-z0-9-]+$`, "description": "NA, EU, FE or an AWS region name (default NA)."},
					"dag_source": registry.Enum("Seed the DAG from the pipeline catalog or author it by hand (default catalog).", "catalog", "manual"),
				}, "name", "framework"),
				Handler: d.projectBringUp,
			},
		},
	}, nil
}

// scaffoldError maps scaffolding failures to tool errors.
func scaffoldError(err error) error {
	var ie *scaffold.InputError
	if errors.As(err, &ie) {
		return registry.Errorf(registry.CodeInvalidInput, "%s", ie.Error()).WithDetails(map[string]any{"argument": ie.Arg})
	}
	var we *scaffold.WriteError
	if errors.As(err, &we) {
		if perr := pathError("target_dir", we.Err); perr != we.Err {
			return perr
		}
		return registry.Errorf(registry.CodeToolError, "writing the project failed after %d file(s)", len(we.Written)).
			WithDetails(map[string]any{"written_so_far": we.Written})
	}
	perr := pathError("target_dir", err)
	var te *registry.ToolError
	if errors.As(perr, &te) && te.Code == registry.CodeAlreadyExists {
		return registry.Errorf(registry.CodeAlreadyExists, "%s", te.Message).
			Suggest("Pass overwrite: true to replace its files, or choose another name.", "project.init")
	}
	return perr
}

func (d *Deps) projectInit(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Name      string `json:"name"`
		Framework string `json:"framework"`
		TargetDir string `json:"target_dir"`
		Overwrite bool   `json:"overwrite"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	g, err := d.configDAG(req.Args, true)
	if err != nil {
		return nil, err
	}
	res, err := scaffold.Init(d.Root, d.Steps, d.Config, scaffold.Options{Name: args.Name, Framework: args.Framework,
		TargetDir: args.TargetDir, Overwrite: args.Overwrite, DAG: g, CreatedAt: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return nil, scaffoldError(err)
	}
	out := registry.OK(res).WithMeta("file_count", len(res.FilesWritten)).Warn(res.Notes...).Next(
		registry.NextStep{Tool: "author.preflight_step", When: "after editing a script", Why: "check the step's gates against the project scripts",
			ArgsHint: map[string]any{"step_name": firstScriptStep(res), "source_dir": res.TargetPath + "/scripts"}},
		registry.NextStep{Tool: "config.load", When: "after filling the config template", Why: "check every value",
			ArgsHint: map[string]any{"config_file": res.ConfigTemplate}},
		registry.NextStep{Tool: "compile.validate", When: "configs are filled", Why: "check DAG, configs and wiring together",
			ArgsHint: map[string]any{"dag_file": res.DAGFile, "config_file": res.ConfigTemplate}},
	)
	return out, nil
}

func firstScriptStep(r *scaffold.Result) string {
	if len(r.Scripts) > 0 {
		return r.Scripts[0].StepType
	}
	return ""
}

func (d *Deps) projectBringUp(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Name      string `json:"name"`
		Framework string `json:"framework"`
		TargetDir string `json:"target_dir"`
		Region    string `json:"region"`
		DAGSource string `json:"dag_source"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	opts, err := scaffold.Check(scaffold.Options{Name: args.Name, Framework: args.Framework, TargetDir: args.TargetDir})
	if err != nil {
		return nil, scaffoldError(err)
	}
	if _, err := d.Root.Resolve(opts.TargetDir); err != nil {
		return nil, pathError("target_dir", err)
	}
	if args.Region == "" {
		args.Region = "NA"
	}
	if args.DAGSource == "" {
		args.DAGSource = "catalog"
	}
	wf, _ := workflows.Get(workflows.NewProject)
	filled := map[string]any{"name": opts.Name, "framework": opts.Framework, "target_dir": opts.TargetDir,
		"region": strings.ToUpper(args.Region), "dag_source": args.DAGSource}
	if strings.Contains(args.Region, "-") {
		filled["region"] = strings.ToLower(args.Region)
	}
	return registry.OK(map[string]any{
		"workflow": wf.Name, "prompt": wf.Name, "args": filled, "stages": wf.Stages, "outcome": wf.Outcome,
		"project_path": opts.TargetDir + "/" + opts.Name + "_" + opts.Framework,
		"note":         "Nothing was written. Follow the stages in order (the MCP prompt '" + wf.Name + "' has the same plan); each stage's gate must pass before the next.",
	}).Next(registry.NextStep{Tool: "project.init", When: "to start the Scaffold stage", Why: "write the project files",
		ArgsHint: map[string]any{"name": opts.Name, "framework": opts.Framework, "target_dir": opts.TargetDir}}), nil
}
