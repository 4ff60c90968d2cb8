package handlers

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// s3URIs lists the distinct s3:// URIs a definition names.
func s3URIs(t *testing.T, def any) []string {
	t.Helper()
	b, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	uris := regexp.MustCompile(`s3://[^"\\]+`).FindAllString(string(b), -1)
	slices.Sort(uris)
	return slices.Compact(uris)
}

// The same DAG, config and files compiled by compile.with_report and by
// the cursus-new-project workflow get one pipeline name, from the DAG's
// metadata.name, and the same S3 code paths.
func TestCompileToolAndWorkflowNameThePipelineAlike(t *testing.T) {
	reg, _ := newTestRegistry(t)
	c := projectContent(t)
	c["dag"].(map[string]any)["metadata"] = map[string]any{"name": "fraud-detector"}

	report := answer[compileReport](t, call(t, reg, "compile.with_report", jsonArgs(t, c)))

	r := startRun(t, reg, "cursus-new-project", map[string]string{"name": "fraud", "framework": "xgboost"})
	wantStatus(t, r.submit("Scaffold", pick(c, "dag", "files")), "passed")
	wantStatus(t, r.submit("GateDAG", pick(c, "dag")), "passed")
	green := r.submit("Configure", c)
	wantStatus(t, green, "green")
	outcome := outcomeOf[struct {
		PipelineName string `json:"pipeline_name"`
		Definition   any    `json:"definition"`
	}](t, green)

	name := report.PipelineName
	if !strings.Contains(name, "fraud-detector") {
		t.Fatalf("compile.with_report names the pipeline %q, not after the DAG's metadata.name", name)
	}
	if outcome.PipelineName != name {
		t.Fatalf("the workflow names the pipeline %q, compile.with_report %q", outcome.PipelineName, name)
	}
	tool, flow := s3URIs(t, report.Definition), s3URIs(t, outcome.Definition)
	var code []string
	for _, u := range tool {
		if strings.Contains(u, "/code/") {
			code = append(code, u)
		}
	}
	if len(code) == 0 {
		t.Fatalf("no code paths in the compiled definition: %v", tool)
	}
	if !slices.Equal(tool, flow) {
		t.Fatalf("S3 paths differ:\ncompile.with_report %v\nworkflow            %v", tool, flow)
	}
}
