package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/registry"
)

// Argument schemas shared by the validate and author tools.
var (
	valStepNameSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^\s*[A-Za-z][A-Za-z0-9_\-]*\s*$`,
		"description": "Step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training)."}
	valJobTypeSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "pattern": `^[A-Za-z][A-Za-z0-9_]*$`,
		"description": "Job type variant to apply (training, calibration, …)."}
	scriptPathSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "The step's script inside the workspace (overrides the search)."}
	sourceDirSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "Directory inside the workspace holding the step scripts (searched for the contract's entry point)."}
	workspaceDirsSchema = map[string]any{"type": "array", "maxItems": 20,
		"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": 4096},
		"description": "Directories inside the workspace searched for scripts (default: scripts, ., dockers/scripts)."}
)

// defaultScriptDirs are searched, in order, when no script location is given.
var defaultScriptDirs = []string{"scripts", ".", "dockers/scripts"}

func validateNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil || d.Config == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	tools := []registry.ToolDef{
		{
			Name: "validate.alignment",
			Description: "Alignment checks for one or more step types: script ↔ contract (static analysis of the Python script: main() " +
				"signature, logical names, env vars, argparse flags, container paths), config ↔ contract, spec ↔ the catalog's " +
				"outputs (dependency scores), and builder binding. Each finding has a level (critical/error/warning/info), a rule, a location and a fix.",
			When: "You changed a step's script, contract or config section and want to know whether they still agree.",
			Examples: []string{
				`validate.alignment {"target_scripts": ["TabularPreprocessing"], "source_dir": "scripts"}  # one step against its script`,
				`validate.alignment {}  # every step type in the catalog`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"target_scripts": map[string]any{"type": "array", "maxItems": 200, "items": valStepNameSchema, "description": "Step types to check (default: all)."},
				"workspace_dirs": workspaceDirsSchema,
				"source_dir":     sourceDirSchema,
			}),
			Handler: d.validateAlignment,
		},
		{
			Name:        "validate.step",
			Description: "All alignment checks for one step (optionally one job type), with its script found in the workspace or given by path.",
			When:        "You want the full alignment report of a single step.",
			Examples:    []string{`validate.step {"step_name": "XGBoostTraining"}  # catalog-level checks`},
			Tags:        []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "job_type": valJobTypeSchema, "script_path": scriptPathSchema,
				"source_dir": sourceDirSchema, "workspace_dirs": workspaceDirsSchema,
			}, "step_name"),
			Handler: d.validateStep,
		},
		{
			Name: "validate.step_interface",
			Description: "Validate .step.yaml interfaces: required keys, enumerations, path prefixes, contract ↔ spec key alignment, " +
				"property paths, compute rules and the config section. Checks a catalog step, every catalog step (all), a file or " +
				"directory in the workspace (path), or inline YAML (yaml).",
			When: "You wrote or edited a .step.yaml and want the author-time gate before anything else.",
			Examples: []string{
				`validate.step_interface {"all": true}  # every built-in and extra step type`,
				`validate.step_interface {"step_name": "TabularPreprocessing", "job_type": "training"}`,
				`validate.step_interface {"path": "steps/my_step.step.yaml"}  # a file in the workspace`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "all": registry.Boolean("Validate every step type in the catalog."),
				"job_type": valJobTypeSchema,
				"path":     map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "A .step.yaml file or a directory of them, inside the workspace."},
				"yaml":     map[string]any{"type": "string", "minLength": 1, "maxLength": 262144, "description": "Inline .step.yaml text."},
			}),
			Handler: d.validateStepInterface,
		},
		{
			Name: "validate.builder",
			Description: "Universal builder test for one step type: synthesizes a valid config, wires the step to catalog providers " +
				"for its required inputs, compiles that small pipeline and checks the step's SageMaker request shape; plus the " +
				"alignment, config-construction and step-type checks. Scored (weights 2.0/1.5/1.0/1.0) and rated.",
			When:     "You want proof that a step type can actually be built into a pipeline definition.",
			Examples: []string{`validate.builder {"step_name": "XGBoostTraining", "enable_scoring": false}`},
			Tags:     []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "job_type": valJobTypeSchema,
				"enable_scoring": registry.Boolean("Add a score and rating (default true)."),
			}, "step_name"),
			Handler: d.validateBuilder,
		},
		{
			Name:        "validate.info",
			Description: "What the validation tools check: levels, rulesets per SageMaker step type, rules and their levels, dependency thresholds, and what validate.run_scripts isolates and does not.",
			When:        "You need to know which checks exist before choosing a validation tool.",
			Examples:    []string{`validate.info {}`},
			Tags:        []string{registry.PhaseValidator},
			Schema:      registry.Object(map[string]any{}),
			Handler:     d.validateInfo,
		},
		{
			Name: "validate.run_scripts",
			Description: "Run step scripts locally with python3 in a temporary sandbox: the contract's /opt/ml paths mapped to sandbox " +
				"directories, the contract's env vars (plus config values and overrides) and job arguments, sample inputs copied in. " +
				"Nodes run in DAG order with each step's outputs fed to its consumers. Bounded time and output; reports the outputs " +
				"produced against the contract. Not an OS-level sandbox (see validate.info).",
			When: "Scripts pass static alignment and you want to see them actually run on a small sample.",
			Examples: []string{
				`validate.run_scripts {"nodes": ["TabularPreprocessing_training"], "source_dir": "scripts", "sample_inputs": {"TabularPreprocessing_training": {"input_data": "data/sample.csv"}}, "env": {"LABEL_FIELD": "label"}}`,
				`validate.run_scripts {"dag_file": "examples/xgboost-tabular/dag.json", "config_path": "examples/xgboost-tabular/config.json", "sample_inputs": {"DummyDataLoading_training": {"data_source": "examples/xgboost-tabular/data/tabular.csv"}, "DummyDataLoading_calibration": {"data_source": "examples/xgboost-tabular/data/tabular.csv"}}}  # the whole example`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"nodes": map[string]any{"type": "array", "minItems": 1, "maxItems": maxRunNodes, "items": valStepNameSchema, "description": "DAG nodes to run. Give this or dag_file."},
				"edges": map[string]any{"type": "array", "maxItems": 500, "description": "[src, dst] pairs between the nodes.",
					"items": map[string]any{"type": "array", "minItems": 2, "maxItems": 2, "items": map[string]any{"type": "string", "maxLength": 256}}},
				"dag_file":       map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "DAG JSON file in the workspace: run every node of it. Give this or nodes."},
				"config_path":    map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "config.json in the workspace: source_dir, entry points and env values come from it."},
				"source_dir":     sourceDirSchema,
				"workspace_dirs": workspaceDirsSchema,
				"sample_inputs": map[string]any{"type": "object", "maxProperties": 50,
					"description":          "node → {input name → file or directory in the workspace}.",
					"additionalProperties": map[string]any{"type": "object", "maxProperties": 50, "additionalProperties": map[string]any{"type": "string", "minLength": 1, "maxLength": 4096}}},
				"env": map[string]any{"type": "object", "maxProperties": 100, "description": "Environment variable overrides for every node.",
					"additionalProperties": map[string]any{"type": "string", "maxLength": 8192}},
				"job_args": map[string]any{"type": "object", "maxProperties": 50, "description": "Job argument values (flag without dashes → value), e.g. {\"job_type\": \"training\"}.",
					"additionalProperties": map[string]any{"type": "string", "maxLength": 1024}},
				"timeout_seconds":           map[string]any{"type": "integer", "minimum": 1, "maximum": 3600, "description": "Wall-clock limit per script (default 60)."},
				"use_dependency_resolution": registry.Boolean("Feed each node's outputs to its consumers' inputs (default true)."),
				"test_workspace_dir":        map[string]any{"type": "string", "maxLength": 4096, "description": "Accepted for compatibility; runs always use a fresh temporary sandbox."},
			}),
			ExecCode: true,
			Handler:  d.validateRunScripts,
		},
	}
	tools = append(tools, validateDepsTools(d)...)
	return registry.Namespace{
		Name:        "validate",
		Description: "Check scripts, contracts, specs, configs and builders against each other, and run scripts in a sandbox.",
		Tools:       tools,
	}, nil
}

// ---- shared helpers -------------------------------------------------------

// stepFor resolves a step type or node name to its interface (job-type
// variant applied).
func (d *Deps) stepFor(name, jobType string) (*steps.Interface, steps.Resolution, []string, error) {
	name = strings.TrimSpace(name)
	res, err := d.Steps.Resolve(name)
	if err != nil {
		var nf *steps.NotFoundError
		if errors.As(err, &nf) {
			te := registry.Errorf(registry.CodeNotFound, "%s", nf.Error()).WithDetails(map[string]any{"step_name": name, "suggestions": nonNilList(nf.Suggestions)})
			if nf.Internal != nil {
				return nil, res, nil, registry.Errorf(registry.CodeUnsupported, "%s", nf.Error()).
					WithDetails(map[string]any{"step_name": name, "replacement": nf.Internal.Replacement}).
					Suggest(nf.Internal.Advice, "catalog.step_info")
			}
			return nil, res, nil, te.Suggest("Use a step type from catalog.list_steps or catalog.search.", "catalog.list_steps", "catalog.search")
		}
		return nil, res, nil, err
	}
	if jobType == "" {
		jobType = res.JobType
	}
	if jobType == "" {
		iface, _ := d.Steps.Get(res.StepType)
		return iface, res, nil, nil
	}
	iface, warns, err := d.Steps.ForJobType(res.StepType, jobType)
	if err != nil {
		return nil, res, nil, registry.Errorf(registry.CodeInvalidInput, "job_type '%s' for %s: %v", jobType, res.StepType, err)
	}
	return iface, res, warns, nil
}

// scriptSearch says where to look for a step's script.
type scriptSearch struct {
	ScriptPath    string   `json:"script_path"`
	SourceDir     string   `json:"source_dir"`
	WorkspaceDirs []string `json:"workspace_dirs"`
}

// stepScriptArgs name one step (and job type) and where to look for its
// script: the arguments of author.check_script and validate.step.
type stepScriptArgs struct {
	StepName string `json:"step_name"`
	JobType  string `json:"job_type"`
	scriptSearch
}

// findScript locates the script of iface inside the workspace. It returns
// the workspace-relative path ("" when not found), its source and the
// places searched. Path arguments that escape the workspace are errors.
func (d *Deps) findScript(iface *steps.Interface, s scriptSearch) (string, []byte, []string, error) {
	if s.ScriptPath != "" {
		abs, err := d.Root.Resolve(s.ScriptPath)
		if err != nil {
			return "", nil, nil, pathError("script_path", err)
		}
		data, err := readSmallFile(abs, 2<<20)
		if err != nil {
			return "", nil, nil, pathError("script_path", err)
		}
		return d.Root.Rel(abs), data, nil, nil
	}
	entry := iface.Contract.EntryPoint
	if entry == "" {
		return "", nil, nil, nil
	}
	dirs := s.WorkspaceDirs
	arg := "workspace_dirs"
	if s.SourceDir != "" {
		dirs, arg = []string{s.SourceDir}, "source_dir"
	}
	explicit := len(dirs) > 0
	if !explicit {
		dirs = defaultScriptDirs
	}
	var searched []string
	for _, dir := range dirs {
		abs, err := d.Root.Resolve(path.Join(dir, entry))
		if err != nil {
			if explicit {
				return "", nil, nil, pathError(arg, err)
			}
			continue
		}
		rel := d.Root.Rel(abs)
		searched = append(searched, rel)
		data, err := readSmallFile(abs, 2<<20)
		if err == nil {
			return rel, data, searched, nil
		}
	}
	return "", nil, searched, nil
}

func readSmallFile(abs string, limit int64) ([]byte, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", filepath.Base(abs), fs.ErrNotExist)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(abs), limit)
	}
	return os.ReadFile(abs)
}

// stepCheck assembles everything alignment needs for iface.
func (d *Deps) stepCheck(iface *steps.Interface, script string, src []byte, searched []string) validate.StepCheck {
	c := validate.StepCheck{Interface: iface, ScriptFile: script, Script: src, ScriptSearched: searched,
		Score: func(dep steps.Dependency, depName string, out steps.Output, outName, provider string) float64 {
			return deps.Score(dep, depName, out, outName, provider).Total
		},
		Replacement: steps.InternalReplacement,
	}
	if sc, err := d.Config.ForStep(iface.StepType); err == nil {
		c.ConfigFields = map[string]any{}
		for _, f := range sc.Fields {
			c.ConfigFields[f.Name] = f.Default
		}
	}
	for _, n := range d.Steps.Names() {
		if p, ok := d.Steps.Get(n); ok {
			c.Providers = append(c.Providers, p)
		}
	}
	return c
}

func findingsOf(fs []validate.Finding) []validate.Finding {
	if fs == nil {
		return []validate.Finding{}
	}
	return fs
}

// ---- validate.alignment / validate.step ----------------------------------

func (d *Deps) validateAlignment(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Targets []string `json:"target_scripts"`
		scriptSearch
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	targets := args.Targets
	scope := "target_scripts"
	if len(targets) == 0 {
		targets, scope = d.Steps.Names(), "all_steps"
	}
	var reports []validate.StepReport
	passed, failed, excluded := 0, 0, 0
	breakdown := map[string]map[string]int{}
	critical := []map[string]any{}
	for i, name := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		iface, _, _, err := d.stepFor(name, "")
		if err != nil {
			return nil, err
		}
		rel, src, searched, err := d.findScript(iface, scriptSearch{SourceDir: args.SourceDir, WorkspaceDirs: args.WorkspaceDirs})
		if err != nil {
			return nil, err
		}
		r := validate.CheckStep(d.stepCheck(iface, rel, src, searched))
		reports = append(reports, r)
		b := breakdown[r.SageMakerStepType]
		if b == nil {
			b = map[string]int{"total": 0, "passed": 0, "failed": 0, "excluded": 0}
			breakdown[r.SageMakerStepType] = b
		}
		b["total"]++
		switch r.Status {
		case validate.StatusPassed:
			passed++
			b["passed"]++
		case validate.StatusFailed:
			failed++
			b["failed"]++
		default:
			excluded++
			b["excluded"]++
		}
		for _, f := range r.Findings {
			if f.Blocking() {
				critical = append(critical, map[string]any{"step_name": r.StepName, "step_type": r.SageMakerStepType,
					"level": f.Level, "rule": f.Rule, "location": f.Location, "message": f.Message, "fix": f.Fix})
			}
		}
		registry.Progress(ctx, float64(i+1), float64(len(targets)), r.StepName)
	}
	rate := 0.0
	if n := len(reports) - excluded; n > 0 {
		rate = float64(passed) / float64(n)
	}
	data := map[string]any{"scope": scope, "total_steps": len(reports), "passed_steps": passed, "failed_steps": failed,
		"excluded_steps": excluded, "pass_rate": rate, "step_type_breakdown": breakdown,
		"critical_issues": critical, "critical_issue_count": len(critical), "results": reports}
	if scope == "target_scripts" {
		data["target_scripts"] = targets
	}
	if failed > 0 {
		return registry.Fail(registry.CodeValidationFailed, fmt.Sprintf("%d of %d step(s) failed alignment", failed, len(reports))).
			WithDetails(data).
			Suggest("Apply each finding's fix (critical_issues lists them), then re-run validate.alignment.", "author.check_script", "steps.io", "validate.step_interface"), nil
	}
	return registry.OK(data).Next(registry.NextStep{Tool: "validate.builder", When: "alignment passes", Why: "prove the step builds into a pipeline definition"}).
		WithMeta("tool_scope", scope), nil
}

func (d *Deps) validateStep(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args stepScriptArgs
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	iface, _, warns, err := d.stepFor(args.StepName, args.JobType)
	if err != nil {
		return nil, err
	}
	rel, src, searched, err := d.findScript(iface, args.scriptSearch)
	if err != nil {
		return nil, err
	}
	r := validate.CheckStep(d.stepCheck(iface, rel, src, searched))
	if r.Status == validate.StatusFailed {
		return registry.Fail(registry.CodeValidationFailed, fmt.Sprintf("%s failed alignment: %d critical, %d error finding(s)", r.StepName, r.Counts["critical"], r.Counts["error"])).
			WithDetails(map[string]any{"report": r}).
			Suggest("Apply each finding's fix, then re-run validate.step.", "author.check_script", "steps.io"), nil
	}
	return registry.OK(r).Warn(warns...).Next(registry.NextStep{Tool: "validate.builder", When: "alignment passes",
		Why: "build the step from a synthesized config", ArgsHint: map[string]any{"step_name": r.StepName}}), nil
}

// ---- validate.step_interface ---------------------------------------------

type interfaceResult struct {
	Step     string          `json:"step"`
	Source   string          `json:"source,omitempty"`
	JobType  string          `json:"job_type,omitempty"`
	OK       bool            `json:"ok"`
	Errors   []steps.Finding `json:"errors"`
	Warnings []steps.Finding `json:"warnings"`
}

// checkInterface validates one interface and adds the catalog-level
// warning the reference gives: a compatible source that is a case typo of
// a known step.
func (d *Deps) checkInterface(iface *steps.Interface, jobType string) interfaceResult {
	r := interfaceResult{Step: iface.StepType, Source: iface.Source, JobType: jobType, Errors: []steps.Finding{}, Warnings: []steps.Finding{}}
	target := iface
	if jobType != "" {
		merged, warns, err := iface.WithJobType(jobType)
		if err != nil {
			r.Errors = append(r.Errors, steps.Finding{Level: steps.LevelError, Path: "variants." + jobType, Rule: "variant_merge", Message: err.Error()})
		} else {
			target = merged
			for _, w := range warns {
				r.Warnings = append(r.Warnings, steps.Finding{Level: steps.LevelWarning, Path: "variants", Rule: "job_type", Message: w})
			}
		}
	}
	for _, f := range steps.Validate(target) {
		if f.Level == steps.LevelError {
			r.Errors = append(r.Errors, f)
		} else {
			r.Warnings = append(r.Warnings, f)
		}
	}
	lower := map[string]string{}
	for _, n := range d.Steps.Names() {
		lower[strings.ToLower(n)] = n
	}
	for _, depName := range target.Spec.Dependencies.Keys() {
		dep, _ := target.Spec.Dependencies.Get(depName)
		for _, src := range dep.CompatibleSources {
			if _, known := d.Steps.Get(src); known {
				continue
			}
			if exact, ok := lower[strings.ToLower(src)]; ok {
				r.Warnings = append(r.Warnings, steps.Finding{Level: steps.LevelWarning, File: iface.Source,
					Path: "spec.dependencies." + depName + ".compatible_sources", Rule: "compatible_source_case",
					Message: fmt.Sprintf("%q looks like a case typo of %q; compatible sources are matched exactly", src, exact)})
			}
		}
	}
	r.OK = len(r.Errors) == 0
	return r
}

func (d *Deps) validateStepInterface(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string `json:"step_name"`
		All      bool   `json:"all"`
		JobType  string `json:"job_type"`
		Path     string `json:"path"`
		YAML     string `json:"yaml"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	given := 0
	for _, b := range []bool{args.StepName != "", args.All, args.Path != "", args.YAML != ""} {
		if b {
			given++
		}
	}
	if given != 1 {
		return nil, registry.Errorf(registry.CodeInvalidInput, "provide exactly one of 'step_name' (a canonical step name), 'all': true, 'path' or 'yaml'")
	}
	var results []interfaceResult
	parseErr := func(source string, err error) interfaceResult {
		r := interfaceResult{Step: "", Source: source, Errors: []steps.Finding{}, Warnings: []steps.Finding{}}
		var le *steps.LoadError
		if errors.As(err, &le) {
			r.Errors = append(r.Errors, le.Findings...)
		} else {
			r.Errors = append(r.Errors, steps.Finding{Level: steps.LevelError, File: source, Rule: "parse", Message: err.Error()})
		}
		return r
	}
	switch {
	case args.All:
		for _, n := range d.Steps.Names() {
			iface, _ := d.Steps.Get(n)
			results = append(results, d.checkInterface(iface, args.JobType))
		}
	case args.StepName != "":
		iface, _, _, err := d.stepFor(args.StepName, "")
		if err != nil {
			return nil, err
		}
		results = append(results, d.checkInterface(iface, args.JobType))
	case args.YAML != "":
		iface, err := steps.Parse("inline.step.yaml", []byte(args.YAML))
		if err != nil {
			results = append(results, parseErr("inline", err))
		} else {
			iface.Source = "inline"
			results = append(results, d.checkInterface(iface, args.JobType))
		}
	default:
		abs, err := d.Root.Resolve(args.Path)
		if err != nil {
			return nil, pathError("path", err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, pathError("path", err)
		}
		var files []string
		if fi.IsDir() {
			entries, err := os.ReadDir(abs)
			if err != nil {
				return nil, pathError("path", err)
			}
			for _, e := range entries {
				if e.Type().IsRegular() && strings.HasSuffix(e.Name(), steps.FileSuffix) {
					files = append(files, filepath.Join(abs, e.Name()))
				}
			}
			if len(files) == 0 {
				return nil, registry.Errorf(registry.CodeNotFound, "'path': no %s files in %s", steps.FileSuffix, args.Path)
			}
		} else {
			files = []string{abs}
		}
		sort.Strings(files)
		for _, f := range files {
			rel := d.Root.Rel(f)
			data, err := readSmallFile(f, 1<<20)
			if err != nil {
				results = append(results, parseErr(rel, err))
				continue
			}
			iface, err := steps.Parse(rel, data)
			if err != nil {
				results = append(results, parseErr(rel, err))
				continue
			}
			iface.Source = rel
			results = append(results, d.checkInterface(iface, args.JobType))
		}
	}
	nErr, nWarn, failedN := 0, 0, 0
	for _, r := range results {
		nErr += len(r.Errors)
		nWarn += len(r.Warnings)
		if !r.OK {
			failedN++
		}
	}
	data := map[string]any{"validated": len(results), "errors": nErr, "warnings": nWarn, "results": results}
	if failedN > 0 {
		return registry.Fail(registry.CodeValidationFailed, fmt.Sprintf("%d interface(s) failed validation", failedN)).WithDetails(data).
			Suggest("Fix each error at its key path (rule names the check); steps.io shows an exemplar's ports.",
				"strategies.for_step_type", "catalog.config_fields", "validate.deps_explain"), nil
	}
	res := registry.OK(data).Next(registry.NextStep{Tool: "validate.alignment", When: "the interface is valid", Why: "check the script and config against it"})
	if nWarn > 0 {
		res.Warn(fmt.Sprintf("%d non-blocking incompleteness warning(s) across interfaces", nWarn))
	}
	return res, nil
}

// ---- validate.builder -----------------------------------------------------

// builderComponent is one part of the universal builder test.
type builderComponent struct {
	Status string   `json:"status"` // COMPLETED | ERROR | SKIPPED
	Issues []string `json:"issues"`
	Detail any      `json:"detail,omitempty"`
}

var builderWeights = map[string]float64{"alignment_validation": 2.0, "integration_testing": 1.5, "step_creation": 1.0, "step_type_validation": 1.0}

// miniPipeline is the step plus, for each required dependency, the best
// catalog provider (recursively), so the step can be compiled with its
// inputs wired as they would be in a real pipeline.
func (d *Deps) miniPipeline(target *steps.Interface, node string) (*dag.DAG, error) {
	nodes := []string{node}
	var edges [][2]string
	inGraph := map[string]string{target.StepType: node}
	var add func(iface *steps.Interface, node string, depth int) error
	add = func(iface *steps.Interface, node string, depth int) error {
		for _, depName := range iface.Spec.Dependencies.Keys() {
			dep, _ := iface.Spec.Dependencies.Get(depName)
			if !dep.IsRequired() {
				continue
			}
			best, bestScore := "", 0.0
			for _, n := range d.Steps.Names() {
				p, _ := d.Steps.Get(n)
				if n == iface.StepType || n == target.StepType || validate.RulesetFor(p.Registry.SageMakerStepType).Excluded {
					continue
				}
				if _, internal := steps.LookupInternal(n); internal {
					continue
				}
				for _, on := range p.Spec.Outputs.Keys() {
					o, _ := p.Spec.Outputs.Get(on)
					if s := deps.Score(dep, depName, o, on, n).Total; s > bestScore {
						best, bestScore = n, s
					}
				}
			}
			if best == "" || bestScore <= deps.Threshold {
				return fmt.Errorf("no catalog step provides required input %s.%s", iface.StepType, depName)
			}
			if existing, ok := inGraph[best]; ok {
				edges = append(edges, [2]string{existing, node})
				continue
			}
			if depth >= 6 {
				return fmt.Errorf("provider chain for %s is deeper than 6 steps", target.StepType)
			}
			inGraph[best] = best
			nodes = append(nodes, best)
			edges = append(edges, [2]string{best, node})
			p, _ := d.Steps.Get(best)
			if err := add(p, best, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(target, node, 0); err != nil {
		return nil, err
	}
	return dag.New(nodes, edges), nil
}

func (d *Deps) validateBuilder(ctx context.Context, req registry.Request) (*registry.Result, error) {
	args := struct {
		StepName string `json:"step_name"`
		JobType  string `json:"job_type"`
		Scoring  *bool  `json:"enable_scoring"`
	}{}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	iface, res, _, err := d.stepFor(args.StepName, args.JobType)
	if err != nil {
		return nil, err
	}
	comps := map[string]*builderComponent{}
	newComp := func(name string) *builderComponent {
		c := &builderComponent{Status: "COMPLETED", Issues: []string{}}
		comps[name] = c
		return c
	}

	// alignment_validation: the catalog-level checks (no script here).
	align := newComp("alignment_validation")
	report := validate.CheckStep(d.stepCheck(iface, "", nil, nil))
	for _, f := range report.Findings {
		if f.Blocking() {
			align.Status = "ERROR"
			align.Issues = append(align.Issues, fmt.Sprintf("[%s] %s: %s", f.Rule, f.Location, f.Message))
		}
	}
	align.Detail = map[string]any{"ruleset": report.Ruleset.Name, "counts": report.Counts}

	// step_type_validation: is there a handler for the step's kind?
	stv := newComp("step_type_validation")
	rs := validate.RulesetFor(iface.Registry.SageMakerStepType)
	_, internal := steps.LookupInternal(iface.StepType)
	switch {
	case rs.Excluded || iface.Registry.SageMakerStepType == steps.SMLambda:
		stv.Status = "SKIPPED"
		stv.Issues = append(stv.Issues, iface.Registry.SageMakerStepType+" steps bind no builder")
	case internal || iface.Registry.Requires == "secure_ai_sandbox_workflow_python_sdk":
		stv.Status = "ERROR"
		rep, _ := steps.InternalReplacement(iface.StepType)
		stv.Issues = append(stv.Issues, "Amazon-internal step kind; not compiled here"+ifNotEmpty("; use ", rep))
	case iface.Registry.SageMakerStepType != steps.SMRegisterModel && (iface.Compute == nil || iface.Compute.Kind == ""):
		stv.Status = "ERROR"
		stv.Issues = append(stv.Issues, "no compute.kind: the step is not producible")
	}

	// integration_testing: synthesize configs, wire providers, compile.
	integ := newComp("integration_testing")
	create := newComp("step_creation")
	node := iface.StepType
	if res.JobType != "" {
		node = iface.StepType + "_" + res.JobType
	} else if args.JobType != "" {
		node = iface.StepType + "_" + args.JobType
	}
	if stv.Status != "COMPLETED" {
		integ.Status, create.Status = "SKIPPED", "SKIPPED"
	} else if g, err := d.miniPipeline(iface, node); err != nil {
		integ.Status, create.Status = "ERROR", "SKIPPED"
		integ.Issues = append(integ.Issues, err.Error())
	} else {
		integ.Detail = map[string]any{"nodes": g.Nodes, "edges": g.Edges}
		configs, problems := d.sampleConfigs(g)
		if len(problems) > 0 {
			integ.Status, create.Status = "ERROR", "SKIPPED"
			for _, p := range problems {
				integ.Issues = append(integ.Issues, "config: "+p.String())
			}
		} else {
			out, err := compiler.Compile(ctx, compiler.Input{DAG: g, Configs: configs, Catalog: d.Steps})
			if err != nil {
				integ.Status, create.Status = "ERROR", "SKIPPED"
				integ.Issues = append(integ.Issues, "compile: "+err.Error())
			} else {
				checkStepShape(create, out, node, iface)
			}
		}
	}

	status := "PASSED"
	for _, c := range comps {
		if c.Status == "ERROR" {
			status = "FAILED"
		}
	}
	data := map[string]any{"step_name": iface.StepType, "node": node, "validation_type": "comprehensive_builder_validation",
		"sagemaker_step_type": iface.Registry.SageMakerStepType, "builder": iface.BuilderName(), "components": comps, "overall_status": status}
	if args.Scoring == nil || *args.Scoring {
		total, got := 0.0, 0.0
		for name, c := range comps {
			if c.Status == "SKIPPED" {
				continue
			}
			total += builderWeights[name]
			if c.Status == "COMPLETED" {
				got += builderWeights[name]
			}
		}
		score := 100.0
		if total > 0 {
			score = 100 * got / total
		}
		data["scoring"] = map[string]any{"overall_score": score, "rating": rating(score), "weights": builderWeights}
	}
	r := registry.OK(data).WithMeta("step_name", iface.StepType)
	if status == "FAILED" {
		return registry.Fail(registry.CodeNotConstructible, iface.StepType+" could not be built: see the failing components").WithDetails(data).
			Suggest("Fix the issues of each ERROR component (config problems: author.config_constraints; wiring: steps.io).",
				"validate.step_interface", "author.config_constraints", "steps.io"), nil
	}
	return r, nil
}

func ifNotEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func rating(score float64) string {
	switch {
	case score >= 90:
		return "Excellent"
	case score >= 80:
		return "Good"
	case score >= 70:
		return "Satisfactory"
	case score >= 60:
		return "Needs Work"
	}
	return "Poor"
}

// sampleConfigs builds a valid config for every node of g from sample
// essentials.
func (d *Deps) sampleConfigs(g *dag.DAG) ([]config.Config, []config.Problem) {
	rep, err := config.Requirements(g, d.Config)
	if err != nil {
		return nil, []config.Problem{{Field: "dag", Message: err.Error()}}
	}
	base, perNode, missing := config.SampleValues(rep)
	if len(missing) > 0 {
		return nil, []config.Problem{{Field: strings.Join(missing, ", "), Kind: config.KindMissing, Message: "no sample value can be synthesized"}}
	}
	return d.Config.BuildDAG(g, base, perNode)
}

// checkStepShape finds the step built for node in the definition and checks
// the request shape of its SageMaker step type.
func checkStepShape(c *builderComponent, out *compiler.Result, node string, iface *steps.Interface) {
	var stepName string
	for _, s := range out.Steps {
		if s.Node == node {
			stepName = s.StepName
		}
	}
	var def struct {
		Steps []map[string]any `json:"Steps"`
	}
	if err := json.Unmarshal(out.JSON, &def); err != nil {
		c.Status = "ERROR"
		c.Issues = append(c.Issues, "definition is not JSON: "+err.Error())
		return
	}
	var step map[string]any
	for _, s := range def.Steps {
		if s["Name"] == stepName {
			step = s
		}
	}
	if step == nil {
		c.Status = "ERROR"
		c.Issues = append(c.Issues, fmt.Sprintf("the definition has no step for node %s", node))
		return
	}
	wantType := map[string]string{steps.SMProcessing: "Processing", steps.SMTraining: "Training", steps.SMTuning: "Tuning",
		steps.SMCreateModel: "Model", steps.SMTransform: "Transform", steps.SMRegisterModel: "RegisterModel"}[iface.Registry.SageMakerStepType]
	if step["Type"] != wantType {
		c.Issues = append(c.Issues, fmt.Sprintf("step type is %v, want %s", step["Type"], wantType))
	}
	argsObj, _ := step["Arguments"].(map[string]any)
	required := map[string][]string{
		"Processing": {"AppSpecification", "ProcessingResources", "RoleArn"},
		"Training":   {"AlgorithmSpecification", "OutputDataConfig", "ResourceConfig", "RoleArn", "StoppingCondition"},
		"Tuning":     {"HyperParameterTuningJobConfig", "TrainingJobDefinition"},
		"Model":      {"ExecutionRoleArn"},
		"Transform":  {"ModelName", "TransformInput", "TransformOutput", "TransformResources"},
	}[wantType]
	for _, k := range required {
		if _, ok := argsObj[k]; !ok {
			c.Issues = append(c.Issues, "request lacks "+k)
		}
	}
	if wantType == "Processing" {
		outs := map[string]bool{}
		if poc, ok := argsObj["ProcessingOutputConfig"].(map[string]any); ok {
			if list, ok := poc["Outputs"].([]any); ok {
				for _, o := range list {
					if m, ok := o.(map[string]any); ok {
						outs[fmt.Sprint(m["OutputName"])] = true
					}
				}
			}
		}
		for _, name := range iface.Contract.Outputs.Keys() {
			if !outs[name] {
				c.Issues = append(c.Issues, "ProcessingOutputConfig lacks output "+name)
			}
		}
	}
	if len(c.Issues) > 0 {
		c.Status = "ERROR"
	}
	c.Detail = map[string]any{"step_name": stepName, "type": step["Type"], "argument_keys": sortedMapKeys(argsObj)}
}

func sortedMapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- validate.info ----------------------------------------------------------

func (d *Deps) validateInfo(_ context.Context, _ registry.Request) (*registry.Result, error) {
	rulesets := map[string]validate.Ruleset{}
	for _, t := range steps.SageMakerStepTypes {
		rulesets[t] = validate.RulesetFor(t)
	}
	return registry.OK(map[string]any{
		"validation": map[string]any{
			"levels": map[string]string{
				"critical": "the step cannot work (no main(), syntax error)",
				"error":    "a mismatch that breaks the step at build or run time",
				"warning":  "likely a mistake; does not fail the check",
				"info":     "for the record",
			},
			"categories": map[string]string{
				validate.CatScriptContract: "script ↔ contract: static analysis of the Python script (no interpreter needed)",
				validate.CatConfigContract: "config ↔ contract: env vars sourced from config fields, entry point defaults",
				validate.CatSpecDependency: "spec ↔ catalog: each dependency scored against every other step's outputs",
				validate.CatBuilderConfig:  "builder ↔ registry/config: handler binding, compute and config fields the builder reads",
			},
			"rulesets": rulesets,
			"script_rules": map[string]string{
				"script_syntax_error": "critical", "missing_main_function": "critical", "invalid_main_signature": "error",
				"undeclared_input_path": "error", "undeclared_output_path": "error", "unwritten_output_path": "error",
				"unread_required_env_var": "error", "unparsed_declared_arg": "error (warning when flags are computed)",
				"undeclared_env_var": "warning", "undeclared_job_arg": "warning", "unread_input_path": "warning (info when optional)",
				"undeclared_container_path": "warning", "reverse_arg_check_skipped_non_processing": "info",
			},
			"dependency_thresholds": map[string]float64{"pass": 0.6, "resolution": 0.5, "warning": 0.4},
			"builder_test_weights":  builderWeights,
		},
		"script_testing": map[string]any{
			"runtime":        "python3 from PATH",
			"available":      errString(d.runner().Available()),
			"default_limits": map[string]any{"timeout_seconds": 60, "max_output_bytes": 64 << 10, "max_input_bytes": 256 << 20},
			"isolation":      validate.Isolation,
			"entry":          "main(input_paths, output_paths, environ_vars, job_args) when defined, else the script as __main__",
		},
	}), nil
}

func errString(err error) any {
	if err == nil {
		return true
	}
	return err.Error()
}

// ---- validate.run_scripts ---------------------------------------------------

// maxRunNodes bounds one validate.run_scripts call: each node is a python3
// process run in turn.
const maxRunNodes = 50

func (d *Deps) validateRunScripts(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Nodes      []string                     `json:"nodes"`
		Edges      [][2]string                  `json:"edges"`
		DAGFile    string                       `json:"dag_file"`
		ConfigPath string                       `json:"config_path"`
		Samples    map[string]map[string]string `json:"sample_inputs"`
		Env        map[string]string            `json:"env"`
		JobArgs    map[string]string            `json:"job_args"`
		Timeout    int                          `json:"timeout_seconds"`
		UseDeps    *bool                        `json:"use_dependency_resolution"`
		scriptSearch
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	if err := d.runner().Available(); err != nil {
		return nil, registry.Errorf(registry.CodeRuntimeUnavailable, "cannot run scripts: %v", err).
			Suggest("Install python3 on the server (or run validate.alignment, which needs no interpreter).", "validate.alignment", "author.check_script")
	}
	switch {
	case args.DAGFile != "" && (len(args.Nodes) > 0 || len(args.Edges) > 0):
		return nil, registry.Errorf(registry.CodeInvalidInput, "give either nodes (and edges) or dag_file, not both")
	case args.DAGFile != "":
		data, err := d.Root.ReadFile(args.DAGFile)
		if err != nil {
			return nil, pathError("dag_file", err)
		}
		g, err := dag.Parse(data)
		if err != nil {
			return nil, registry.Errorf(registry.CodeInvalidInput, "invalid DAG file '%s': %v", args.DAGFile, err)
		}
		if len(g.Nodes) > maxRunNodes {
			return nil, registry.Errorf(registry.CodeInvalidInput, "dag_file has %d nodes; validate.run_scripts runs at most %d", len(g.Nodes), maxRunNodes)
		}
		args.Nodes, args.Edges = g.Nodes, g.Edges
	case len(args.Nodes) == 0:
		return nil, registry.Errorf(registry.CodeInvalidInput, "give nodes (and edges) or dag_file").
			Suggest("Name the DAG nodes to run, or a DAG file in the workspace.", "dag.construct")
	}
	g := dag.New(args.Nodes, args.Edges)
	for _, e := range args.Edges {
		if !slices.Contains(args.Nodes, e[0]) || !slices.Contains(args.Nodes, e[1]) {
			return nil, registry.Errorf(registry.CodeInvalidInput, "edge [%s, %s] names a node not in 'nodes'", e[0], e[1])
		}
	}
	order, err := g.TopoSort()
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	for n := range args.Samples {
		if !slices.Contains(args.Nodes, n) {
			return nil, registry.Errorf(registry.CodeInvalidInput, "sample_inputs names node '%s', which is not in 'nodes'", n)
		}
	}
	var cfgFile *config.File
	if args.ConfigPath != "" {
		data, err := d.Root.ReadFile(args.ConfigPath)
		if err != nil {
			return nil, pathError("config_path", err)
		}
		if cfgFile, err = config.Parse(data, d.Config); err != nil {
			return nil, registry.Errorf(registry.CodeConfigInvalid, "config_path: %v", err).Suggest("Fix the config values (config.load shows every problem).", "config.load")
		}
	}
	// Resolve every node and its script first: nothing runs on bad input.
	type planned struct {
		node   string
		iface  *steps.Interface
		script string
		env    map[string]string
		inputs map[string]string
	}
	var plan []planned
	// skipped names the nodes with nothing to run and why, so a caller can
	// tell "not run" from "forgotten".
	skipped := map[string]string{}
	var unused []string
	var cleanup []string
	defer func() {
		for _, dir := range cleanup {
			os.RemoveAll(dir)
		}
	}()
	for _, n := range order {
		iface, res, _, err := d.stepFor(n, "")
		if err != nil {
			return nil, err
		}
		p := planned{node: n, iface: iface, env: map[string]string{}, inputs: map[string]string{}}
		search := args.scriptSearch
		var hyperparameters map[string]any
		if cfgFile != nil {
			if cfg, ok := cfgFile.Get(n); ok {
				p.env = envFromConfig(iface, cfg)
				hyperparameters, _ = cfg.Values["hyperparameters"].(map[string]any)
				if search.ScriptPath == "" && search.SourceDir == "" {
					if sd, ok := cfg.Get("source_dir"); ok {
						if s, ok := sd.(string); ok && s != "" {
							search.SourceDir = s
						}
					}
				}
				if jt, ok := cfg.Get("job_type"); ok {
					if s, ok := jt.(string); ok && res.JobType == "" {
						res.JobType = s
					}
				}
			}
		}
		if res.JobType != "" {
			p.env["__job_type"] = res.JobType
		}
		rel, _, searched, err := d.findScript(iface, search)
		if err != nil {
			return nil, err
		}
		if rel == "" {
			if !validate.RulesetFor(iface.Registry.SageMakerStepType).Excluded && containsCategory(iface) {
				return nil, registry.Errorf(registry.CodeNotFound, "no script for node %s (looked for %s in %s)", n, iface.Contract.EntryPoint, strings.Join(searched, ", ")).
					Suggest("Pass source_dir (the directory holding the scripts) or config_path.", "project.init")
			}
			// CreateModel, RegisterModel, Transform, … have no script to run.
			skipped[n] = fmt.Sprintf("%s step (%s) has no script to run", iface.Registry.SageMakerStepType, iface.StepType)
			if len(args.Samples[n]) > 0 {
				unused = append(unused, fmt.Sprintf("sample_inputs.%s was not used: %s", n, skipped[n]))
			}
			continue
		}
		abs, _ := d.Root.Resolve(rel)
		p.script = abs
		for name, file := range args.Samples[n] {
			if _, ok := iface.Contract.Inputs.Get(name); !ok {
				return nil, registry.Errorf(registry.CodeInvalidInput, "sample_inputs.%s names '%s', which is not an input of %s (inputs: %s)",
					n, name, iface.StepType, strings.Join(iface.Contract.Inputs.Keys(), ", "))
			}
			fabs, err := d.Root.Resolve(file)
			if err != nil {
				return nil, pathError("sample_inputs."+n+"."+name, err)
			}
			if _, err := os.Lstat(fabs); err != nil {
				return nil, pathError("sample_inputs."+n+"."+name, err)
			}
			p.inputs[name] = fabs
		}
		if err := d.shippedCodeInputs(p.inputs, iface, filepath.Dir(abs), hyperparameters, &cleanup); err != nil {
			return nil, registry.Errorf(registry.CodeToolError, "node %s: %v", n, err)
		}
		plan = append(plan, p)
	}
	// Wire inputs the way the compiler does (one resolver for both), so a
	// node with several parents gets each input from the right producer.
	var wiring *deps.Plan
	if args.UseDeps == nil || *args.UseDeps {
		if wiring, err = deps.Resolve(g, d.Steps); err != nil {
			return nil, registry.Errorf(registry.CodeInvalidInput, "%v", err)
		}
	}

	timeout := 60 * time.Second
	if args.Timeout > 0 {
		timeout = time.Duration(args.Timeout) * time.Second
	}
	produced := map[string]map[string]string{} // node → output → sandbox dir
	results := map[string]any{}
	var execOrder []string
	success := 0
	warnings := unused
	for i, p := range plan {
		registry.Progress(ctx, float64(i), float64(len(plan)), "running "+p.node)
		inputs := map[string]string{}
		for k, v := range p.inputs {
			inputs[k] = v
		}
		if wiring != nil {
			for _, b := range wiring.Bindings[p.node] {
				if _, given := inputs[b.Dependency]; given {
					continue
				}
				if _, isInput := p.iface.Contract.Inputs.Get(b.Dependency); !isInput {
					continue
				}
				if dir, ok := produced[b.FromNode][b.FromOutput]; ok {
					inputs[b.Dependency] = dir
				}
			}
		}
		env := map[string]string{}
		jobArgs := map[string]string{}
		for k, v := range p.env {
			if k == "__job_type" {
				jobArgs["job_type"] = v
				continue
			}
			env[k] = v
		}
		for k, v := range args.Env {
			env[k] = v
		}
		for k, v := range args.JobArgs {
			jobArgs[validate.NormalizeFlag(k)] = v
		}
		r, err := d.runner().Run(ctx, validate.RunRequest{Interface: p.iface, Script: p.script, SampleInputs: inputs,
			Env: env, JobArgs: jobArgs, Limits: validate.Limits{Timeout: timeout}, KeepSandbox: true})
		if err != nil {
			var ctxErr error = ctx.Err()
			if ctxErr != nil {
				return nil, ctxErr
			}
			return nil, registry.Errorf(registry.CodeToolError, "node %s: %v", p.node, err)
		}
		cleanup = append(cleanup, r.Sandbox)
		outs := map[string]string{}
		files := []string{}
		for j := range r.Outputs {
			o := &r.Outputs[j]
			if o.Produced {
				outs[o.Name] = o.Dir
			}
			for _, f := range o.Files {
				files = append(files, o.Name+"/"+f)
			}
			o.Dir = "" // sandbox paths are removed when the call ends
		}
		produced[p.node] = outs
		r.Sandbox = ""
		execOrder = append(execOrder, p.node)
		if r.Success {
			success++
		} else if r.TimedOut {
			warnings = append(warnings, fmt.Sprintf("%s was killed at the %s limit", p.node, timeout))
		}
		results[p.node] = map[string]any{"success": r.Success, "output_files": files, "error_message": r.ErrorMessage,
			"execution_time": r.DurationSeconds, "timed_out": r.TimedOut, "exit_code": r.ExitCode, "outputs": r.Outputs,
			"missing_outputs": r.MissingOutputs, "stdout": r.Stdout, "stderr": r.Stderr, "output_truncated": r.OutputTruncated,
			"script": d.Root.Rel(p.script)}
		if !r.Success {
			break // dependants would only fail on missing inputs
		}
	}
	registry.Progress(ctx, float64(len(plan)), float64(len(plan)), "done")
	all := success == len(plan)
	data := map[string]any{"pipeline_success": all, "execution_order": execOrder, "total_scripts": len(plan),
		"successful_scripts": success, "script_results": results, "skipped_nodes": skipped,
		"execution_summary": fmt.Sprintf("%d of %d script(s) ran and produced every contract output", success, len(plan)),
		"isolation":         validate.Isolation}
	res := registry.OK(data).Warn(warnings...)
	if !all {
		res.Warn("a script failed; later nodes were not run")
	}
	return res, nil
}

// codeDir is where SageMaker unpacks a step's source directory;
// shippedHyperparameters is where compile puts the config's hyperparameters
// inside it (engine/compiler, training script mode).
const (
	codeDir                = "/opt/ml/code/"
	shippedHyperparameters = "hyperparams/hyperparameters.json"
)

// shippedCodeInputs supplies contract inputs under /opt/ml/code, which in
// SageMaker arrive with the source directory rather than from S3: the
// hyperparameters file the compiler writes from the config's
// hyperparameters (hyperparams/hyperparameters.json, as compile ships it),
// else the same relative file next to the script, confined to the
// workspace. Inputs the caller gave are left alone; temporary files are
// added to cleanup.
func (d *Deps) shippedCodeInputs(inputs map[string]string, iface *steps.Interface, scriptDir string, hyperparameters map[string]any, cleanup *[]string) error {
	for _, name := range iface.Contract.Inputs.Keys() {
		port, _ := iface.Contract.Inputs.Get(name)
		rel, ok := strings.CutPrefix(port.Path, codeDir)
		if _, given := inputs[name]; given || !ok || rel == "" {
			continue
		}
		if rel == shippedHyperparameters && hyperparameters != nil {
			dir, err := os.MkdirTemp("", "cursus-hp-")
			if err != nil {
				return err
			}
			*cleanup = append(*cleanup, dir)
			file := filepath.Join(dir, path.Base(rel))
			data, err := json.Marshal(hyperparameters)
			if err != nil {
				return fmt.Errorf("hyperparameters: %w", err)
			}
			if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
				return err
			}
			inputs[name] = file
			continue
		}
		// Resolve through the root: a symlink on the way must not lead
		// the copy out of the workspace.
		local, err := d.Root.Resolve(path.Join(d.Root.Rel(scriptDir), path.Clean("/" + rel)[1:]))
		if err != nil {
			continue
		}
		if fi, err := os.Lstat(local); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			inputs[name] = local
		}
	}
	return nil
}

func containsCategory(iface *steps.Interface) bool {
	for _, c := range validate.RulesetFor(iface.Registry.SageMakerStepType).Categories {
		if c == validate.CatScriptContract {
			return iface.Registry.Requires != "secure_ai_sandbox_workflow_python_sdk"
		}
	}
	return false
}

// envFromConfig fills the contract's env vars from config values the way
// the compiler does: NAME ← config field name.lower() or hyperparameters.
func envFromConfig(iface *steps.Interface, cfg config.Config) map[string]string {
	env := map[string]string{}
	names := append([]string{}, iface.Contract.EnvVars.Required...)
	names = append(names, iface.Contract.EnvVars.Optional.Keys()...)
	hp, _ := cfg.Values["hyperparameters"].(map[string]any)
	for _, n := range names {
		v, ok := cfg.Get(strings.ToLower(n))
		if !ok && hp != nil {
			v, ok = hp[strings.ToLower(n)]
		}
		if !ok || v == nil {
			continue
		}
		switch t := v.(type) {
		case string:
			env[n] = t
		case bool:
			env[n] = fmt.Sprint(t)
		case []any:
			parts := make([]string, len(t))
			for i, x := range t {
				parts[i] = fmt.Sprint(x)
			}
			env[n] = strings.Join(parts, ",")
		case map[string]any:
			b, _ := json.Marshal(t)
			env[n] = string(b)
		default:
			env[n] = fmt.Sprint(t)
		}
	}
	return env
}

// runner is the shared script runner (its concurrency cap spans calls).
func (d *Deps) runner() *validate.Runner { return d.Scripts }

// newScriptRunner makes the runner: at most two scripts at once (the
// server has few cores), python3 from PATH or the configured interpreter.
func newScriptRunner(opts Options) *validate.Runner {
	r := validate.NewRunner(2)
	if opts.Python != "" {
		r.LookPath = func(string) (string, error) { return exec.LookPath(opts.Python) }
	}
	return r
}
