package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// MaxRunNodes bounds one run: each node is a python3 process run in turn.
const MaxRunNodes = 50

// RunScriptsRequest names the nodes to run (Nodes and Edges, or DAGFile)
// and what they run with.
type RunScriptsRequest struct {
	Nodes      []string
	Edges      [][2]string
	DAGFile    string
	ConfigPath string
	// Samples maps node → contract input → file or directory in the
	// workspace.
	Samples map[string]map[string]string
	// Env and JobArgs override the config's values for every node.
	Env     map[string]string
	JobArgs map[string]string
	Timeout time.Duration // per script; the runner's default when zero
	// NoWiring stops feeding each node's outputs to its consumers.
	NoWiring bool
	Search   ScriptSearch
	// Progress, when set, hears about each node before it runs.
	Progress func(done, total int, message string)
}

// PlannedRun is one node's script and everything it starts with.
type PlannedRun struct {
	Node      string
	Interface *steps.Interface
	Script    scriptrun.Source
	Inputs    map[string]scriptrun.Source // by contract input
	Env       map[string]string
	JobArgs   map[string]string
}

// RunPlan is every node resolved before anything runs. Close removes the
// temporary files it made.
type RunPlan struct {
	Runs []PlannedRun
	// Skipped names the nodes with nothing to run and why.
	Skipped  map[string]string
	Warnings []string
	wiring   *deps.Plan
	temp     []string
	roots    []*workspace.Root
}

// Close removes the plan's temporary files and the sandboxes of its runs.
func (p *RunPlan) Close() {
	for _, r := range p.roots {
		r.Close()
	}
	for _, dir := range p.temp {
		os.RemoveAll(dir)
	}
	p.roots, p.temp = nil, nil
}

// source is a file or directory of the workspace, as a run copies it in.
func (s *Suite) source(rel string) scriptrun.Source {
	return scriptrun.Source{FS: s.Root.FS(), Path: rel, MaxFileBytes: s.Root.MaxFileBytes()}
}

// serverSource opens a directory the server made (a run's output, the
// shipped hyperparameters) for reading as the workspace is read: regular
// files only, through an os.Root. Its files are bounded by the file-size
// limit of the run that wrote them and the next run's input budget; Close
// closes it.
func (p *RunPlan) serverSource(dir, name string) (scriptrun.Source, error) {
	root, err := workspace.New(dir)
	if err != nil {
		// The directory is the server's own; its path stays out of errors.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return scriptrun.Source{}, fmt.Errorf("open for reading: %w", err)
	}
	p.roots = append(p.roots, root)
	return scriptrun.Source{FS: root.FS(), Path: name}, nil
}

// ScriptRun is the outcome of one node's script.
type ScriptRun struct {
	Success         bool                      `json:"success"`
	OutputFiles     []string                  `json:"output_files"`
	ErrorMessage    string                    `json:"error_message"`
	ExecutionTime   float64                   `json:"execution_time"`
	TimedOut        bool                      `json:"timed_out"`
	ExitCode        int                       `json:"exit_code"`
	Outputs         []scriptrun.OutputProduct `json:"outputs"`
	MissingOutputs  []string                  `json:"missing_outputs"`
	Stdout          string                    `json:"stdout"`
	Stderr          string                    `json:"stderr"`
	OutputTruncated bool                      `json:"output_truncated"`
	Script          string                    `json:"script"`
}

// RunScriptsReport is what a run did, node by node.
type RunScriptsReport struct {
	PipelineSuccess   bool                 `json:"pipeline_success"`
	ExecutionOrder    []string             `json:"execution_order"`
	TotalScripts      int                  `json:"total_scripts"`
	SuccessfulScripts int                  `json:"successful_scripts"`
	ScriptResults     map[string]ScriptRun `json:"script_results"`
	SkippedNodes      map[string]string    `json:"skipped_nodes"`
	ExecutionSummary  string               `json:"execution_summary"`
	Isolation         map[string][]string  `json:"isolation"`
	// Warnings are for the caller's envelope, not the payload.
	Warnings []string `json:"-"`
}

// RunScripts plans the nodes of req, then runs their scripts in DAG order,
// each node's outputs fed to its consumers, stopping at the first failure.
func (s *Suite) RunScripts(ctx context.Context, req RunScriptsRequest) (*RunScriptsReport, error) {
	if err := s.Runner.Available(); err != nil {
		return nil, err
	}
	plan, err := s.PlanScripts(ctx, req)
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = scriptrun.DefaultLimits().Timeout
	}
	progress := req.Progress
	if progress == nil {
		progress = func(int, int, string) {}
	}
	rep := &RunScriptsReport{ScriptResults: map[string]ScriptRun{}, SkippedNodes: plan.Skipped,
		TotalScripts: len(plan.Runs), Isolation: s.Runner.Isolation(), Warnings: plan.Warnings}
	produced := map[string]map[string]scriptrun.Source{} // node → output → its sandbox dir
	for i, p := range plan.Runs {
		progress(i, len(plan.Runs), "running "+p.Node)
		r, err := s.Runner.Run(ctx, scriptrun.RunRequest{Interface: p.Interface, Script: p.Script,
			SampleInputs: plan.inputsOf(p, produced), Env: p.Env, JobArgs: p.JobArgs,
			Limits: scriptrun.Limits{Timeout: timeout}, KeepSandbox: true})
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, &NodeError{Node: p.Node, Err: err}
		}
		plan.temp = append(plan.temp, r.Sandbox)
		run, outs := scriptRun(r, p.Script.Path)
		produced[p.Node] = map[string]scriptrun.Source{}
		for name, dir := range outs {
			if produced[p.Node][name], err = plan.serverSource(dir, "."); err != nil {
				return nil, &NodeError{Node: p.Node, Err: fmt.Errorf("output %s: %w", name, err)}
			}
		}
		rep.ScriptResults[p.Node] = run
		rep.ExecutionOrder = append(rep.ExecutionOrder, p.Node)
		if r.Success {
			rep.SuccessfulScripts++
		} else if r.TimedOut {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s was killed at the %s limit", p.Node, timeout))
		}
		if !r.Success {
			break // dependants would only fail on missing inputs
		}
	}
	progress(len(plan.Runs), len(plan.Runs), "done")
	rep.PipelineSuccess = rep.SuccessfulScripts == len(plan.Runs)
	rep.ExecutionSummary = fmt.Sprintf("%d of %d script(s) ran and produced every contract output", rep.SuccessfulScripts, len(plan.Runs))
	if !rep.PipelineSuccess {
		rep.Warnings = append(rep.Warnings, "a script failed; later nodes were not run")
	}
	return rep, nil
}

// inputsOf is p's inputs: those planned, then each wired input from the
// sandbox of the node that produced it.
func (plan *RunPlan) inputsOf(p PlannedRun, produced map[string]map[string]scriptrun.Source) map[string]scriptrun.Source {
	inputs := map[string]scriptrun.Source{}
	for k, v := range p.Inputs {
		inputs[k] = v
	}
	if plan.wiring == nil {
		return inputs
	}
	for _, b := range plan.wiring.Bindings[p.Node] {
		if _, given := inputs[b.Dependency]; given {
			continue
		}
		if _, isInput := p.Interface.Contract.Inputs.Get(b.Dependency); !isInput {
			continue
		}
		if src, ok := produced[b.FromNode][b.FromOutput]; ok {
			inputs[b.Dependency] = src
		}
	}
	return inputs
}

// scriptRun reports r without its sandbox paths (removed when the call
// ends) and returns the directory of each output produced.
func scriptRun(r *scriptrun.RunResult, script string) (ScriptRun, map[string]string) {
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
		o.Dir = ""
	}
	return ScriptRun{Success: r.Success, OutputFiles: files, ErrorMessage: r.ErrorMessage, ExecutionTime: r.DurationSeconds,
		TimedOut: r.TimedOut, ExitCode: r.ExitCode, Outputs: r.Outputs, MissingOutputs: r.MissingOutputs,
		Stdout: r.Stdout, Stderr: r.Stderr, OutputTruncated: r.OutputTruncated, Script: script}, outs
}

// PlanScripts resolves every node of req, its script, inputs, environment
// and job arguments; nothing runs, so bad input fails before any script
// does. The caller closes the plan.
func (s *Suite) PlanScripts(ctx context.Context, req RunScriptsRequest) (*RunPlan, error) {
	g, order, err := s.runGraph(req)
	if err != nil {
		return nil, err
	}
	var cfgFile *config.File
	if req.ConfigPath != "" {
		data, err := s.Root.ReadFile(req.ConfigPath)
		if err != nil {
			return nil, &PathError{Arg: "config_file", Err: err}
		}
		if cfgFile, err = config.Parse(data, s.Config); err != nil {
			return nil, &ConfigError{Arg: "config_file", Err: err}
		}
	}
	plan := &RunPlan{Skipped: map[string]string{}}
	for _, n := range order {
		if err := ctx.Err(); err != nil {
			plan.Close()
			return nil, err
		}
		p, err := s.planNode(n, cfgFile, req, plan)
		if err != nil {
			plan.Close()
			return nil, err
		}
		if p != nil {
			plan.Runs = append(plan.Runs, *p)
		}
	}
	// Wire inputs the way the compiler does (one resolver for both), so a
	// node with several parents gets each input from the right producer.
	if !req.NoWiring {
		if plan.wiring, err = deps.Resolve(ctx, g, s.Steps); err != nil {
			plan.Close()
			return nil, &InputError{Msg: err.Error()}
		}
	}
	return plan, nil
}

// runGraph is the DAG of req and its nodes in run order.
func (s *Suite) runGraph(req RunScriptsRequest) (*dag.DAG, []string, error) {
	nodes, edges := req.Nodes, req.Edges
	switch {
	case req.DAGFile != "" && (len(nodes) > 0 || len(edges) > 0):
		return nil, nil, inputErrorf("give either nodes (and edges) or dag_file, not both")
	case req.DAGFile != "":
		data, err := s.Root.ReadFile(req.DAGFile)
		if err != nil {
			return nil, nil, &PathError{Arg: "dag_file", Err: err}
		}
		g, err := dag.Parse(data)
		if err != nil {
			return nil, nil, inputErrorf("invalid DAG file '%s': %v", req.DAGFile, err)
		}
		if len(g.Nodes) > MaxRunNodes {
			return nil, nil, inputErrorf("dag_file has %d nodes; a script run takes at most %d", len(g.Nodes), MaxRunNodes)
		}
		nodes, edges = g.Nodes, g.Edges
	case len(nodes) == 0:
		return nil, nil, ErrNoNodes
	}
	for _, e := range edges {
		if !slices.Contains(nodes, e[0]) || !slices.Contains(nodes, e[1]) {
			return nil, nil, inputErrorf("edge [%s, %s] names a node not in 'nodes'", e[0], e[1])
		}
	}
	g := dag.New(nodes, edges)
	order, err := g.TopoSort()
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	for n := range req.Samples {
		if !slices.Contains(nodes, n) {
			return nil, nil, inputErrorf("sample_inputs names node '%s', which is not in 'nodes'", n)
		}
	}
	return g, order, nil
}

// planNode resolves node n; nil means it has no script to run (recorded
// in plan.Skipped).
func (s *Suite) planNode(n string, cfgFile *config.File, req RunScriptsRequest, plan *RunPlan) (*PlannedRun, error) {
	var cfg *config.Config
	if cfgFile != nil {
		if c, ok := cfgFile.Get(n); ok {
			cfg = &c
		}
	}
	iface, jobType, err := s.nodeStep(n, cfg)
	if err != nil {
		return nil, err
	}
	search := req.Search
	if cfg != nil && search.ScriptPath == "" && search.SourceDir == "" {
		if sd, ok := cfg.Get("source_dir"); ok {
			if dir, ok := sd.(string); ok && dir != "" {
				search.SourceDir = dir
			}
		}
	}
	script, err := s.FindScript(iface, search)
	if err != nil {
		return nil, err
	}
	if script.Rel == "" {
		if !validate.RulesetFor(iface.Registry.SageMakerStepType).Excluded && RunsScript(iface) {
			return nil, &NoScriptError{Node: n, EntryPoint: iface.Contract.EntryPoint, Searched: script.Searched}
		}
		// CreateModel, RegisterModel, Transform, … have no script to run.
		plan.Skipped[n] = fmt.Sprintf("%s step (%s) has no script to run", iface.Registry.SageMakerStepType, iface.StepType)
		if len(req.Samples[n]) > 0 {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("sample_inputs.%s was not used: %s", n, plan.Skipped[n]))
		}
		return nil, nil
	}
	p := &PlannedRun{Node: n, Interface: iface, Script: s.source(script.Rel), Inputs: map[string]scriptrun.Source{}}
	p.Env, p.JobArgs = startValues(iface, cfg, jobType, req)
	for name, file := range req.Samples[n] {
		if _, ok := iface.Contract.Inputs.Get(name); !ok {
			return nil, inputErrorf("sample_inputs.%s names '%s', which is not an input of %s (inputs: %s)",
				n, name, iface.StepType, strings.Join(iface.Contract.Inputs.Keys(), ", "))
		}
		fabs, err := s.Root.Resolve(file)
		if err == nil {
			_, err = s.Root.Lstat(file)
		}
		if err != nil {
			return nil, &PathError{Arg: "sample_inputs." + n + "." + name, Err: err}
		}
		p.Inputs[name] = s.source(s.Root.Rel(fabs))
	}
	var hyperparameters map[string]any
	if cfg != nil {
		hyperparameters, _ = cfg.Values["hyperparameters"].(map[string]any)
	}
	if err := s.shippedCodeInputs(p.Inputs, iface, path.Dir(script.Rel), hyperparameters, plan); err != nil {
		return nil, &NodeError{Node: n, Err: err}
	}
	return p, nil
}

// nodeStep is the interface node n runs with and its job type: the node
// name's, else the config's, whose variant the compiler would apply too.
func (s *Suite) nodeStep(n string, cfg *config.Config) (*steps.Interface, string, error) {
	iface, res, _, err := s.Step(n, "")
	if err != nil {
		return nil, "", err
	}
	jobType := res.JobType
	if jobType == "" && cfg != nil && cfg.JobType != "" {
		jobType = cfg.JobType
		if iface, _, _, err = s.Step(res.StepType, jobType); err != nil {
			return nil, "", err
		}
	}
	return iface, jobType, nil
}

// startValues are the environment and job arguments of a node: what the
// compiled pipeline gives the container (compiler.ContainerFor), else the
// node's job type, then the caller's overrides.
func startValues(iface *steps.Interface, cfg *config.Config, jobType string, req RunScriptsRequest) (env, jobArgs map[string]string) {
	env, jobArgs = map[string]string{}, map[string]string{}
	if cfg != nil {
		c := compiler.ContainerFor(iface, cfg)
		env = c.Environment
		for i := 0; i+1 < len(c.Arguments); i += 2 {
			jobArgs[steps.NormalizeFlag(c.Arguments[i])] = c.Arguments[i+1]
		}
	}
	if _, ok := jobArgs["job_type"]; !ok && jobType != "" {
		jobArgs["job_type"] = jobType
	}
	for k, v := range req.Env {
		env[k] = v
	}
	for k, v := range req.JobArgs {
		jobArgs[steps.NormalizeFlag(k)] = v
	}
	return env, jobArgs
}

// codeDir is where SageMaker unpacks a step's source directory;
// shippedHyperparameters is where the compiler puts the config's
// hyperparameters inside it (training script mode).
const (
	codeDir                = "/opt/ml/code/"
	shippedHyperparameters = "hyperparams/hyperparameters.json"
)

// shippedCodeInputs supplies contract inputs under /opt/ml/code, which in
// SageMaker arrive with the source directory rather than from S3: the
// hyperparameters file the compiler writes from the config's
// hyperparameters, else the same relative file next to the script
// (scriptDir, workspace-relative), confined to the workspace. Inputs
// already given are left alone; temporary directories are added to plan.
func (s *Suite) shippedCodeInputs(inputs map[string]scriptrun.Source, iface *steps.Interface, scriptDir string, hyperparameters map[string]any, plan *RunPlan) error {
	for _, name := range iface.Contract.Inputs.Keys() {
		port, _ := iface.Contract.Inputs.Get(name)
		rel, ok := strings.CutPrefix(port.Path, codeDir)
		if _, given := inputs[name]; given || !ok || rel == "" {
			continue
		}
		if rel == shippedHyperparameters && hyperparameters != nil {
			src, err := writeHyperparameters(hyperparameters, plan)
			if err != nil {
				return err
			}
			inputs[name] = src
			continue
		}
		// The os.Root refuses a symlink on the way that leads out of the
		// workspace; a final symlink is not copied either.
		local := path.Join(scriptDir, path.Clean("/" + rel)[1:])
		if fi, err := s.Root.Lstat(local); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			inputs[name] = s.source(local)
		}
	}
	return nil
}

// writeHyperparameters writes hp as the compiler ships it, into a new
// temporary directory recorded in plan.
func writeHyperparameters(hp map[string]any, plan *RunPlan) (scriptrun.Source, error) {
	data, err := json.Marshal(hp)
	if err != nil {
		return scriptrun.Source{}, fmt.Errorf("hyperparameters: %w", err)
	}
	dir, err := os.MkdirTemp("", "cursus-hp-")
	if err != nil {
		return scriptrun.Source{}, fmt.Errorf("hyperparameters: %w", scriptrun.WithoutServerPath(err))
	}
	plan.temp = append(plan.temp, dir)
	name := path.Base(shippedHyperparameters)
	if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o600); err != nil {
		return scriptrun.Source{}, fmt.Errorf("hyperparameters: %w", scriptrun.WithoutServerPath(err))
	}
	return plan.serverSource(dir, name)
}
