package registry

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// roundTrip is what schemaValue replaces: MarshalJSON, then encoding/json
// into an interface.
func roundTrip(t *testing.T, s *jsonschema.Schema) any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// fillSchema sets every field of a jsonschema.Schema that encoding/json
// writes, so a field added by a new library version that schemaValue does
// not know shows up as a difference.
func fillSchema(depth int) *jsonschema.Schema {
	s := &jsonschema.Schema{}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch sf.Name {
		case "Types", "ItemsArray", "Definitions", "PropertyOrder":
			continue // each excludes another field, or only orders
		case "Default":
			f.Set(reflect.ValueOf(json.RawMessage(`{"a":[1,"x",true,null]}`)))
			continue
		case "Extra":
			f.Set(reflect.ValueOf(map[string]any{"x-int": 3, "x-list": []any{1, "a"}, "x-map": map[string]any{"k": 2.5}}))
			continue
		}
		switch x := f.Addr().Interface().(type) {
		case *string:
			*x = sf.Name
		case *bool:
			*x = true
		case **int:
			n := i + 1
			*x = &n
		case **float64:
			n := float64(i) + 0.5
			*x = &n
		case *[]any:
			*x = []any{1, "b", false, nil, map[string]any{"c": []string{"d"}}}
		case **any:
			var a any = []int{1, 2}
			*x = &a
		case *[]string:
			*x = []string{sf.Name, "z"}
		case *map[string]bool:
			*x = map[string]bool{"v": true}
		case *map[string][]string:
			*x = map[string][]string{"k": {"a", "b"}}
		case **jsonschema.Schema:
			if depth > 0 {
				*x = fillSchema(depth - 1)
			} else {
				*x = &jsonschema.Schema{} // true
			}
		case *[]*jsonschema.Schema:
			*x = []*jsonschema.Schema{{Type: "string"}, {Not: &jsonschema.Schema{}}}
		case *map[string]*jsonschema.Schema:
			*x = map[string]*jsonschema.Schema{"p": {Type: "integer"}, "q": {}}
		default:
			panic("fillSchema: field " + sf.Name + " of an unknown type: extend schemaValue and this test")
		}
	}
	return s
}

func TestSchemaValueMatchesMarshal(t *testing.T) {
	type named string
	type inner struct {
		N   int               `json:"n" schema:"minimum=1,maximum=9,default=3"`
		S   named             `json:"s,omitempty" schema:"enum=a|b"`
		Ps  *string           `json:"ps,omitempty" pattern:"^[a-z]+$"`
		Any any               `json:"any,omitempty"`
		M   map[string]any    `json:"m,omitempty"`
		MS  map[string]string `json:"ms,omitempty"`
	}
	type outer struct {
		Items []inner `json:"items" schema:"minItems=1"`
		Ptr   *inner  `json:"ptr,omitempty"`
		F     float64 `json:"f,omitempty"`
		B     bool    `json:"b,omitempty" schema:"default=true"`
		L     [][]int `json:"l,omitempty"`
	}
	cases := map[string]*jsonschema.Schema{
		"every field":      fillSchema(1),
		"types":            {Types: []string{"null", "string"}},
		"items array":      {ItemsArray: []*jsonschema.Schema{{Type: "string"}, {}}},
		"definitions":      {Definitions: map[string]*jsonschema.Schema{"d": {Type: "object"}}},
		"dependencies":     {DependencySchemas: map[string]*jsonschema.Schema{"a": {}}, DependencyStrings: map[string][]string{"b": {"c"}}},
		"empty properties": {Type: "object", Properties: map[string]*jsonschema.Schema{}},
		"empty":            {},
		"false":            {Not: &jsonschema.Schema{}},
		"false inside":     {Properties: map[string]*jsonschema.Schema{"never": {Not: &jsonschema.Schema{}}}},
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[outer](), reflect.TypeFor[inner](), reflect.TypeFor[[]map[string]*outer]()} {
		s, err := deriveSchema(typ)
		if err != nil {
			t.Fatal(err)
		}
		cases["derived "+typ.String()] = s
	}
	for name, s := range cases {
		got, err := schemaValue(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := roundTrip(t, s); !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s:\n got %.600s\nwant %.600s", name, g, w)
		}
	}
	if _, err := schemaValue(&jsonschema.Schema{Type: "string", Types: []string{"string"}}); err == nil {
		t.Error("Type and Types both set: no error")
	}
	if _, err := schemaValue(&jsonschema.Schema{Extra: map[string]any{"pattern": "x"}}); err == nil {
		t.Error("Extra repeating a keyword: no error")
	}
}

// A tool's argument schema is compiled at its first call: a schema that
// does not compile fails that call as the server's fault, and
// CompileSchemas finds it at once.
func TestSchemaCompiledAtFirstCall(t *testing.T) {
	type badIn struct {
		Name string `json:"name" pattern:"("`
	}
	bad := Define(ToolDef{Name: "t.bad", Description: "test tool", When: "in tests", Examples: []string{"t.bad {}"},
		Tags: []string{PhasePlanner}}, Plain(func(context.Context, badIn) (any, error) { return nil, nil }))
	r := newReg(t, Options{}, tool("t.good", okHandler), bad)
	if e := r.tools["t.good"]; e.validator != nil {
		t.Error("t.good's schema compiled before any call")
	}
	if res := r.Call(context.Background(), "t.good", map[string]any{"name": "x"}); !res.OK {
		t.Fatalf("t.good: %s", res.Encode())
	}
	if e := r.tools["t.good"]; e.validator == nil {
		t.Error("t.good's schema not kept after its call")
	}
	res := r.Call(context.Background(), "t.bad", map[string]any{"name": "x"})
	if res.OK || res.Code != CodeInternal {
		t.Errorf("t.bad with a schema that does not compile: %s", res.Encode())
	}
	if err := r.CompileSchemas(); err == nil || !strings.Contains(err.Error(), "t.bad") {
		t.Errorf("CompileSchemas: %v", err)
	}
}
