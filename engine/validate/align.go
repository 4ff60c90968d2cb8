package validate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// Level is a finding's severity. Critical and error fail a check.
type Level string

// Finding levels, most severe first.
const (
	Critical Level = "critical"
	Error    Level = "error"
	Warning  Level = "warning"
	Info     Level = "info"
)

// Categories: which pair of artefacts a finding compares.
const (
	CatScriptContract = "script_contract" // script ↔ contract
	CatSpecDependency = "spec_dependency" // spec ↔ other steps' specs
	CatConfigContract = "config_contract" // config ↔ contract / compute
	CatBuilderConfig  = "builder_config"  // builder routing ↔ registry / config
)

// Finding is one alignment result. Location is "file:line" for a script
// finding and a dotted key path ("contract.outputs.model_output") for the
// others.
type Finding struct {
	Level    Level  `json:"level"`
	Rule     string `json:"rule"`
	Category string `json:"category"`
	Location string `json:"location"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
}

// Blocking reports whether the finding fails the check.
func (f Finding) Blocking() bool { return f.Level == Critical || f.Level == Error }

func levelRank(l Level) int {
	switch l {
	case Critical:
		return 0
	case Error:
		return 1
	case Warning:
		return 2
	}
	return 3
}

// SortFindings orders findings most severe first, then by category,
// location and rule, so reports are stable.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(a, b int) bool {
		x, y := fs[a], fs[b]
		if levelRank(x.Level) != levelRank(y.Level) {
			return levelRank(x.Level) < levelRank(y.Level)
		}
		if x.Category != y.Category {
			return x.Category < y.Category
		}
		if x.Location != y.Location {
			return x.Location < y.Location
		}
		return x.Rule < y.Rule
	})
}

// Ruleset says which checks apply to a SageMaker step type
// (engine-aux-spec §8).
type Ruleset struct {
	Name       string   `json:"name"`
	Categories []string `json:"categories"`
	// Excluded step types are not validated at all (Base, Utility).
	Excluded bool   `json:"excluded"`
	Reason   string `json:"reason,omitempty"`
}

// RulesetFor returns the ruleset of a SageMaker step type. The reference
// has no ruleset for Tuning and RedshiftDataLoading and reports "No
// validation ruleset found"; a Tuning job runs a training script, so it
// gets the script-based checks here, and RedshiftDataLoading is treated
// like the other contract-based (no script) kinds.
func RulesetFor(smType string) Ruleset {
	all := []string{CatScriptContract, CatConfigContract, CatSpecDependency, CatBuilderConfig}
	noScript := []string{CatConfigContract, CatSpecDependency, CatBuilderConfig}
	switch smType {
	case steps.SMProcessing, steps.SMTraining, steps.SMTuning:
		return Ruleset{Name: "script_based", Categories: all}
	case steps.SMCradleDataLoading, steps.SMMimsModelRegistrationProcessing, steps.SMRedshiftDataLoading:
		return Ruleset{Name: "contract_based", Categories: noScript, Reason: "no script"}
	case steps.SMCreateModel, steps.SMTransform, steps.SMRegisterModel:
		return Ruleset{Name: "non_script", Categories: noScript}
	case steps.SMLambda:
		return Ruleset{Name: "config_only", Categories: []string{CatConfigContract, CatBuilderConfig}}
	case steps.SMBase, steps.SMUtility:
		return Ruleset{Name: "excluded", Excluded: true, Reason: smType + " steps are abstract and never built"}
	}
	return Ruleset{Name: "unknown", Categories: noScript, Reason: "unknown SageMaker step type " + smType}
}

// sdkDelegated is the registry.requires value of steps whose script lives
// in an external SDK; they have no script to check.
const sdkDelegated = "secure_ai_sandbox_workflow_python_sdk"

// CheckScriptSource analyses src and compares it with the contract. A
// source that cannot be tokenized is one critical script_syntax_error
// finding at the failing line. The error is ctx's, when it ends first.
func CheckScriptSource(ctx context.Context, iface *steps.Interface, file string, src []byte) ([]Finding, *ScriptAnalysis, error) {
	a, err := AnalyzeScript(ctx, file, src)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, ctxErr
	}
	if err != nil {
		var se *ScriptAnalysisError
		if errors.As(err, &se) {
			return []Finding{{Level: Critical, Rule: "script_syntax_error", Category: CatScriptContract,
				Location: fmt.Sprintf("%s:%d", file, se.Line), Message: se.Message,
				Fix: "fix the syntax error; `python3 -m py_compile " + file + "` shows the same line"}}, nil, nil
		}
		return []Finding{{Level: Critical, Rule: "script_unreadable", Category: CatScriptContract, Location: file,
			Message: err.Error(), Fix: "make the script readable UTF-8 Python source"}}, nil, nil
	}
	return CheckScript(iface, a), a, nil
}

// CheckScript compares a script analysis with the step contract:
// forward checks (what the script reads must be declared) and reverse
// checks (what the contract declares must be used).
func CheckScript(iface *steps.Interface, a *ScriptAnalysis) []Finding {
	var out []Finding
	c := iface.Contract
	loc := func(line int) string {
		if line <= 0 {
			return a.File
		}
		return fmt.Sprintf("%s:%d", a.File, line)
	}
	add := func(level Level, rule string, line int, fix, format string, args ...any) {
		out = append(out, Finding{Level: level, Rule: rule, Category: CatScriptContract, Location: loc(line),
			Message: fmt.Sprintf(format, args...), Fix: fix})
	}
	entry := "def main(input_paths, output_paths, environ_vars, job_args)"
	switch {
	case a.Main == nil:
		add(Critical, "missing_main_function", 0, "add a module-level `"+entry+":` and call it from the `if __name__ == \"__main__\":` block",
			"the script has no module-level main() function")
	case !a.Main.HasExpectedSignature():
		add(Error, "invalid_main_signature", a.Main.Line, "declare it as `"+entry+"`",
			"main(%s) must take exactly (input_paths, output_paths, environ_vars, job_args)", strings.Join(a.Main.Params, ", "))
	}

	// Forward: logical names read must be declared.
	for _, u := range a.InputNames {
		if _, ok := c.Inputs.Get(u.Name); !ok {
			add(Error, "undeclared_input_path", u.Line, fmt.Sprintf("declare contract.inputs.%s (and spec.dependencies.%s), or read one of: %s", u.Name, u.Name, keyList(c.Inputs.Keys())),
				"the script reads input %q, which the contract does not declare", u.Name)
		}
	}
	for _, u := range a.OutputNames {
		if _, ok := c.Outputs.Get(u.Name); !ok {
			add(Error, "undeclared_output_path", u.Line, fmt.Sprintf("declare contract.outputs.%s (and spec.outputs.%s), or write one of: %s", u.Name, u.Name, keyList(c.Outputs.Keys())),
				"the script writes output %q, which the contract does not declare", u.Name)
		}
	}
	declaredEnv := map[string]bool{}
	for _, n := range c.EnvVars.Required {
		declaredEnv[n] = true
	}
	for _, n := range c.EnvVars.Optional.Keys() {
		declaredEnv[n] = true
	}
	seenEnv := map[string]bool{}
	reportEnv := func(name string, line int) {
		if declaredEnv[name] || seenEnv[name] {
			return
		}
		seenEnv[name] = true
		if strings.HasPrefix(name, "SM_") {
			add(Info, "sagemaker_runtime_env_var", line, "nothing to do if the step runs under the SageMaker training toolkit",
				"the script reads %s, which SageMaker sets at run time", name)
			return
		}
		add(Warning, "undeclared_env_var", line, fmt.Sprintf("add %s to contract.env_vars.optional (with a default) or contract.env_vars.required", name),
			"the script reads environment variable %s, which the contract does not declare", name)
	}
	for _, r := range a.EnvReads {
		reportEnv(r.Name, r.Line)
	}
	for _, r := range a.EnvironNames {
		reportEnv(r.Name, r.Line)
	}
	declaredArgs := map[string]bool{}
	for _, ja := range c.JobArguments {
		declaredArgs[steps.NormalizeFlag(ja.Flag)] = true
	}
	seenArg := map[string]bool{}
	for _, u := range a.JobArgReads {
		n := steps.NormalizeFlag(u.Name)
		if declaredArgs[n] || seenArg[n] {
			continue
		}
		seenArg[n] = true
		add(Warning, "undeclared_job_arg", u.Line, fmt.Sprintf("add {flag: --%s, source: <config field>} to contract.job_arguments", u.Name),
			"the script reads job_args.%s, which contract.job_arguments does not declare", u.Name)
	}

	// Reverse: what the contract declares must be used.
	useMainNames := a.Main != nil && a.Main.HasExpectedSignature()
	readsPath := func(path string) bool {
		for _, p := range a.ContainerPaths {
			if p.Path == path || strings.HasPrefix(p.Path, strings.TrimSuffix(path, "/")+"/") {
				return true
			}
		}
		return false
	}
	for _, name := range c.Outputs.Keys() {
		port, _ := c.Outputs.Get(name)
		if containsName(a.OutputNames, name) || (!useMainNames && port.Path != "" && readsPath(port.Path)) {
			continue
		}
		out = append(out, Finding{Level: Error, Rule: "unwritten_output_path", Category: CatScriptContract,
			Location: "contract.outputs." + name,
			Message:  fmt.Sprintf("the contract declares output %q (%s) but the script never writes it (no output_paths[%q])", name, port.Path, name),
			Fix:      fmt.Sprintf("write the output under output_paths[%q] in main(), or remove it from contract.outputs and spec.outputs", name)})
	}
	for _, name := range c.Inputs.Keys() {
		port, _ := c.Inputs.Get(name)
		if containsName(a.InputNames, name) || (!useMainNames && port.Path != "" && readsPath(port.Path)) {
			continue
		}
		level := Warning
		if !port.IsRequired() {
			level = Info
		}
		out = append(out, Finding{Level: level, Rule: "unread_input_path", Category: CatScriptContract,
			Location: "contract.inputs." + name,
			Message:  fmt.Sprintf("the contract declares input %q (%s) but the script never reads it (no input_paths[%q])", name, port.Path, name),
			Fix:      fmt.Sprintf("read input_paths[%q] in main() (use .get for an optional input), or drop the input", name)})
	}
	consumed := map[string]bool{}
	for _, r := range a.EnvReads {
		if !r.Harvested {
			consumed[r.Name] = true
		}
	}
	for _, r := range a.EnvironNames {
		consumed[r.Name] = true
	}
	for _, n := range c.EnvVars.Required {
		if !consumed[n] {
			out = append(out, Finding{Level: Error, Rule: "unread_required_env_var", Category: CatScriptContract,
				Location: "contract.env_vars.required",
				Message:  fmt.Sprintf("required environment variable %s is never read by the script", n),
				Fix:      fmt.Sprintf("read environ_vars[%q] in main(), or move %s to contract.env_vars.optional", n, n)})
		}
	}
	if len(c.JobArguments) > 0 {
		if iface.Registry.SageMakerStepType != steps.SMProcessing {
			out = append(out, Finding{Level: Info, Rule: "reverse_arg_check_skipped_non_processing", Category: CatScriptContract,
				Location: "contract.job_arguments",
				Message:  "job arguments are only passed on the command line to Processing jobs; the argparse check is skipped",
				Fix:      "none needed"})
		} else {
			for i, ja := range c.JobArguments {
				if a.HasFlag(ja.Flag) {
					continue
				}
				level := Error
				msg := fmt.Sprintf("contract flag %s is never declared with parser.add_argument", ja.Flag)
				if a.DynamicArguments {
					level = Warning
					msg += " (some add_argument calls use computed flags, so this may be a false alarm)"
				}
				out = append(out, Finding{Level: level, Rule: "unparsed_declared_arg", Category: CatScriptContract,
					Location: fmt.Sprintf("contract.job_arguments[%d]", i), Message: msg,
					Fix: fmt.Sprintf("add parser.add_argument(%q, ...) in the __main__ block", ja.Flag)})
			}
		}
	}

	// Container path literals must be ones the contract declares (or
	// parents/children of them); anything else is a path the step will not
	// have at run time.
	declared := []string{}
	for _, k := range c.Inputs.Keys() {
		p, _ := c.Inputs.Get(k)
		declared = append(declared, p.Path)
	}
	for _, k := range c.Outputs.Keys() {
		p, _ := c.Outputs.Get(k)
		declared = append(declared, p.Path)
	}
	seenPath := map[string]bool{}
	for _, p := range a.ContainerPaths {
		if seenPath[p.Path] || pathRelated(p.Path, declared) || sagemakerManagedPath(p.Path) {
			continue
		}
		seenPath[p.Path] = true
		add(Warning, "undeclared_container_path", p.Line, "declare the path in contract.inputs or contract.outputs, or read it from input_paths/output_paths",
			"the script uses container path %s, which is not under any path the contract declares", p.Path)
	}
	SortFindings(out)
	return out
}

func pathRelated(p string, declared []string) bool {
	p = strings.TrimSuffix(p, "/")
	for _, d := range declared {
		d = strings.TrimSuffix(d, "/")
		if d == "" {
			continue
		}
		if p == d || strings.HasPrefix(p, d+"/") || strings.HasPrefix(d, p+"/") {
			return true
		}
	}
	return false
}

// sagemakerManagedPath is a path the platform provides to every job.
func sagemakerManagedPath(p string) bool {
	for _, m := range []string{"/opt/ml/input/config", "/opt/ml/output/failure", "/opt/ml/code"} {
		if p == m || strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}

func containsName(uses []NameUse, name string) bool {
	for _, u := range uses {
		if u.Name == name {
			return true
		}
	}
	return false
}

func keyList(keys []string) string {
	if len(keys) == 0 {
		return "(none declared)"
	}
	return strings.Join(keys, ", ")
}
