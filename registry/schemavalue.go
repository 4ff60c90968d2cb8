package registry

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaValue is the plain JSON value (maps, slices, float64, string,
// bool) that encoding a derived schema with jsonschema-go's MarshalJSON
// and decoding it with encoding/json gives, built directly from the struct.
// The round trip was a quarter of start-up's CPU time: every tool's input
// and output schema went through it. TestSchemaValueMatchesMarshal holds the
// two to the same value for every field of jsonschema.Schema.
//
// As MarshalJSON does, the empty schema is true and {"not": {}} is false;
// "type" is Type or Types, "items" Items or ItemsArray, "dependencies"
// both dependency maps, and Extra's keys join the object.
func schemaValue(s *jsonschema.Schema) (any, error) {
	if s.Type != "" && s.Types != nil || s.Items != nil && s.ItemsArray != nil ||
		s.Defs != nil && s.Definitions != nil {
		return nil, fmt.Errorf("schema sets a keyword twice (type, items or $defs)")
	}
	m := map[string]any{}
	switch {
	case s.Type != "":
		m["type"] = s.Type
	case s.Types != nil:
		m["type"] = jsonStrings(s.Types)
	}
	switch {
	case s.Items != nil:
		v, err := schemaValue(s.Items)
		if err != nil {
			return nil, err
		}
		m["items"] = v
	case s.ItemsArray != nil:
		v, err := schemaList(s.ItemsArray)
		if err != nil {
			return nil, err
		}
		m["items"] = v
	}
	if len(s.DependencySchemas)+len(s.DependencyStrings) > 0 {
		dep := map[string]any{}
		for k, v := range s.DependencySchemas {
			sv, err := schemaValue(v)
			if err != nil {
				return nil, err
			}
			dep[k] = sv
		}
		for k, v := range s.DependencyStrings {
			dep[k] = jsonStrings(v)
		}
		m["dependencies"] = dep
	}
	if s.Properties != nil { // MarshalJSON keeps an empty, non-nil map
		props, err := schemaMapOf(s.Properties)
		if err != nil {
			return nil, err
		}
		m["properties"] = props
	}
	v := reflect.ValueOf(s).Elem()
	for _, f := range schemaFields() {
		fv := v.Field(f.index)
		if isEmptyJSON(fv) {
			continue
		}
		var (
			val any
			err error
		)
		switch x := fv.Interface().(type) {
		case string:
			val = x
		case bool:
			val = x
		case *int:
			val = float64(*x)
		case *float64:
			val = *x
		case *jsonschema.Schema:
			val, err = schemaValue(x)
		case []*jsonschema.Schema:
			val, err = schemaList(x)
		case map[string]*jsonschema.Schema:
			val, err = schemaMapOf(x)
		case []string:
			val = jsonStrings(x)
		case []any:
			val, err = jsonPlain(x)
		case *any:
			val, err = jsonPlain(*x)
		case json.RawMessage:
			err = json.Unmarshal(x, &val)
		default: // maps of bools or string lists, which derived schemas do not use
			val, err = jsonRoundTrip(x)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		m[f.name] = val
	}
	for k, x := range s.Extra {
		if _, dup := m[k]; dup || schemaFieldNames()[k] {
			return nil, fmt.Errorf("extra keyword %q duplicates a field", k)
		}
		val, err := jsonPlain(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		m[k] = val
	}
	switch {
	case len(m) == 0:
		return true, nil
	case len(m) == 1 && m["not"] == true:
		return false, nil
	}
	return m, nil
}

func schemaList(list []*jsonschema.Schema) ([]any, error) {
	out := make([]any, len(list))
	for i, s := range list {
		if s == nil {
			continue // null, as encoding/json writes a nil element
		}
		v, err := schemaValue(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func schemaMapOf(m map[string]*jsonschema.Schema) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, s := range m {
		if s == nil {
			out[k] = nil
			continue
		}
		v, err := schemaValue(s)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func jsonStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// jsonPlain is v as encoding/json decodes it into an interface: already
// plain values are copied (containers) or kept; anything else (an int, a
// named string type, a struct) goes through encoding/json.
func jsonPlain(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			pe, err := jsonPlain(e)
			if err != nil {
				return nil, err
			}
			out[i] = pe
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			pe, err := jsonPlain(e)
			if err != nil {
				return nil, err
			}
			out[k] = pe
		}
		return out, nil
	}
	return jsonRoundTrip(v)
}

func jsonRoundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// isEmptyJSON is encoding/json's omitempty test.
func isEmptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

type schemaField struct {
	index int
	name  string
}

// schemaFields are jsonschema.Schema's fields that encoding/json writes by
// their tag (those tagged "-" are the special cases above).
var schemaFields = sync.OnceValue(func() []schemaField {
	var out []schemaField
	t := reflect.TypeFor[jsonschema.Schema]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "properties" {
			continue
		}
		out = append(out, schemaField{index: i, name: name})
	}
	return out
})

var schemaFieldNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{"type": true, "items": true, "dependencies": true, "properties": true}
	for _, f := range schemaFields() {
		names[f.name] = true
	}
	return names
})
