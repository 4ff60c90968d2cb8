package registry

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// quickTestSchemas use every keyword quickSchema knows, alone and nested.
func quickTestSchemas() map[string]map[string]any {
	return map[string]map[string]any{
		"fuzz tool": fuzzTool().Schema,
		"open object": {"type": "object", "properties": map[string]any{"n": Number("n")},
			"minProperties": 1, "maxProperties": 3},
		"type list": Object(map[string]any{
			"v":    map[string]any{"type": []any{"string", "null", "integer"}, "minLength": 2},
			"any":  map[string]any{"description": "no constraint"},
			"free": AnyObject("free"),
		}, "v"),
		"arrays": Object(map[string]any{
			"grid": map[string]any{"type": "array", "minItems": 1, "maxItems": 2,
				"items": map[string]any{"type": "array", "items": Integer("cell")}},
			"loose": map[string]any{"type": "array"},
			"pick":  Array("picks", Enum("pick", "a", "é", "")),
		}),
		"bounds": Object(map[string]any{
			"i": map[string]any{"type": "integer", "minimum": -3, "maximum": 9007199254740992},
			"f": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
			"s": map[string]any{"type": "string", "pattern": "^[a-z]+$", "minLength": 1, "maxLength": 3},
		}, "i"),
	}
}

// randomJSON builds values as encoding/json decodes them, biased towards
// the edges of the test schemas' constraints.
func randomJSON(r *rand.Rand, depth int) any {
	keys := []string{"id", "count", "mode", "tags", "opts", "deep", "v", "any", "free", "n",
		"grid", "loose", "pick", "i", "f", "s", "extra"}
	strs := []string{"", "a", "é", "ab", "abc", "abcd", "A", "a_1", "1a", "fast", "slow", "x\n",
		"aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaa", "ééééééééééééééééé", "\u2028", "a b"}
	nums := []float64{0, math.Copysign(0, -1), 1, -3, -4, 1.5, 0.5, 100, 101, 1e300, -1e300,
		9007199254740992, 9007199254740994, 1e-300, 3}
	switch k := r.IntN(7); {
	case k == 0 || depth > 3:
		return strs[r.IntN(len(strs))]
	case k == 1:
		return nums[r.IntN(len(nums))]
	case k == 2:
		return r.IntN(2) == 0
	case k == 3:
		return nil
	case k == 4:
		arr := make([]any, r.IntN(4))
		for i := range arr {
			arr[i] = randomJSON(r, depth+1)
		}
		return arr
	default:
		obj := map[string]any{}
		for range r.IntN(5) {
			obj[keys[r.IntN(len(keys))]] = randomJSON(r, depth+1)
		}
		return obj
	}
}

// TestQuickSchemaAgreesWithLibrary checks, on many random arguments, that
// quickSchema accepts exactly what the JSON Schema library accepts for
// schemas it supports: accepting more would let bad input through;
// accepting less would only be slow, but means a bug here all the same.
func TestQuickSchemaAgreesWithLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, schema := range quickTestSchemas() {
		v, err := compileSchema(name, schema)
		if err != nil {
			t.Fatal(err)
		}
		if v.quick == nil {
			t.Fatalf("%s: no quick schema", name)
		}
		accepted := 0
		for range 20000 {
			args, ok := randomFor(r, v.quick, 0).(map[string]any)
			if !ok {
				continue
			}
			quick, lib := v.quick.accepts(args), v.schema.Validate(args) == nil
			if quick != lib {
				t.Fatalf("%s: quick %v, library %v for %#v", name, quick, lib, args)
			}
			if lib {
				accepted++
			}
		}
		t.Logf("%s: %d accepted", name, accepted)
		if accepted == 0 {
			t.Errorf("%s: no random argument was valid; the test proves little", name)
		}
	}
}

func TestQuickSchemaLeavesUnknownKeywordsToTheLibrary(t *testing.T) {
	for _, extra := range []map[string]any{
		{"uniqueItems": true}, {"format": "email"}, {"const": "x"}, {"$ref": "#"},
		{"patternProperties": map[string]any{"^x": map[string]any{}}},
		{"additionalProperties": map[string]any{"type": "string"}},
		{"enum": []any{"a", 1}}, {"minimum": 0.5}, {"maximum": 1e20}, {"items": true},
		{"type": "decimal"}, {"minLength": 1.5}, {"pattern": "(?<=a)b"},
	} {
		schema := map[string]any{"type": "object"}
		for k, v := range extra {
			schema[k] = v
		}
		v, err := compileSchema("t", map[string]any{"type": "object", "properties": map[string]any{"p": schema}})
		if err != nil {
			// A schema the library refuses is refused at registration.
			if !strings.Contains(err.Error(), "schema") {
				t.Fatal(err)
			}
			continue
		}
		if v.quick != nil {
			t.Errorf("%v: quick schema built for a keyword it does not know", extra)
		}
	}
}

// The values an in-process caller may pass but encoding/json never makes
// go to the library, which normalises them.
func TestQuickSchemaLeavesGoValuesToTheLibrary(t *testing.T) {
	v, err := compileSchema("t", quickTestSchemas()["type list"])
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"v": 12},
		{"v": "ok", "any": []string{"x"}},
		{"v": "ok", "free": map[string]any{"k": struct{}{}}},
		{"v": math.Inf(1)},
	} {
		if v.quick.accepts(args) {
			t.Errorf("quick schema accepted %#v", args)
		}
	}
}

// randomFor builds a value for q that is valid more often than not and
// sits at the edges of q's constraints: lengths and bounds just inside and
// just outside, missing and unknown keys, other types now and then.
func randomFor(r *rand.Rand, q *quickSchema, depth int) any {
	if q == nil || r.IntN(10) == 0 || depth > 4 {
		return randomJSON(r, depth)
	}
	typ := "object"
	if len(q.types) > 0 {
		typ = q.types[r.IntN(len(q.types))]
	} else if q.props == nil {
		typ = []string{"string", "number", "array", "object"}[r.IntN(4)]
	}
	edge := func(lo, hi int) int { // lo-1, lo, hi, hi+1 (hi < 0: no upper bound)
		if hi < 0 {
			hi = lo + 3
		}
		return max(0, []int{lo - 1, lo, hi, hi + 1, lo + r.IntN(hi-lo+1)}[r.IntN(5)])
	}
	switch typ {
	case "string":
		if q.enum != nil && r.IntN(4) > 0 {
			return q.enum[r.IntN(len(q.enum))]
		}
		return strings.Repeat([]string{"a", "é", "A", "_"}[r.IntN(4)], edge(q.minLen, q.maxLen))
	case "number", "integer":
		nums := []float64{0, 1, 1.5, -1, 1e300}
		for _, b := range []*float64{q.min, q.max} {
			if b != nil {
				nums = append(nums, *b-1, *b, *b+1, *b+0.5)
			}
		}
		return nums[r.IntN(len(nums))]
	case "boolean":
		return r.IntN(2) == 0
	case "null":
		return nil
	case "array":
		arr := make([]any, edge(q.minItems, q.maxItems))
		for i := range arr {
			arr[i] = randomFor(r, q.items, depth+1)
		}
		return arr
	default:
		obj := map[string]any{}
		for name, sub := range q.props {
			if r.IntN(3) > 0 || slices.Contains(q.required, name) && r.IntN(10) > 0 {
				obj[name] = randomFor(r, sub, depth+1)
			}
		}
		if r.IntN(10) == 0 {
			obj["extra"] = randomJSON(r, depth+1)
		}
		return obj
	}
}
