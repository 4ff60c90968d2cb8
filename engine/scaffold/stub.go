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
// No lock is needed, across goroutines or processes. On a file system
// without RENAME_EXCHANGE (NFS) the swap is two renames, and a kill
// between them leaves the project missing with the old one under a
// .cursus-tmp-old- name beside it: still never a mix.
package scaffold

import (
	_ "embed"
	"strconv"
	"strings"
	"text/template"

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

// stubTemplate renders ScriptStub; py quotes a Go string as a Python
// string literal (ASCII only, so the file's encoding never matters).
var stubTemplate = template.Must(template.New("stub.py").Funcs(template.FuncMap{"py": strconv.QuoteToASCII}).Parse(stubText))

// stubPort is a contract input or output as the stub template reads it.
type stubPort struct {
	Name, Path string
	Required   bool
}

// stubVar is an optional environment variable and its default.
type stubVar struct{ Name, Value string }

// stubData is what the stub template renders.
type stubData struct {
	StepType    string
	Description string // the contract's, with """ made ''' so it stays inside the docstring
	Inputs      []stubPort
	Outputs     []stubPort
	Required    []string
	Optional    []stubVar
	Flags       []jobFlag
	Guide       Guide // the tool names the docstring gives
}

// ScriptStub renders a Python script for iface that satisfies its
// contract: main(input_paths, output_paths, environ_vars, job_args) reads
// every declared input and environment variable, writes a manifest into
// every declared output, and the __main__ block parses every declared
// job-argument flag. The logic itself is left to the author (TODO). Its
// docstring names g's Scaffold and RunScripts tools.
func ScriptStub(iface *steps.Interface, g Guide) string {
	c := iface.Contract
	d := stubData{StepType: iface.StepType, Description: strings.ReplaceAll(c.Description, `"""`, `'''`),
		Required: c.EnvVars.Required, Flags: jobFlags(iface), Guide: g}
	for _, name := range c.Inputs.Keys() {
		p, _ := c.Inputs.Get(name)
		d.Inputs = append(d.Inputs, stubPort{Name: name, Path: p.Path, Required: p.IsRequired()})
	}
	for _, name := range c.Outputs.Keys() {
		p, _ := c.Outputs.Get(name)
		d.Outputs = append(d.Outputs, stubPort{Name: name, Path: p.Path})
	}
	for _, k := range c.EnvVars.Optional.Keys() {
		v, _ := c.EnvVars.Optional.Get(k)
		d.Optional = append(d.Optional, stubVar{Name: k, Value: v})
	}
	var b strings.Builder
	if err := stubTemplate.Execute(&b, d); err != nil {
		panic("scaffold: the stub template does not render: " + err.Error()) // a bug in stub.py.tmpl, which its golden test catches
	}
	return b.String()
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
