package validate

import "github.com/cursus-dev/cursus/engine/finding"

// What the checks are, in words, for tools that explain them.
var (
	// LevelMeanings says what each finding level means.
	LevelMeanings = map[finding.Level]string{
		finding.Critical: "the step cannot work (no main(), syntax error)",
		finding.Error:    "a mismatch that breaks the step at build or run time",
		finding.Warning:  "likely a mistake; does not fail the check",
		finding.Info:     "for the record",
	}
	// CategoryMeanings says what each category compares.
	CategoryMeanings = map[string]string{
		CatScriptContract: "script ↔ contract: static analysis of the Python script (no interpreter needed)",
		CatConfigContract: "config ↔ contract: env vars sourced from config fields, entry point defaults",
		CatSpecDependency: "spec ↔ catalog: each dependency scored against every other step's outputs",
		CatBuilderConfig:  "builder ↔ registry/config: handler binding, compute and config fields the builder reads",
	}
	// ScriptRuleLevels gives the level of each script ↔ contract rule.
	ScriptRuleLevels = map[string]string{
		"script_syntax_error": "critical", "script_unreadable": "critical", "missing_main_function": "critical", "invalid_main_signature": "error",
		"undeclared_input_path": "error", "undeclared_output_path": "error", "unwritten_output_path": "error",
		"unread_required_env_var": "error", "unparsed_declared_arg": "error (warning when flags are computed)",
		"undeclared_env_var": "warning", "undeclared_job_arg": "warning", "unread_input_path": "warning (info when optional)",
		"undeclared_container_path": "warning", "reverse_arg_check_skipped_non_processing": "info", "sagemaker_runtime_env_var": "info",
	}
)

// DependencyThresholds are the scores the dependency check compares with.
func DependencyThresholds() map[string]float64 {
	return map[string]float64{"pass": scorePass, "resolution": scoreResolution, "warning": scoreWarn}
}
