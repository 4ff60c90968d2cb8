package validate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
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
// others. It shares finding.Level but is not a finding.Finding: the tools
// emit it as it is, with a category, one location and a fix.
type Finding struct {
	Level    finding.Level `json:"level"`
	Rule     string        `json:"rule"`
	Category string        `json:"category"`
	Location string        `json:"location"`
	Message  string        `json:"message"`
	Fix      string        `json:"fix"`
}

// Blocking reports whether the finding fails the check.
func (f Finding) Blocking() bool { return f.Level.Blocking() }

// SortFindings orders findings most severe first, then by category,
// location and rule, so reports are stable.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(a, b int) bool {
		x, y := fs[a], fs[b]
		if c := finding.CompareLevels(x.Level, y.Level); c != 0 {
			return c < 0
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

// Ruleset says which categories of check apply to a SageMaker step type
// (RulesetFor): a step that runs a script gets all four, a step without
// one all but script ↔ contract, Lambda only config and builder, and the
// abstract Base and Utility none.
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
			return []Finding{{Level: finding.Critical, Rule: "script_syntax_error", Category: CatScriptContract,
				Location: fmt.Sprintf("%s:%d", file, se.Line), Message: se.Message,
				Fix: "fix the syntax error; `python3 -m py_compile " + file + "` shows the same line"}}, nil, nil
		}
		return []Finding{{Level: finding.Critical, Rule: "script_unreadable", Category: CatScriptContract, Location: file,
			Message: err.Error(), Fix: "make the script readable UTF-8 Python source"}}, nil, nil
	}
	return CheckScript(iface, a), a, nil
}

// CheckScript compares a script analysis with the step contract:
// forward checks (what the script reads must be declared) and reverse
// checks (what the contract declares must be used), one rule of
// scriptRules each.
func CheckScript(iface *steps.Interface, a *ScriptAnalysis) []Finding {
	sc := &scriptCheck{iface: iface, c: &iface.Contract, a: a}
	for _, r := range scriptRules {
		r.check(sc)
	}
	SortFindings(sc.out)
	return sc.out
}

// scriptRule is one check of a script against its contract and the rules
// its findings carry.
type scriptRule struct {
	rules []string
	check func(*scriptCheck)
}

// scriptRules are the script ↔ contract checks, in the order they report.
var scriptRules = []scriptRule{
	{[]string{"missing_main_function", "invalid_main_signature"}, (*scriptCheck).mainFunction},
	// Forward: what the script reads must be declared.
	{[]string{"undeclared_input_path"}, (*scriptCheck).undeclaredInputs},
	{[]string{"undeclared_output_path"}, (*scriptCheck).undeclaredOutputs},
	{[]string{"undeclared_env_var", "sagemaker_runtime_env_var"}, (*scriptCheck).undeclaredEnvVars},
	{[]string{"undeclared_job_arg"}, (*scriptCheck).undeclaredJobArgs},
	// Reverse: what the contract declares must be used.
	{[]string{"unwritten_output_path"}, (*scriptCheck).unwrittenOutputs},
	{[]string{"unread_input_path"}, (*scriptCheck).unreadInputs},
	{[]string{"unread_required_env_var"}, (*scriptCheck).unreadRequiredEnvVars},
	{[]string{"unparsed_declared_arg", "reverse_arg_check_skipped_non_processing"}, (*scriptCheck).unparsedJobArgs},
	// Container paths must be ones the contract declares.
	{[]string{"undeclared_container_path"}, (*scriptCheck).undeclaredContainerPaths},
}

// scriptCheck is one script compared with one contract, and the findings
// so far.
type scriptCheck struct {
	iface *steps.Interface
	c     *steps.Contract
	a     *ScriptAnalysis
	out   []Finding
}

// add records a finding at a line of the script (the file when line is 0).
func (sc *scriptCheck) add(level finding.Level, rule string, line int, fix, format string, args ...any) {
	loc := sc.a.File
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", sc.a.File, line)
	}
	sc.addAt(level, rule, loc, fix, fmt.Sprintf(format, args...))
}

// addAt records a finding at a location in the contract.
func (sc *scriptCheck) addAt(level finding.Level, rule, location, fix, message string) {
	sc.out = append(sc.out, Finding{Level: level, Rule: rule, Category: CatScriptContract, Location: location, Message: message, Fix: fix})
}

func (sc *scriptCheck) mainFunction() {
	entry := "def main(input_paths, output_paths, environ_vars, job_args)"
	switch a := sc.a; {
	case a.Main == nil:
		sc.add(finding.Critical, "missing_main_function", 0, "add a module-level `"+entry+":` and call it from the `if __name__ == \"__main__\":` block",
			"the script has no module-level main() function")
	case !a.Main.HasExpectedSignature():
		sc.add(finding.Error, "invalid_main_signature", a.Main.Line, "declare it as `"+entry+"`",
			"main(%s) must take exactly (input_paths, output_paths, environ_vars, job_args)", strings.Join(a.Main.Params, ", "))
	}
}

func (sc *scriptCheck) undeclaredInputs() {
	for _, u := range sc.a.InputNames {
		if _, ok := sc.c.Inputs.Get(u.Name); !ok {
			sc.add(finding.Error, "undeclared_input_path", u.Line, fmt.Sprintf("declare contract.inputs.%s (and spec.dependencies.%s), or read one of: %s", u.Name, u.Name, keyList(sc.c.Inputs.Keys())),
				"the script reads input %q, which the contract does not declare", u.Name)
		}
	}
}

func (sc *scriptCheck) undeclaredOutputs() {
	for _, u := range sc.a.OutputNames {
		if _, ok := sc.c.Outputs.Get(u.Name); !ok {
			sc.add(finding.Error, "undeclared_output_path", u.Line, fmt.Sprintf("declare contract.outputs.%s (and spec.outputs.%s), or write one of: %s", u.Name, u.Name, keyList(sc.c.Outputs.Keys())),
				"the script writes output %q, which the contract does not declare", u.Name)
		}
	}
}

func (sc *scriptCheck) undeclaredEnvVars() {
	declared := map[string]bool{}
	for _, n := range sc.c.EnvVars.Required {
		declared[n] = true
	}
	for _, n := range sc.c.EnvVars.Optional.Keys() {
		declared[n] = true
	}
	seen := map[string]bool{}
	report := func(name string, line int) {
		if declared[name] || seen[name] {
			return
		}
		seen[name] = true
		if strings.HasPrefix(name, "SM_") {
			sc.add(finding.Info, "sagemaker_runtime_env_var", line, "nothing to do if the step runs under the SageMaker training toolkit",
				"the script reads %s, which SageMaker sets at run time", name)
			return
		}
		sc.add(finding.Warning, "undeclared_env_var", line, fmt.Sprintf("add %s to contract.env_vars.optional (with a default) or contract.env_vars.required", name),
			"the script reads environment variable %s, which the contract does not declare", name)
	}
	for _, r := range sc.a.EnvReads {
		report(r.Name, r.Line)
	}
	for _, r := range sc.a.EnvironNames {
		report(r.Name, r.Line)
	}
}

func (sc *scriptCheck) undeclaredJobArgs() {
	declared := map[string]bool{}
	for _, ja := range sc.c.JobArguments {
		declared[steps.NormalizeFlag(ja.Flag)] = true
	}
	seen := map[string]bool{}
	for _, u := range sc.a.JobArgReads {
		n := steps.NormalizeFlag(u.Name)
		if declared[n] || seen[n] {
			continue
		}
		seen[n] = true
		sc.add(finding.Warning, "undeclared_job_arg", u.Line, fmt.Sprintf("add {flag: --%s, source: <config field>} to contract.job_arguments", u.Name),
			"the script reads job_args.%s, which contract.job_arguments does not declare", u.Name)
	}
}

// uses reports whether the script uses a contract port: by its logical
// name through main's parameters, or, when main does not take them, by a
// container path literal at or under the port's path.
func (sc *scriptCheck) uses(names []NameUse, name, path string) bool {
	if containsName(names, name) {
		return true
	}
	if sc.a.Main != nil && sc.a.Main.HasExpectedSignature() || path == "" {
		return false
	}
	for _, p := range sc.a.ContainerPaths {
		if p.Path == path || strings.HasPrefix(p.Path, strings.TrimSuffix(path, "/")+"/") {
			return true
		}
	}
	return false
}

func (sc *scriptCheck) unwrittenOutputs() {
	for _, name := range sc.c.Outputs.Keys() {
		port, _ := sc.c.Outputs.Get(name)
		if sc.uses(sc.a.OutputNames, name, port.Path) {
			continue
		}
		sc.addAt(finding.Error, "unwritten_output_path", "contract.outputs."+name,
			fmt.Sprintf("write the output under output_paths[%q] in main(), or remove it from contract.outputs and spec.outputs", name),
			fmt.Sprintf("the contract declares output %q (%s) but the script never writes it (no output_paths[%q])", name, port.Path, name))
	}
}

func (sc *scriptCheck) unreadInputs() {
	for _, name := range sc.c.Inputs.Keys() {
		port, _ := sc.c.Inputs.Get(name)
		if sc.uses(sc.a.InputNames, name, port.Path) {
			continue
		}
		level := finding.Warning
		if !port.IsRequired() {
			level = finding.Info
		}
		sc.addAt(level, "unread_input_path", "contract.inputs."+name,
			fmt.Sprintf("read input_paths[%q] in main() (use .get for an optional input), or drop the input", name),
			fmt.Sprintf("the contract declares input %q (%s) but the script never reads it (no input_paths[%q])", name, port.Path, name))
	}
}

func (sc *scriptCheck) unreadRequiredEnvVars() {
	consumed := map[string]bool{}
	for _, r := range sc.a.EnvReads {
		if !r.Harvested {
			consumed[r.Name] = true
		}
	}
	for _, r := range sc.a.EnvironNames {
		consumed[r.Name] = true
	}
	for _, n := range sc.c.EnvVars.Required {
		if !consumed[n] {
			sc.addAt(finding.Error, "unread_required_env_var", "contract.env_vars.required",
				fmt.Sprintf("read environ_vars[%q] in main(), or move %s to contract.env_vars.optional", n, n),
				fmt.Sprintf("required environment variable %s is never read by the script", n))
		}
	}
}

func (sc *scriptCheck) unparsedJobArgs() {
	if len(sc.c.JobArguments) == 0 {
		return
	}
	if sc.iface.Registry.SageMakerStepType != steps.SMProcessing {
		sc.addAt(finding.Info, "reverse_arg_check_skipped_non_processing", "contract.job_arguments", "none needed",
			"job arguments are only passed on the command line to Processing jobs; the argparse check is skipped")
		return
	}
	for i, ja := range sc.c.JobArguments {
		if sc.a.HasFlag(ja.Flag) {
			continue
		}
		level := finding.Error
		msg := fmt.Sprintf("contract flag %s is never declared with parser.add_argument", ja.Flag)
		if sc.a.DynamicArguments {
			level = finding.Warning
			msg += " (some add_argument calls use computed flags, so this may be a false alarm)"
		}
		sc.addAt(level, "unparsed_declared_arg", fmt.Sprintf("contract.job_arguments[%d]", i),
			fmt.Sprintf("add parser.add_argument(%q, ...) in the __main__ block", ja.Flag), msg)
	}
}

// undeclaredContainerPaths: container path literals must be ones the
// contract declares (or parents/children of them); anything else is a
// path the step will not have at run time.
func (sc *scriptCheck) undeclaredContainerPaths() {
	declared := []string{}
	for _, k := range sc.c.Inputs.Keys() {
		p, _ := sc.c.Inputs.Get(k)
		declared = append(declared, p.Path)
	}
	for _, k := range sc.c.Outputs.Keys() {
		p, _ := sc.c.Outputs.Get(k)
		declared = append(declared, p.Path)
	}
	seen := map[string]bool{}
	for _, p := range sc.a.ContainerPaths {
		if seen[p.Path] || pathRelated(p.Path, declared) || sagemakerManagedPath(p.Path) {
			continue
		}
		seen[p.Path] = true
		sc.add(finding.Warning, "undeclared_container_path", p.Line, "declare the path in contract.inputs or contract.outputs, or read it from input_paths/output_paths",
			"the script uses container path %s, which is not under any path the contract declares", p.Path)
	}
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
