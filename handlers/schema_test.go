package handlers

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// TestEveryToolRejectsBadArguments checks, for every registered tool, that
// unknown, missing-required and wrong-typed arguments get invalid_input
// before the handler runs.
func TestEveryToolRejectsBadArguments(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, tool := range reg.Tools("") {
		t.Run(tool.Name, func(t *testing.T) {
			res := call(t, reg, tool.Name, `{"definitely_not_an_argument": 1}`)
			mustFail(t, res, registry.CodeInvalidInput)
			if !strings.Contains(res.Error, "definitely_not_an_argument") {
				t.Errorf("unknown-argument message does not name it: %s", res.Error)
			}
			props, _ := tool.Schema()["properties"].(map[string]any)
			if req, ok := tool.Schema()["required"].([]string); ok && len(req) > 0 {
				mustFail(t, call(t, reg, tool.Name, `{}`), registry.CodeInvalidInput)
			}
			for name, p := range props {
				bad := wrongTypeValue(p.(map[string]any))
				if bad == "" {
					continue
				}
				res := call(t, reg, tool.Name, `{"`+name+`": `+bad+`}`)
				mustFail(t, res, registry.CodeInvalidInput)
				if !strings.Contains(res.Error, name) {
					t.Errorf("wrong-type message for %s does not name it: %s", name, res.Error)
				}
			}
		})
	}
}

// wrongTypeValue is a JSON value that the property's declared type rejects.
func wrongTypeValue(prop map[string]any) string {
	switch prop["type"] {
	case "string":
		return `{"not": "a string"}`
	case "boolean":
		return `"yes"`
	case "integer", "number":
		return `"seven"`
	case "array":
		return `"not a list"`
	case "object":
		return `["not", "an", "object"]`
	}
	return ""
}

// TestExamplesAreValidCalls checks that every example argument object of
// every tool passes schema validation (without running it): examples are
// what agents copy.
func TestExamplesAreValidCalls(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, tool := range reg.Tools("") {
		for _, ex := range tool.Examples {
			name, rest, _ := strings.Cut(ex, " ")
			if name != tool.Name {
				t.Errorf("%s: example names %q", tool.Name, name)
				continue
			}
			body, _, _ := strings.Cut(rest, "  #")
			args, bad := registry.DecodeArgs([]byte(strings.TrimSpace(body)))
			if bad != nil {
				t.Errorf("%s: example args are not a JSON object: %q", tool.Name, body)
				continue
			}
			if errs, _ := reg.ValidateArgs(tool.Name, args); len(errs) > 0 {
				t.Errorf("%s: example %q fails schema validation: %v", tool.Name, ex, errs)
			}
		}
	}
}
