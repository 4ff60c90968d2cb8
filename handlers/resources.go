package handlers

import (
	"context"
	"fmt"

	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/internal/verbatim"
	"github.com/cursus-dev/cursus/registry"
)

// Resources are the read-only documents offered as MCP resources: the
// shared step types and DAGs, the formats' JSON Schemas and the workflow
// guides. Each serves what its tool returns (the same engine function),
// so a resource never says more than the tool would to the same caller.
// Step types a caller sends inline are per call and are not resources.
func Resources(d *Deps) []registry.Resource {
	stepNames := func(ctx context.Context) []string { return d.sourcedStepTypes(ctx) }
	return []registry.Resource{
		{
			URI: "cursus://steps", Name: "step-types", MIMEType: "application/json", Tool: "steps.source",
			Description: "Every step type the server knows (built-in and the operator's step directories), each with the URI of its .step.yaml.",
			Read: func(ctx context.Context, _ string, _ func(string) bool) (string, error) {
				return d.stepTypeListing(ctx)
			},
		},
		{
			URI: "cursus://steps/{step_type}", Name: "step-type", MIMEType: "application/yaml", Tool: "steps.source",
			Description: "The .step.yaml text of a step type, as steps.source returns it.",
			Values:      stepNames,
			Read: func(ctx context.Context, name string, _ func(string) bool) (string, error) {
				_, _, text, err := d.catalogs(ctx).stepSource(name)
				return string(text), err
			},
		},
		{
			URI: "cursus://steps/{step_type}/code", Name: "step-code", MIMEType: "application/json", Tool: "steps.code",
			Description: "The built-in code of a step type (each file's path and text, the entry point), as steps.code returns it.",
			Values:      func(ctx context.Context) []string { return d.codedStepTypes(ctx) },
			Read: func(ctx context.Context, name string, _ func(string) bool) (string, error) {
				out, err := d.catalogs(ctx).stepCode(name)
				if err != nil {
					return "", err
				}
				return encodeResource(out)
			},
		},
		{
			URI: "cursus://dags/{dag_id}", Name: "shared-dag", MIMEType: "application/json", Tool: "pipeline_catalog.get_dag",
			Description: "A shared DAG with its nodes, edges and agent context, as pipeline_catalog.get_dag returns it.",
			Values:      func(ctx context.Context) []string { return d.dags(ctx).IDs() },
			Read: func(ctx context.Context, id string, _ func(string) bool) (string, error) {
				e, err := d.pcEntry(ctx, id)
				if err != nil {
					return "", err
				}
				return encodeResource(newPCDAG(e))
			},
		},
		formatResource(formatStepYAML, "The JSON Schema of a .step.yaml step interface, as steps.format {\"format\": \"step_yaml\"} returns it."),
		formatResource(formatConfigJSON, "The JSON Schema of config.json in the Cursus layout, as steps.format {\"format\": \"config_json\"} returns it."),
		{
			URI: "cursus://workflows/{name}", Name: "workflow", MIMEType: "text/markdown",
			Description: "A workflow guide: its stages, the tools of each and the gate before the next, as the MCP prompt of the same name renders it for you.",
			Values: func(context.Context) []string {
				var names []string
				for _, w := range workflows.All() {
					names = append(names, w.Name)
				}
				return names
			},
			Read: func(ctx context.Context, name string, open func(string) bool) (string, error) {
				w, ok := workflows.Get(name)
				if !ok {
					return "", fmt.Errorf("no workflow %q", name)
				}
				return renderWorkflow(workflowFor(guideOf(w), open), nil, open("workflow.start") && open("workflow.submit")), nil
			},
		},
	}
}

// formatResource serves formatSchema(format) at cursus://schemas/<format>.
func formatResource(format, description string) registry.Resource {
	return registry.Resource{
		URI: "cursus://schemas/" + format, Name: format + "-schema", MIMEType: "application/schema+json", Tool: "steps.format",
		Description: description,
		Read: func(context.Context, string, func(string) bool) (string, error) {
			schema, err := formatSchema(format)
			if err != nil {
				return "", err
			}
			return encodeResource(schema)
		},
	}
}

// sourcedStepTypes are the shared step types that have .step.yaml text.
func (d *Deps) sourcedStepTypes(ctx context.Context) []string {
	cv := d.catalogs(ctx)
	var names []string
	for _, name := range cv.Steps.Names() {
		if _, _, _, err := cv.stepSource(name); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// codedStepTypes are the shared step types that have built-in code.
func (d *Deps) codedStepTypes(ctx context.Context) []string {
	var names []string
	for _, name := range d.catalogs(ctx).Steps.Names() {
		if _, ok := stepcode.Dir(name); ok {
			names = append(names, name)
		}
	}
	return names
}

// stepTypeListing is the document of cursus://steps.
func (d *Deps) stepTypeListing(ctx context.Context) (string, error) {
	type entry struct {
		StepType string `json:"step_type"`
		URI      string `json:"uri"`
		Source   string `json:"source"`
	}
	cv := d.catalogs(ctx)
	var entries []entry
	for _, name := range cv.Steps.Names() {
		if iface, _, _, err := cv.stepSource(name); err == nil {
			entries = append(entries, entry{StepType: name, URI: "cursus://steps/" + name, Source: iface.Source})
		}
	}
	return encodeResource(map[string]any{"step_types": entries, "count": len(entries)})
}

func encodeResource(v any) (string, error) {
	b, err := verbatim.Marshal(v)
	return string(b), err
}
