package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// everyToolEnv serves the production tools with every gate open, so that
// GET /tools lists all of them.
func everyToolEnv(t *testing.T) (*testEnv, int) {
	env, reg := productionEnv(t, map[string]string{"CURSUS_MCP_ENABLE_DESTRUCTIVE": "1", "CURSUS_MCP_ALLOW_SCRIPT_EXEC": "1"})
	return env, len(reg.Tools(""))
}

func getJSON(t *testing.T, url string, into any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if into != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
	}
	return resp.StatusCode
}

// schemaRules collects what a host would refuse in a schema.
type schemaRules struct {
	problems []string
}

func (r *schemaRules) fail(path, format string, a ...any) {
	r.problems = append(r.problems, path+": "+fmt.Sprintf(format, a...))
}

// strictAllowed are the keywords OpenAI strict mode accepts.
var strictAllowed = map[string]bool{
	"type": true, "description": true, "enum": true, "const": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "anyOf": true, "$ref": true, "$defs": true,
}

var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

var jsonTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true, "null": true}

// checkStrict walks s as OpenAI strict mode does: only its keywords; every
// object closed with every property required; a nullable enum lists null;
// an array has items; nesting at most 10 deep.
func (r *schemaRules) checkStrict(s map[string]any, path string, depth int) {
	if depth > 10 {
		r.fail(path, "nested deeper than 10 levels")
	}
	for k := range s {
		if !strictAllowed[k] {
			r.fail(path, "keyword %q is not supported in strict mode", k)
		}
	}
	var types []any
	switch t := s["type"].(type) {
	case string:
		types = []any{t}
	case []any:
		types = t
	case nil:
		if _, ok := s["anyOf"]; !ok {
			r.fail(path, "no type and no anyOf")
		}
	default:
		r.fail(path, "type %v", t)
	}
	for _, t := range types {
		if name, _ := t.(string); !jsonTypes[name] {
			r.fail(path, "unknown type %v", t)
		}
	}
	if f, ok := s["format"].(string); ok && !strictFormats[f] {
		r.fail(path, "format %q is not supported", f)
	}
	if enum, ok := s["enum"].([]any); ok && slices.Contains(types, any("null")) && !slices.Contains(enum, nil) {
		r.fail(path, "nullable enum without null")
	}
	if slices.Contains(types, any("object")) {
		if s["additionalProperties"] != false {
			r.fail(path, "object without additionalProperties: false")
		}
		props, ok := s["properties"].(map[string]any)
		if !ok {
			r.fail(path, "object without properties")
		}
		required, _ := s["required"].([]any)
		var names []string
		for _, n := range required {
			names = append(names, n.(string))
		}
		for name, sub := range props {
			if !slices.Contains(names, name) {
				r.fail(path, "property %q is not required", name)
			}
			m, ok := sub.(map[string]any)
			if !ok {
				r.fail(path+"/"+name, "boolean schema")
				continue
			}
			r.checkStrict(m, path+"/properties/"+name, depth+1)
		}
		if len(names) != len(props) {
			r.fail(path, "required names %v, properties %d", names, len(props))
		}
	}
	if slices.Contains(types, any("array")) {
		items, ok := s["items"].(map[string]any)
		if !ok {
			r.fail(path, "array without items")
		} else {
			r.checkStrict(items, path+"/items", depth+1)
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		if depth == 0 {
			r.fail(path, "anyOf at the root")
		}
		for i, alt := range alts {
			m, _ := alt.(map[string]any)
			r.checkStrict(m, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1)
		}
	}
}

// geminiAllowed are the fields of Gemini's Schema (an OpenAPI 3.0 subset).
var geminiAllowed = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true, "enum": true,
	"maxItems": true, "minItems": true, "properties": true, "required": true, "minProperties": true,
	"maxProperties": true, "minLength": true, "maxLength": true, "pattern": true, "example": true,
	"anyOf": true, "propertyOrdering": true, "default": true, "items": true, "minimum": true, "maximum": true,
}

var geminiTypes = map[string]bool{"STRING": true, "NUMBER": true, "INTEGER": true, "BOOLEAN": true, "ARRAY": true, "OBJECT": true}

var geminiParamName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// checkGemini walks s as Gemini's function declarations do: only Schema's
// fields (no additionalProperties, $ref, $defs, const, patternProperties),
// one upper-case type, string enums with format enum, formats enum and
// date-time only, an OBJECT with properties, an ARRAY with items.
func (r *schemaRules) checkGemini(s map[string]any, path string) {
	for k := range s {
		if !geminiAllowed[k] {
			r.fail(path, "field %q is not in Gemini's Schema", k)
		}
	}
	typ, _ := s["type"].(string)
	if _, ok := s["anyOf"]; !ok && !geminiTypes[typ] {
		r.fail(path, "type %v", s["type"])
	}
	if f, ok := s["format"].(string); ok && (typ != "STRING" || (f != "enum" && f != "date-time")) {
		r.fail(path, "format %q on %s", f, typ)
	}
	if enum, ok := s["enum"].([]any); ok {
		if typ != "STRING" || s["format"] != "enum" {
			r.fail(path, "enum on %s without format enum", typ)
		}
		for _, v := range enum {
			if _, ok := v.(string); !ok {
				r.fail(path, "enum value %v is not a string", v)
			}
		}
	}
	if n, ok := s["nullable"]; ok && n != true {
		r.fail(path, "nullable %v", n)
	}
	if typ == "OBJECT" {
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			r.fail(path, "OBJECT without properties")
		}
		for _, n := range asList(s["required"]) {
			if _, ok := props[n]; !ok {
				r.fail(path, "required %q is no property", n)
			}
		}
		for name, sub := range props {
			m, ok := sub.(map[string]any)
			if !ok {
				r.fail(path+"/"+name, "not a schema object")
				continue
			}
			r.checkGemini(m, path+"/properties/"+name)
		}
	}
	if typ == "ARRAY" {
		items, ok := s["items"].(map[string]any)
		if !ok {
			r.fail(path, "ARRAY without items")
		} else {
			r.checkGemini(items, path+"/items")
		}
	}
	for i, alt := range asAny(s["anyOf"]) {
		m, _ := alt.(map[string]any)
		r.checkGemini(m, fmt.Sprintf("%s/anyOf/%d", path, i))
	}
}

func asAny(v any) []any { l, _ := v.([]any); return l }

func asList(v any) []string {
	var out []string
	for _, x := range asAny(v) {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestStrictVariantPassesOpenAIRules: GET /tools?strict=true gives every
// tool, marked strict, with parameters that pass OpenAI strict mode's
// rules; the plain listing would not (so the checker can fail).
func TestStrictVariantPassesOpenAIRules(t *testing.T) {
	env, total := everyToolEnv(t)
	var strict, plain []struct {
		Function struct {
			Name       string         `json:"name"`
			Strict     bool           `json:"strict"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if status := getJSON(t, env.ts.URL+"/tools?strict=true", &strict); status != http.StatusOK || len(strict) != total {
		t.Fatalf("strict list: %d, %d tools of %d", status, len(strict), total)
	}
	for _, tool := range strict {
		r := &schemaRules{}
		if !tool.Function.Strict {
			r.fail("/", "not marked strict")
		}
		if tool.Function.Parameters["type"] != "object" {
			r.fail("/", "parameters are not an object")
		}
		r.checkStrict(tool.Function.Parameters, "", 0)
		for _, p := range r.problems {
			t.Errorf("%s %s", tool.Function.Name, p)
		}
	}
	getJSON(t, env.ts.URL+"/tools", &plain)
	failing := 0
	for _, tool := range plain {
		r := &schemaRules{}
		r.checkStrict(tool.Function.Parameters, "", 0)
		if len(r.problems) > 0 {
			failing++
		}
	}
	if failing < 10 {
		t.Errorf("only %d plain schemas fail the strict rules: the checker is too lenient", failing)
	}
	if status := getJSON(t, env.ts.URL+"/tools?strict=true&format=mcp", nil); status != http.StatusBadRequest {
		t.Errorf("strict=true&format=mcp: %d, want 400 (the MCP inputSchema stays full JSON Schema)", status)
	}
}

// TestGeminiVariantPassesGeminiRules: GET /tools?format=gemini gives every
// tool as a function declaration that Gemini's rules accept (a tool without
// arguments has no parameters); the plain schemas would not pass.
func TestGeminiVariantPassesGeminiRules(t *testing.T) {
	env, total := everyToolEnv(t)
	var decls []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	if status := getJSON(t, env.ts.URL+"/tools?format=gemini", &decls); status != http.StatusOK || len(decls) != total {
		t.Fatalf("gemini list: %d, %d tools of %d", status, len(decls), total)
	}
	withParams := 0
	for _, d := range decls {
		r := &schemaRules{}
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`).MatchString(d.Name) {
			r.fail("/", "function name %q", d.Name)
		}
		if d.Parameters != nil {
			withParams++
			if d.Parameters["type"] != "OBJECT" {
				r.fail("/", "parameters are not an OBJECT")
			}
			for name := range d.Parameters["properties"].(map[string]any) {
				if !geminiParamName.MatchString(name) {
					r.fail("/", "parameter name %q", name)
				}
			}
			r.checkGemini(d.Parameters, "")
		}
		for _, p := range r.problems {
			t.Errorf("%s %s", d.Name, p)
		}
	}
	if withParams < total/2 {
		t.Errorf("only %d of %d declarations have parameters", withParams, total)
	}
	var plain []struct {
		Function struct {
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	getJSON(t, env.ts.URL+"/tools", &plain)
	for _, tool := range plain {
		r := &schemaRules{}
		r.checkGemini(tool.Function.Parameters, "")
		if len(r.problems) == 0 {
			t.Fatal("a plain schema passes the Gemini rules: the checker is too lenient")
		}
	}
}

// TestVariantArgumentsAreAccepted: a REST call whose arguments follow a
// variant (a free-form object sent as a JSON string; null for every
// omitted optional in strict mode) answers exactly as the plain call,
// when the request says which variant it used; without that word the
// same body is invalid input, and a string that is not JSON is named by
// its pointer.
func TestVariantArgumentsAreAccepted(t *testing.T) {
	env, _ := everyToolEnv(t)
	post := func(query, body string) (int, map[string]any) {
		resp, err := http.Post(env.ts.URL+"/call/validate.deps_resolve"+query, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	dag := `{"nodes": ["XGBoostTraining", "Package"], "edges": [["XGBoostTraining", "Package"]]}`
	status, plain := post("", `{"dag": `+dag+`}`)
	if status != http.StatusOK {
		t.Fatalf("plain call: %d %v", status, plain)
	}
	dagString, _ := json.Marshal(dag)
	strictBody := `{"dag": ` + string(dagString) + `, "dag_file": null, "edges": null, "nodes": null, "step_names": null}`
	for _, c := range []struct{ query, body string }{
		{"?strict=true", strictBody},
		{"?format=gemini", `{"dag": ` + string(dagString) + `}`},
	} {
		status, got := post(c.query, c.body)
		if status != http.StatusOK || !reflect.DeepEqual(got["data"], plain["data"]) {
			t.Errorf("%s: %d, data equal to the plain call's: %v (%v)", c.query, status, reflect.DeepEqual(got["data"], plain["data"]), got["error"])
		}
	}
	if status, e := post("", strictBody); status != http.StatusBadRequest || e["code"] != "invalid_input" {
		t.Errorf("strict-shaped body without ?strict=true: %d %v", status, e)
	}
	if status, e := post("?strict=true", `{"dag": "{not json"}`); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(e["error"]), "/dag") {
		t.Errorf("a dag string that is not JSON: %d %v", status, e)
	}
	if status, _ := post("?strict=maybe", `{}`); status != http.StatusBadRequest {
		t.Errorf("strict=maybe: %d", status)
	}
}

// TestVariantArgumentsFaceTheDepthLimit: a free-form object sent as a
// string of JSON (?strict=true, ?format=gemini) is held to
// limits.max_arg_depth once decoded, as the same object sent plainly is:
// a string-encoded DAG nested 9,000 deep is invalid_input naming the
// limit, not decoded and handed on.
func TestVariantArgumentsFaceTheDepthLimit(t *testing.T) {
	env := newTestEnv(t, nil)
	deep := strings.Repeat(`{"a":`, 9000) + `1` + strings.Repeat(`}`, 9000)
	deepString, _ := json.Marshal(deep)
	for _, c := range []struct{ query, body string }{
		{"?strict=true", `{"dag": ` + string(deepString) + `, "dag_file": null, "edges": null, "nodes": null, "step_names": null}`},
		{"?format=gemini", `{"dag": ` + string(deepString) + `}`},
		{"", `{"dag": ` + deep + `}`},
	} {
		resp, err := http.Post(env.ts.URL+"/call/validate.deps_resolve"+c.query, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || e["code"] != "invalid_input" || !strings.Contains(fmt.Sprint(e["error"]), "limits.max_arg_depth") {
			t.Errorf("%q: %d %v, want 400 invalid_input naming limits.max_arg_depth", c.query, resp.StatusCode, e)
		}
	}
}
