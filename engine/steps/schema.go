package steps

import (
	"maps"
	"slices"
)

// InterfaceSchema is the JSON Schema (draft 2020-12) of a .step.yaml
// document, read as JSON. It is built from the table the loader checks
// shapes with, so it says exactly which keys exist and what each holds;
// the rules Validate adds across keys (property paths, compatible
// sources, config field declarations) are not expressible here.
// An unknown key is only a warning to the loader; the schema refuses it,
// since it is ignored.
func InterfaceSchema() map[string]any {
	s := shapeSchema(interfaceShape, "")
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "Cursus step interface (.step.yaml)"
	s["description"] = "One step type: its SageMaker step type (registry), how it is built (compute, patterns), " +
		"the script contract (container paths, env vars, job arguments), its logical ports (spec.dependencies " +
		"consumed, spec.outputs produced, each with a type), job-type variants, and the config fields it adds."
	s["required"] = []string{"step_type", "contract"}
	return s
}

// schemaDetails refine the shape of some keys: closed sets and patterns
// Validate enforces on a single value.
var schemaDetails = map[string]map[string]any{
	"step_type":                    {"pattern": stepTypeName.String(), "description": "PascalCase step type, e.g. TabularPreprocessing; no '_' or '-'."},
	"node_type":                    {"enum": anyList(NodeTypes)},
	"registry.sagemaker_step_type": {"enum": anyList(SageMakerStepTypes)},
	"spec.dependencies.*.type":     {"description": "Dependency type, matched against upstream output types (processing_output, model_artifacts, …)."},
	"spec.outputs.*.type":          {"description": "Output type (processing_output, model_artifacts, …)."},
	"spec.outputs.*.property_path": {"description": "Runtime property of the step, e.g. properties.ProcessingOutputConfig.Outputs['name'].S3Output.S3Uri."},
}

func anyList(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// shapeSchema is the schema of one shape; at is its dotted path, with
// "*" for user-chosen names. Every value may also be null: a bare key
// means empty.
func shapeSchema(s *shape, at string) map[string]any {
	var out map[string]any
	switch s.kind {
	case kindAny:
		out = map[string]any{}
	case kindString:
		out = map[string]any{"type": []string{"string", "null"}}
	case kindBool:
		out = map[string]any{"type": []string{"boolean", "null"}}
	case kindNumber:
		out = map[string]any{"type": []string{"number", "null"}}
	case kindList:
		out = map[string]any{"type": []string{"array", "null"}, "items": shapeSchema(s.elem, at+"[]")}
	case kindMapOf:
		out = map[string]any{"type": []string{"object", "null"}, "additionalProperties": shapeSchema(s.elem, joinPath(at, "*"))}
	case kindObject:
		props := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(s.fields)) {
			props[k] = shapeSchema(s.fields[k], joinPath(at, k))
		}
		out = map[string]any{"type": []string{"object", "null"}, "properties": props, "additionalProperties": false}
	}
	maps.Copy(out, schemaDetails[at])
	return out
}
