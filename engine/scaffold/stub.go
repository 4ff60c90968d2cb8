// Package scaffold writes a new project inside the workspace root: the
// DAG, a config template, a script stub for every script step the DAG
// needs (each one already aligned with its contract) and a README that is
// the project's action-item ledger.
//
// A project's files are written as one set, so that no reader, concurrent
// call or kill -9 ever leaves dag.json from one call beside config.json
// from another. A new project is built in a temporary directory next to
// its target and renamed into place (workspace.Stage). With overwrite, the
// new version is built the same way, the existing project's other files
// (the user's own, and scripts of steps the new DAG no longer has) are
// hard-linked into it (workspace.Staged.Keep), and the two directories
// are swapped with one renameat2(RENAME_EXCHANGE) (workspace.StageReplace):
// until the swap the old project is whole, after it the new one is, and
// of concurrent overwrites the last swap wins whole. The replaced
// directory is then removed; a kill before that leaves it under a
// .cursus-tmp- name beside the project, which a later write sweeps away.
// Overwrites in one directory take turns (an flock on it, from staging to
// swap, which the kernel drops with a killed process): one that carried
// files over from a version another was removing would lose them. On a
// file system without RENAME_EXCHANGE (NFS) the swap is two renames, and
// a kill between them leaves the project missing with the old one under a
// .cursus-tmp-old- name beside it: still never a mix.
package scaffold

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// NeedsScript reports whether a step type runs a script the project must
// provide: Processing, Training and Tuning steps with an entry point whose
// code is not in an external SDK.
func NeedsScript(iface *steps.Interface) bool {
	switch iface.Registry.SageMakerStepType {
	case steps.SMProcessing, steps.SMTraining, steps.SMTuning:
	default:
		return false
	}
	return iface.Contract.EntryPoint != "" && iface.Registry.Requires != "secure_ai_sandbox_workflow_python_sdk"
}

//go:embed stub.py.tmpl
var stubText string

// ScriptStub renders a Python script for iface that satisfies its
// contract: main(input_paths, output_paths, environ_vars, job_args) reads
// every declared input and environment variable, writes a manifest into
// every declared output, and the __main__ block parses every declared
// job-argument flag. The logic itself is left to the author (TODO). Its
// docstring names g's Scaffold and RunScripts tools.
//
// The script is stub.py.tmpl with each <<name>> replaced; the repeated
// parts are built here line by line. It is not a text/template: executing
// one looks methods up by name through reflection, which makes the linker
// keep every exported method of every type in the binary (about 15 MB of
// the cursus binary's 43, and as much resident memory).
func ScriptStub(iface *steps.Interface, g Guide) string {
	c := iface.Contract
	py := strconv.QuoteToASCII
	var containerInputs, containerOutputs, readInputs, writeOutputs lines
	for _, name := range c.Inputs.Keys() {
		p, _ := c.Inputs.Get(name)
		if p.Path != "" {
			containerInputs.add("%s: %s,", py(name), py(p.Path))
		}
		if p.IsRequired() {
			readInputs.add("inputs[%s] = _list_files(input_paths[%s])", py(name), py(name))
		} else {
			readInputs.add("inputs[%s] = _list_files(input_paths.get(%s))", py(name), py(name))
		}
	}
	for _, name := range c.Outputs.Keys() {
		p, _ := c.Outputs.Get(name)
		if p.Path != "" {
			containerOutputs.add("%s: %s,", py(name), py(p.Path))
		}
		writeOutputs.add("_write_manifest(output_paths[%s], manifest)", py(name))
	}
	var required []string
	var optionalEnv, readSettings, readArguments, addArguments lines
	for _, name := range c.EnvVars.Required {
		required = append(required, py(name))
		readSettings.add("settings[%s] = environ_vars[%s]", py(name), py(name))
	}
	for _, name := range c.EnvVars.Optional.Keys() {
		v, _ := c.EnvVars.Optional.Get(name)
		optionalEnv.add("%s: %s,", py(name), py(v))
		readSettings.add("settings[%s] = environ_vars.get(%s, %s)", py(name), py(name), py(v))
	}
	for _, f := range jobFlags(iface) {
		readArguments.add("arguments[%s] = getattr(job_args, %s, None)", py(f.Attr), py(f.Attr))
		addArguments.add("parser.add_argument(%s, type=str, default=None)", py(f.Flag))
	}
	contract := ""
	if c.Description != "" {
		// """ inside the docstring would end it.
		contract = "Contract: " + strings.ReplaceAll(c.Description, `"""`, `'''`) + "\n\n"
	}
	return strings.NewReplacer(
		"<<step_type>>", iface.StepType,
		"<<step_type_py>>", py(iface.StepType),
		"<<description_py>>", py(iface.StepType+" step"),
		"<<scaffold_tool>>", g.Scaffold,
		"<<run_scripts_tool>>", g.RunScripts,
		"<<contract>>", contract,
		"<<container_inputs>>", containerInputs.String(),
		"<<container_outputs>>", containerOutputs.String(),
		"<<required_env>>", strings.Join(required, ", "),
		"<<optional_env>>", optionalEnv.String(),
		"<<read_inputs>>", readInputs.String(),
		"<<read_settings>>", readSettings.String(),
		"<<read_arguments>>", readArguments.String(),
		"<<write_outputs>>", writeOutputs.String(),
		"<<add_arguments>>", addArguments.String(),
	).Replace(stubText)
}

// lines are the lines of a repeated part of the stub, each indented by
// four spaces and led by a newline, as they follow the line they extend.
type lines struct{ strings.Builder }

func (l *lines) add(format string, args ...any) {
	l.WriteString("\n    ")
	fmt.Fprintf(&l.Builder, format, args...)
}

// jobFlag is a contract flag as the script parses it (Flag) and reads it
// from job_args (Attr).
type jobFlag struct{ Flag, Attr string }

func jobFlags(iface *steps.Interface) []jobFlag {
	seen := map[string]bool{}
	var out []jobFlag
	for _, ja := range iface.Contract.JobArguments {
		attr := steps.NormalizeFlag(ja.Flag)
		if attr == "" || seen[attr] {
			continue
		}
		seen[attr] = true
		flag := ja.Flag
		if !strings.HasPrefix(flag, "-") {
			flag = "--" + flag
		}
		out = append(out, jobFlag{Flag: flag, Attr: attr})
	}
	return out
}
