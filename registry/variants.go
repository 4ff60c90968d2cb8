package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Hosts that constrain a model's output to a tool's schema accept only
// part of JSON Schema. The variants here rewrite an argument schema for
// two of them; FromVariantArgs turns arguments written against a variant
// back into what the tool's own schema accepts.
//
// Both variants send an object without declared properties (a DAG, a map
// of config values: free-form) as a string holding its JSON, since
// neither host can describe such an object: OpenAI strict mode needs every
// object closed and every key listed, and Gemini refuses an OBJECT without
// properties.

// freeFormNote ends the description of a free-form object in a variant.
const freeFormNote = "Send it as a string holding the JSON object."

// StrictSchema is schema in OpenAI's strict mode: every object closed
// (additionalProperties false) with every property required, an optional
// property nullable (null means "not given"), free-form objects as JSON
// strings, and only the keywords strict mode supports.
func StrictSchema(schema map[string]any) map[string]any {
	return strictNode(schema, false)
}

// strictKeywords are the keywords strict mode accepts, besides the
// structural ones strictNode writes itself.
var strictKeywords = []string{
	"description", "enum", "const", "pattern", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}

func strictNode(s map[string]any, nullable bool) map[string]any {
	if isFreeForm(s) {
		return withNull(map[string]any{"type": "string", "description": freeFormDescription(s)}, nullable)
	}
	out := map[string]any{}
	for _, k := range strictKeywords {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if t, ok := s["type"]; ok {
		out["type"] = t
	}
	if props, ok := s["properties"].(map[string]any); ok {
		required := requiredSet(s)
		kept := make(map[string]any, len(props))
		names := make([]any, 0, len(props))
		for _, name := range sortedKeys(props) {
			sub, _ := props[name].(map[string]any)
			kept[name] = strictNode(sub, !required[name])
			names = append(names, name)
		}
		out["type"], out["properties"], out["required"], out["additionalProperties"] = "object", kept, names, false
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = strictNode(items, false)
	}
	for _, k := range []string{"anyOf", "oneOf"} { // strict mode has anyOf only
		if alts, ok := s[k].([]any); ok {
			kept := make([]any, 0, len(alts))
			for _, alt := range alts {
				if m, ok := alt.(map[string]any); ok {
					kept = append(kept, strictNode(m, false))
				}
			}
			out["anyOf"] = kept
		}
	}
	return withNull(out, nullable)
}

// withNull lets s also be null: a null type alternative (and a null enum
// value, or the enum would refuse it).
func withNull(s map[string]any, nullable bool) map[string]any {
	if !nullable {
		return s
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(slices.Clone(t), "null")
		}
	default:
		if alts, ok := s["anyOf"].([]any); ok {
			s["anyOf"] = append(alts, map[string]any{"type": "null"})
		} else {
			return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
		s["enum"] = append(slices.Clone(enum), nil)
	}
	return s
}

// GeminiSchema is schema as the parameters of a Gemini function
// declaration (an OpenAPI 3.0 subset): upper-case types, nullable instead
// of type arrays, enum for const, string enums only, free-form objects as
// JSON strings, and no additionalProperties, $ref, $defs or
// patternProperties. A schema without properties gives nil: a function
// without parameters leaves them out, and Gemini refuses an OBJECT without
// properties.
func GeminiSchema(schema map[string]any) map[string]any {
	if props, _ := schema["properties"].(map[string]any); len(props) == 0 {
		return nil
	}
	return geminiNode(schema)
}

// geminiKeywords are the keywords copied as they are.
var geminiKeywords = []string{
	"description", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
	"minProperties", "maxProperties", "title", "default", "example",
}

func geminiNode(s map[string]any) map[string]any {
	if isFreeForm(s) {
		return map[string]any{"type": "STRING", "description": freeFormDescription(s)}
	}
	out := map[string]any{}
	for _, k := range geminiKeywords {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	switch t := s["type"].(type) {
	case string:
		out["type"] = strings.ToUpper(t)
	case []any:
		for _, one := range t {
			if one == "null" {
				out["nullable"] = true
			} else if name, ok := one.(string); ok {
				out["type"] = strings.ToUpper(name)
			}
		}
	}
	if f, ok := s["format"].(string); ok && f == "date-time" {
		out["format"] = f
	}
	enum, _ := s["enum"].([]any)
	if c, ok := s["const"]; ok {
		enum = []any{c}
	}
	if len(enum) > 0 {
		if allStrings(enum) {
			out["enum"] = enum
			out["type"], out["format"] = "STRING", "enum"
		} else {
			// Gemini's enum holds strings only: the values go into the words.
			b, _ := json.Marshal(enum)
			desc, _ := out["description"].(string)
			out["description"] = strings.TrimSpace(desc + " One of " + string(b) + ".")
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		kept := make(map[string]any, len(props))
		for name, sub := range props {
			m, _ := sub.(map[string]any)
			kept[name] = geminiNode(m)
		}
		out["type"], out["properties"] = "OBJECT", kept
		if req, ok := s["required"].([]any); ok && len(req) > 0 {
			out["required"] = req
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = geminiNode(items)
	}
	for _, k := range []string{"anyOf", "oneOf"} { // Gemini has anyOf only
		if alts, ok := s[k].([]any); ok {
			kept := make([]any, 0, len(alts))
			for _, alt := range alts {
				if m, ok := alt.(map[string]any); ok {
					kept = append(kept, geminiNode(m))
				}
			}
			out["anyOf"] = kept
		}
	}
	return out
}

// isFreeForm tells whether s is an object without declared properties (or
// a schema that allows any value), which the variants send as a JSON
// string.
func isFreeForm(s map[string]any) bool {
	if _, ok := s["properties"]; ok {
		return false
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "const", "items"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	switch t := s["type"].(type) {
	case nil:
		return true
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func freeFormDescription(s map[string]any) string {
	if d, ok := s["description"].(string); ok && d != "" {
		return d + " " + freeFormNote
	}
	return freeFormNote
}

// FromVariantArgs turns arguments written against StrictSchema or
// GeminiSchema of schema back into arguments for schema itself: a null
// given for an optional property is dropped (it means "not given"), and
// a string given for a free-form object is parsed as its JSON. Anything
// else is left for the schema's own validation to judge.
func FromVariantArgs(schema map[string]any, args map[string]any) (map[string]any, error) {
	v, err := fromVariant(schema, args, nil)
	if err != nil {
		return nil, err
	}
	out, _ := v.(map[string]any)
	return out, nil
}

func fromVariant(s map[string]any, v any, loc []string) (any, error) {
	if str, ok := v.(string); ok && isFreeForm(s) && !allowsString(s) {
		var parsed any
		if err := json.Unmarshal([]byte(str), &parsed); err != nil {
			return nil, fmt.Errorf("%s: a free-form object is sent as a string of JSON: %v", ptrOrRoot(loc), err)
		}
		return parsed, nil
	}
	switch val := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			return v, nil
		}
		required := requiredSet(s)
		out := make(map[string]any, len(val))
		for k, sub := range val {
			ps, known := props[k].(map[string]any)
			if !known {
				out[k] = sub // the schema's own validation names it
				continue
			}
			if sub == nil && !required[k] {
				continue
			}
			conv, err := fromVariant(ps, sub, append(slices.Clip(loc), k))
			if err != nil {
				return nil, err
			}
			out[k] = conv
		}
		return out, nil
	case []any:
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return v, nil
		}
		out := make([]any, len(val))
		for i, sub := range val {
			conv, err := fromVariant(items, sub, append(slices.Clip(loc), strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = conv
		}
		return out, nil
	}
	return v, nil
}

// allowsString tells whether the schema itself takes a string as it is.
func allowsString(s map[string]any) bool {
	switch t := s["type"].(type) {
	case nil:
		return false // any value: the variants sent it as JSON text
	case string:
		return t == "string"
	case []any:
		return slices.Contains(t, any("string"))
	}
	return false
}

func ptrOrRoot(loc []string) string {
	if len(loc) == 0 {
		return "/"
	}
	return pointer(loc)
}

func requiredSet(s map[string]any) map[string]bool {
	set := map[string]bool{}
	switch req := s["required"].(type) {
	case []any:
		for _, r := range req {
			if name, ok := r.(string); ok {
				set[name] = true
			}
		}
	case []string:
		for _, name := range req {
			set[name] = true
		}
	}
	return set
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func allStrings(vs []any) bool {
	for _, v := range vs {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}
