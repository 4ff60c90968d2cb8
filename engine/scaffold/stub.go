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

func pyStr(s string) string { return strconv.QuoteToASCII(s) }

// ScriptStub renders a Python script for iface that satisfies its
// contract: main(input_paths, output_paths, environ_vars, job_args) reads
// every declared input and environment variable, writes a manifest into
// every declared output, and the __main__ block parses every declared
// job-argument flag. The logic itself is left to the author (TODO).
func ScriptStub(iface *steps.Interface) string {
	c := iface.Contract
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("%s\n", `"""`+iface.StepType+` step script, scaffolded by cursus project.init.`)
	w("\n")
	if c.Description != "" {
		w("Contract: %s\n\n", strings.ReplaceAll(c.Description, `"""`, `'''`))
	}
	w("TODO: replace the body of main() with the step's logic. Keep the signature\n")
	w("main(input_paths, output_paths, environ_vars, job_args): cursus validates it\n")
	w("against the step contract and validate.run_scripts calls it directly.\n")
	w("%s\n", `"""`)
	w("import argparse\nimport json\nimport os\nimport sys\n\n")

	w("# Container paths declared by the step contract.\n")
	w("CONTAINER_INPUTS = {\n")
	for _, name := range c.Inputs.Keys() {
		p, _ := c.Inputs.Get(name)
		if p.Path != "" {
			w("    %s: %s,\n", pyStr(name), pyStr(p.Path))
		}
	}
	w("}\nCONTAINER_OUTPUTS = {\n")
	for _, name := range c.Outputs.Keys() {
		p, _ := c.Outputs.Get(name)
		if p.Path != "" {
			w("    %s: %s,\n", pyStr(name), pyStr(p.Path))
		}
	}
	w("}\nREQUIRED_ENV = [")
	for i, n := range c.EnvVars.Required {
		if i > 0 {
			w(", ")
		}
		w("%s", pyStr(n))
	}
	w("]\nOPTIONAL_ENV = {\n")
	for _, k := range c.EnvVars.Optional.Keys() {
		v, _ := c.EnvVars.Optional.Get(k)
		w("    %s: %s,\n", pyStr(k), pyStr(v))
	}
	w("}\n\n\n")

	w(`def _list_files(path):
    """Relative paths of the files under path (empty when absent)."""
    if not path or not os.path.isdir(path):
        return []
    found = []
    for root, _dirs, files in os.walk(path):
        for name in files:
            found.append(os.path.relpath(os.path.join(root, name), path))
    return sorted(found)


def _write_manifest(path, manifest):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "_cursus_stub_manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)


`)
	w("def main(input_paths, output_paths, environ_vars, job_args):\n")
	w("    # TODO: implement %s.\n", iface.StepType)
	w("    inputs = {}\n")
	for _, name := range c.Inputs.Keys() {
		p, _ := c.Inputs.Get(name)
		if p.IsRequired() {
			w("    inputs[%s] = _list_files(input_paths[%s])\n", pyStr(name), pyStr(name))
		} else {
			w("    inputs[%s] = _list_files(input_paths.get(%s))\n", pyStr(name), pyStr(name))
		}
	}
	w("    settings = {}\n")
	for _, n := range c.EnvVars.Required {
		w("    settings[%s] = environ_vars[%s]\n", pyStr(n), pyStr(n))
	}
	for _, k := range c.EnvVars.Optional.Keys() {
		v, _ := c.EnvVars.Optional.Get(k)
		w("    settings[%s] = environ_vars.get(%s, %s)\n", pyStr(k), pyStr(k), pyStr(v))
	}
	w("    arguments = {}\n")
	flags := jobFlags(iface)
	for _, f := range flags {
		w("    arguments[%s] = getattr(job_args, %s, None)\n", pyStr(f.attr), pyStr(f.attr))
	}
	w("    manifest = {%s: %s, \"inputs\": inputs, \"settings\": settings, \"arguments\": arguments}\n", pyStr("step"), pyStr(iface.StepType))
	for _, name := range c.Outputs.Keys() {
		w("    _write_manifest(output_paths[%s], manifest)\n", pyStr(name))
	}
	w("    return manifest\n\n\n")

	w("if __name__ == \"__main__\":\n")
	w("    parser = argparse.ArgumentParser(description=%s)\n", pyStr(iface.StepType+" step"))
	for _, f := range flags {
		w("    parser.add_argument(%s, type=str, default=None)\n", pyStr(f.flag))
	}
	w("    args = parser.parse_args()\n")
	w("    environ_vars = {name: os.environ.get(name) for name in REQUIRED_ENV}\n")
	w("    environ_vars.update({name: os.environ.get(name, default) for name, default in OPTIONAL_ENV.items()})\n")
	w("    missing = [name for name in REQUIRED_ENV if not environ_vars.get(name)]\n")
	w("    if missing:\n")
	w("        sys.exit(\"missing required environment variables: \" + \", \".join(missing))\n")
	w("    main(dict(CONTAINER_INPUTS), dict(CONTAINER_OUTPUTS), environ_vars, args)\n")
	return b.String()
}

type jobFlag struct{ flag, attr string }

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
		out = append(out, jobFlag{flag: flag, attr: attr})
	}
	return out
}
