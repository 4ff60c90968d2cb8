package scaffold

import (
	"fmt"
	"strings"
)

// readme renders the project README: the action-item ledger. Remaining
// work is a numbered Markdown checklist in the order it should be done;
// what the scaffold already did is a checked list. g names the tools.
func readme(r *Result, modelSteps []string, g Guide) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s\n\n", r.Project)
	w("A %s pipeline project scaffolded by cursus `%s` (pipeline class `%s`).\n\n", r.Framework, g.Scaffold, r.PipelineClass)
	w("Layout: `pipeline_config/dag.json` (the DAG), `pipeline_config/config.json` (the config template), `scripts/` (one script per step type).\n\n")

	var items []string
	if len(r.DAGNodes) == 0 {
		items = append(items, fmt.Sprintf("**Author the DAG** in `pipeline_config/dag.json` (`%s` / `%s` suggest one; check it with `%s`), then re-run `%s` with `overwrite: true` and the DAG to get scripts and a config template.",
			g.RecommendDAG, g.LoadDAG, g.CheckDAG, g.Scaffold))
	} else {
		items = append(items, fmt.Sprintf("**Review the DAG** in `pipeline_config/dag.json` (%d nodes) and check it with `%s`.", len(r.DAGNodes), g.CheckDAG))
	}
	if r.ConfigTemplate != "" {
		fill := "every `null` value"
		if len(r.ToFill) > 0 && len(r.ToFill) <= 12 {
			fill = "`" + strings.Join(r.ToFill, "`, `") + "`"
		}
		items = append(items, fmt.Sprintf("**Fill the config template** `pipeline_config/config.json`: %s (`%s` and `%s` explain each field; `%s` checks values).",
			fill, g.ExplainConfig, g.ConfigConstraints, g.CheckConfig))
	}
	if len(r.Scripts) > 0 {
		var files []string
		for _, s := range r.Scripts {
			files = append(files, "`"+strings.TrimPrefix(s.File, r.TargetPath+"/")+"`")
		}
		items = append(items, "**Implement the step scripts** (each is a stub that already satisfies its contract; replace the TODO in `main()`): "+strings.Join(files, ", ")+".")
		items = append(items, fmt.Sprintf("**Re-check each edited script** with `%s` / `%s` (script ↔ contract ↔ config).", g.CheckScript, g.Alignment))
		run := "`" + g.RunScripts + "`"
		if r.ConfigTemplate != "" {
			run = fmt.Sprintf("`%s {\"dag_file\": %q, \"config_path\": %q, \"sample_inputs\": {\"<node>\": {\"<input>\": \"<file in the workspace>\"}}}`",
				g.RunScripts, r.DAGFile, r.ConfigTemplate)
		}
		items = append(items, "**Run the scripts locally** on a small sample, every node in DAG order, with "+run+" (needs the operator to allow script execution).")
	}
	if len(modelSteps) > 0 {
		items = append(items, "**Provide the inference handler** (`inference.py`) packaged with the model for: "+strings.Join(modelSteps, ", ")+".")
	}
	items = append(items, fmt.Sprintf("**Validate the pipeline**: `%s` then `%s` with `pipeline_config/dag.json` and `pipeline_config/config.json`.", g.ValidatePipeline, g.PreviewPipeline))
	items = append(items, fmt.Sprintf("**Compile** with `%s` (add `upsert` to deploy when the operator enables it).", g.Compile))

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
			state = "does NOT pass alignment yet (see " + g.Scaffold + "'s report)"
		}
		w("- [x] `%s` stub for %s (%s); %s\n", strings.TrimPrefix(s.File, r.TargetPath+"/"), s.StepType, strings.Join(s.Nodes, ", "), state)
	}
	for _, n := range r.Notes {
		w("\nNote: %s\n", n)
	}
	return b.String()
}
