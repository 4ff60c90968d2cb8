package scaffold

import (
	"fmt"
	"strings"
)

// readme renders the project README: the action-item ledger. Remaining
// work is a numbered Markdown checklist in the order it should be done;
// what project.init already did is a checked list.
func readme(r *Result, modelSteps []string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s\n\n", r.Project)
	w("A %s pipeline project scaffolded by cursus `project.init` (pipeline class `%s`).\n\n", r.Framework, r.PipelineClass)
	w("Layout: `pipeline_config/dag.json` (the DAG), `pipeline_config/config.json` (the config template), `scripts/` (one script per step type).\n\n")

	var items []string
	if len(r.DAGNodes) == 0 {
		items = append(items, "**Author the DAG** in `pipeline_config/dag.json` (`pipeline_catalog.recommend` / `pipeline_catalog.load_dag` suggest one; check it with `dag.validate_integrity`), then re-run `project.init` with `overwrite: true` and the DAG to get scripts and a config template.")
	} else {
		items = append(items, fmt.Sprintf("**Review the DAG** in `pipeline_config/dag.json` (%d nodes) and check it with `dag.validate_integrity`.", len(r.DAGNodes)))
	}
	if r.ConfigTemplate != "" {
		fill := "every `null` value"
		if len(r.ToFill) > 0 && len(r.ToFill) <= 12 {
			fill = "`" + strings.Join(r.ToFill, "`, `") + "`"
		}
		items = append(items, fmt.Sprintf("**Fill the config template** `pipeline_config/config.json`: %s (`config.requirements` and `author.config_constraints` explain each field; `author.preflight_config` checks values).", fill))
	}
	if len(r.Scripts) > 0 {
		var files []string
		for _, s := range r.Scripts {
			files = append(files, "`"+strings.TrimPrefix(s.File, r.TargetPath+"/")+"`")
		}
		items = append(items, "**Implement the step scripts** (each is a stub that already satisfies its contract; replace the TODO in `main()`): "+strings.Join(files, ", ")+".")
		items = append(items, "**Re-check each edited script** with `author.check_script` / `validate.alignment` (script ↔ contract ↔ config).")
		run := "`validate.run_scripts`"
		if r.ConfigTemplate != "" {
			run = fmt.Sprintf("`validate.run_scripts {\"dag_file\": %q, \"config_path\": %q, \"sample_inputs\": {\"<node>\": {\"<input>\": \"<file in the workspace>\"}}}`",
				r.DAGFile, r.ConfigTemplate)
		}
		items = append(items, "**Run the scripts locally** on a small sample, every node in DAG order, with "+run+" (needs the operator to allow script execution).")
	}
	if len(modelSteps) > 0 {
		items = append(items, "**Provide the inference handler** (`inference.py`) packaged with the model for: "+strings.Join(modelSteps, ", ")+".")
	}
	items = append(items, "**Validate the pipeline**: `compile.validate` then `compile.preview` with `pipeline_config/dag.json` and `pipeline_config/config.json`.")
	items = append(items, "**Compile** with `compile.dag` (add `upsert` to deploy when the operator enables it).")

	w("## Action items (remaining)\n\n")
	for i, it := range items {
		w("- [ ] **%d. %s\n", i+1, strings.TrimPrefix(it, "**"))
	}
	w("\n## What is already done\n\n")
	w("- [x] Project directory `%s` created inside the workspace root\n", r.TargetPath)
	if len(r.DAGNodes) > 0 {
		w("- [x] DAG written: %s\n", strings.Join(r.DAGNodes, ", "))
	} else {
		w("- [x] Empty DAG written\n")
	}
	if r.ConfigTemplate != "" {
		w("- [x] Config template written (%d value(s) to fill; `source_dir` points at `scripts/`)\n", len(r.ToFill))
	}
	for _, s := range r.Scripts {
		state := "passes the script ↔ contract alignment check"
		if !s.Aligned {
			state = "does NOT pass alignment yet (see project.init's report)"
		}
		w("- [x] `%s` stub for %s (%s); %s\n", strings.TrimPrefix(s.File, r.TargetPath+"/"), s.StepType, strings.Join(s.Nodes, ", "), state)
	}
	for _, n := range r.Notes {
		w("\nNote: %s\n", n)
	}
	return b.String()
}
