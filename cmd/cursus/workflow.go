package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/cursus-dev/cursus/engine/workspace"
	"github.com/cursus-dev/cursus/registry"
)

// keyValues is a repeatable NAME=VALUE flag.
type keyValues map[string]string

func (k keyValues) String() string { return fmt.Sprint(map[string]string(k)) }
func (k keyValues) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	k[name] = value
	return nil
}

// cmdWorkflow runs a workflow's gates over a local project through the
// workflow tools, in-process: the verdicts are the server's. At the first
// gate that does not pass it prints each finding and the remedy, names the
// gate and exits 1.
func cmdWorkflow(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) (int, error) {
	if len(args) == 0 || args[0] != "run" {
		return 0, fmt.Errorf("%w: workflow needs a subcommand: run", errUsage)
	}
	// The name may come before the flags (workflow run NAME --input DIR).
	name, rest := "", args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	var input string
	wfArgs := keyValues{}
	cfg, fs, err := parseCommand("workflow run", rest, false, stderr, env, func(fs *flag.FlagSet) {
		fs.StringVar(&input, "input", "", "the project directory: dag.json, config.json, *.step.yaml and the scripts (pipeline_config/ is looked in too)")
		fs.Var(wfArgs, "arg", "a workflow argument NAME=VALUE (repeatable)")
	})
	if err != nil {
		return 0, err
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	} else if fs.NArg() > 0 {
		name = ""
	}
	if name == "" || input == "" {
		return 0, fmt.Errorf("%w: workflow run needs a workflow name and --input DIR", errUsage)
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return 0, err
	}
	content, err := readProject(ctx, input, cfg.Workspace.Root)
	if err != nil {
		return 0, err
	}
	ctx = registry.WithCaller(ctx, registry.Caller{Transport: "cli"})
	res := a.registry.Call(ctx, "workflow.start", map[string]any{"workflow": name, "args": map[string]string(wfArgs)})
	for {
		data, err := envelopeData(res)
		if err != nil {
			fmt.Fprintf(stderr, "cursus: %v\n", err)
			return 1, nil
		}
		if data.Stage != "" && data.Status != "started" {
			fmt.Fprintf(stdout, "%s: %s\n", data.Stage, data.Status)
		}
		switch data.Status {
		case "green":
			return 0, writeIndented(stdout, data.Outcome)
		case "started", "passed":
		default:
			for _, f := range data.Findings {
				fmt.Fprintf(stdout, "  - %s\n", f)
			}
			if data.Remedy != "" {
				fmt.Fprintf(stdout, "  remedy: %s\n", data.Remedy)
			}
			fmt.Fprintf(stderr, "cursus: gate %s did not pass (%s)\n", data.Stage, data.Status)
			return 1, nil
		}
		next := map[string]any{}
		for _, field := range data.Next.Takes {
			if v, ok := content[field]; ok {
				next[field] = v
			}
		}
		res = a.registry.Call(ctx, "workflow.submit", map[string]any{"run": data.Run, "stage": data.Next.Name, "content": next})
	}
}

// workflowStep is the part of a workflow tool's data the runner reads.
type workflowStep struct {
	Run      string   `json:"run"`
	Status   string   `json:"status"`
	Stage    string   `json:"stage"`
	Findings []string `json:"findings"`
	Remedy   string   `json:"remedy"`
	Outcome  any      `json:"outcome"`
	Next     struct {
		Name  string   `json:"name"`
		Takes []string `json:"takes"`
	} `json:"next"`
}

func envelopeData(res *registry.Result) (workflowStep, error) {
	var env struct {
		Data   workflowStep `json:"data"`
		Error  string       `json:"error"`
		Code   string       `json:"code"`
		Remedy *struct {
			FixAction string `json:"fix_action"`
		} `json:"remedy"`
		Meta struct {
			Details struct {
				Problems []struct {
					Node    string `json:"node"`
					Field   string `json:"field"`
					Kind    string `json:"kind"`
					Message string `json:"message"`
				} `json:"problems"`
			} `json:"details"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(res.Encode(), &env); err != nil {
		return workflowStep{}, err
	}
	if res.OK {
		return env.Data, nil
	}
	// A refused call: its code and message, each problem it lists
	// (where, message, kind) and its remedy.
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", env.Code, env.Error)
	for _, p := range env.Meta.Details.Problems {
		where := p.Field
		if p.Node != "" {
			where = p.Node + "." + p.Field
		}
		fmt.Fprintf(&b, "\n  - %s: %s [%s]", where, p.Message, p.Kind)
	}
	if env.Remedy != nil && env.Remedy.FixAction != "" {
		fmt.Fprintf(&b, "\n  remedy: %s", env.Remedy.FixAction)
	}
	return workflowStep{}, errors.New(b.String())
}

// readProject reads a project directory as a workflow submission: its
// dag.json and config.json, its *.step.yaml files as step_types, and every
// other file as files, keyed by its path inside the workspace root (the
// paths its config names). It stops when ctx ends (Ctrl-C on a large tree).
func readProject(ctx context.Context, dir, workspaceRoot string) (map[string]any, error) {
	prefix := ""
	if absDir, err := filepath.Abs(dir); err == nil {
		if absRoot, err := filepath.Abs(workspaceRoot); err == nil {
			if rel, err := filepath.Rel(absRoot, absDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				prefix = filepath.ToSlash(rel)
			}
		}
	}
	// Read through the workspace file system the server uses: regular
	// files only, each within the workspace's read cap.
	root, err := workspace.New(dir)
	if err != nil {
		return nil, fmt.Errorf("--input: %w", err)
	}
	defer root.Close()
	project := root.FS()
	content := map[string]any{}
	files := map[string]string{}
	var stepTypes []string
	err = fs.WalkDir(project, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := fs.ReadFile(project, p)
		if err != nil {
			return err
		}
		switch base := path.Base(p); {
		case (base == "dag.json" || base == "config.json") && (path.Dir(p) == "." || path.Dir(p) == "pipeline_config"):
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			content[strings.TrimSuffix(base, ".json")] = doc
		case strings.HasSuffix(base, ".step.yaml"):
			stepTypes = append(stepTypes, string(data))
		default:
			files[path.Join(prefix, p)] = string(data)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--input: %w", err)
	}
	if len(files) > 0 {
		content["files"] = files
	}
	if len(stepTypes) > 0 {
		content["step_types"] = stepTypes
	}
	return content, nil
}
