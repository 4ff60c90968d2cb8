package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cursus-dev/cursus/engine/localrun"
	"github.com/cursus-dev/cursus/registry"
)

// sampleFiles is a repeatable --sample FILE flag.
type sampleFiles []string

func (s *sampleFiles) String() string     { return strings.Join(*s, ",") }
func (s *sampleFiles) Set(v string) error { *s = append(*s, v); return nil }

// cmdRunPipeline runs a pipeline locally through validate.run_pipeline,
// in-process: from a DAG and config (compiled first) or from a compiled
// definition and its manifest. It prints the report and exits 1 when a
// step did not succeed.
func cmdRunPipeline(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) (int, error) {
	var dagFile, configFile, defFile, manifestFile, format string
	var samples sampleFiles
	var maxTrials int
	cfg, fs, err := parseCommand("run-pipeline", args, false, stderr, env, func(fs *flag.FlagSet) {
		fs.StringVar(&dagFile, "dag-file", "", "the DAG JSON file (compiled with --config before the run)")
		fs.StringVar(&configFile, "config-file", "", "the pipeline config.json (Cursus layout); --config is the server configuration")
		fs.StringVar(&defFile, "definition", "", "a compiled definition: its JSON, or compile.with_report's output (then its manifest comes with it)")
		fs.StringVar(&manifestFile, "manifest", "", "the definition's manifest JSON (local source → S3 URI)")
		fs.Var(&samples, "sample", "a sample data file placed under the pipeline's S3 inputs (repeatable; default: the built-in tabular data, none with workspace.run_pipeline_s3)")
		fs.IntVar(&maxTrials, "max-trials", 0, "training jobs per tuning step (default 2)")
		fs.StringVar(&format, "format", "text", "text or json")
	})
	if err != nil {
		return 0, err
	}
	if fs.NArg() > 0 || (format != "text" && format != "json") {
		return 0, fmt.Errorf("%w: run-pipeline takes only flags (--format text|json)", errUsage)
	}
	call := map[string]any{}
	switch {
	case defFile != "" && (dagFile != "" || configFile != ""):
		return 0, fmt.Errorf("%w: run-pipeline takes --dag-file and --config-file, or --definition (and --manifest), not both", errUsage)
	case defFile != "":
		doc, err := readJSONFile(defFile)
		if err != nil {
			return 0, err
		}
		// compile.with_report's envelope or its data carry both.
		if data, ok := doc["data"].(map[string]any); ok {
			doc = data
		}
		if def, ok := doc["definition"].(map[string]any); ok {
			call["definition"], call["manifest"] = def, doc["manifest"]
		} else {
			call["definition"] = doc
		}
		if manifestFile != "" {
			m, err := readJSONFile(manifestFile)
			if err != nil {
				return 0, err
			}
			call["manifest"] = m
		}
	case dagFile != "" && configFile != "":
		for key, file := range map[string]string{"dag": dagFile, "config": configFile} {
			doc, err := readJSONFile(file)
			if err != nil {
				return 0, err
			}
			call[key] = doc
		}
	default:
		return 0, fmt.Errorf("%w: run-pipeline needs --dag-file and --config-file, or --definition (and --manifest)", errUsage)
	}
	if len(samples) > 0 {
		sd := map[string]any{}
		for _, f := range samples {
			b, err := os.ReadFile(f)
			if err != nil {
				return 0, err
			}
			sd[filepath.Base(f)] = string(b)
		}
		call["sample_data"] = sd
	}
	if maxTrials > 0 {
		call["max_trials"] = maxTrials
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return 0, err
	}
	ctx = registry.WithCaller(ctx, registry.Caller{Transport: "cli"})
	ctx = registry.WithProgress(ctx, func(done, total float64, message string) {
		fmt.Fprintf(stderr, "progress: %.0f/%.0f %s\n", done, total, message)
	})
	res := a.registry.Call(ctx, "validate.run_pipeline", call)
	var env2 struct {
		Data    *localrun.Report `json:"data"`
		Error   string           `json:"error"`
		Code    string           `json:"code"`
		Remedy  *registry.Remedy `json:"remedy"`
		Details struct {
			Report *localrun.Report `json:"report"`
		} `json:"details"`
	}
	raw := res.Encode()
	if err := json.Unmarshal(raw, &env2); err != nil {
		return 1, err
	}
	if format == "json" {
		var v any
		_ = json.Unmarshal(raw, &v)
		return exitOf(res.OK && env2.Data != nil && env2.Data.OK), writeIndented(stdout, v)
	}
	if !res.OK {
		fmt.Fprintf(stdout, "%s: %s\n", env2.Code, env2.Error)
		if env2.Remedy != nil && env2.Remedy.FixAction != "" {
			fmt.Fprintf(stdout, "fix: %s\n", env2.Remedy.FixAction)
		}
		return 1, nil
	}
	printReport(stdout, env2.Data)
	return exitOf(env2.Data.OK), nil
}

func exitOf(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

func readJSONFile(name string) (map[string]any, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return doc, nil
}

// printReport writes a report as a table of steps and the first failure.
func printReport(w io.Writer, rep *localrun.Report) {
	for _, s := range rep.Steps {
		line := fmt.Sprintf("%-20s %-40s %-14s %6.1fs", s.Status, s.Name, s.Type, s.DurationSeconds)
		if s.Missing != "" {
			line += " needs " + s.Missing
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		for _, o := range s.Objects {
			fmt.Fprintf(w, "    %s (%d bytes)\n", o.URI, o.Bytes)
		}
	}
	if f := rep.FirstFailure; f != nil {
		fmt.Fprintf(w, "\nfirst failure: step %s", f.Step)
		if f.Field != "" {
			fmt.Fprintf(w, ", %s", f.Field)
		}
		fmt.Fprintf(w, "\n  %s\nfix: %s\n", f.Reason, f.Remedy)
		for _, s := range rep.Steps {
			if s.Name == f.Step && s.LogTail != "" {
				fmt.Fprintf(w, "log tail:\n%s\n", s.LogTail)
			}
		}
	}
	verdict := "ok: every step succeeded"
	if !rep.OK {
		verdict = "not ok"
	}
	fmt.Fprintf(w, "\n%s (%.1fs, scripts %.1fs)\n", verdict, rep.DurationSeconds, rep.ScriptSeconds)
}
