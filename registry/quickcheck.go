package registry

import (
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"slices"
	"unicode/utf8"
)

// quickSchema answers "valid" for arguments it can prove valid against a
// tool's schema, and "ask the library" for everything else. It exists
// because the JSON Schema library allocates fresh validator state for
// every value it visits (eight allocations and about a microsecond for a
// one-field object), which was the largest single cost of a trivial tool
// call. It knows only the keywords our tool schemas use (see
// compileQuick); a schema with any other keyword gets no quickSchema, and
// every rejection is left to the library, which also words the errors.
// TestQuickSchemaAgreesWithLibrary and FuzzCallArguments hold the two to
// the same verdicts.
type quickSchema struct {
	types    []string // allowed JSON types; nil allows any
	props    map[string]*quickSchema
	required []string
	closed   bool // additionalProperties: false
	minProps int
	maxProps int // -1: no limit (so are the other maxima)
	items    *quickSchema
	minItems int
	maxItems int
	minLen   int
	maxLen   int
	pattern  *regexp.Regexp // compiled as the library's default engine does
	enum     []string       // a string enum; other enums are not supported
	min, max *float64       // integers of at most 2^53, so float comparison is exact
}

// compileQuick builds the quickSchema of a schema document as the library
// reads it (numbers as json.Number), or reports that it cannot.
func compileQuick(doc any) (*quickSchema, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	q := &quickSchema{maxProps: -1, maxItems: -1, maxLen: -1}
	counts := map[string]*int{
		"minProperties": &q.minProps, "maxProperties": &q.maxProps,
		"minItems": &q.minItems, "maxItems": &q.maxItems,
		"minLength": &q.minLen, "maxLength": &q.maxLen,
	}
	for key, val := range m {
		var ok bool
		switch key {
		case "description", "title", "default", "examples", "$comment":
			ok = true // annotations: no effect on validity
		case "type":
			q.types, ok = typeNames(val)
		case "properties":
			ok = q.compileProps(val)
		case "required":
			q.required, ok = stringList(val)
		case "additionalProperties":
			q.closed, ok = val == false, val == false || val == true
		case "items":
			q.items, ok = compileQuick(val)
		case "pattern":
			if s, isString := val.(string); isString {
				var err error
				q.pattern, err = regexp.Compile(s)
				ok = err == nil
			}
		case "enum":
			q.enum, ok = stringList(val)
		case "minimum":
			q.min, ok = exactBound(val)
		case "maximum":
			q.max, ok = exactBound(val)
		default:
			if field, isCount := counts[key]; isCount {
				*field, ok = count(val)
			}
		}
		if !ok {
			return nil, false
		}
	}
	return q, true
}

func (q *quickSchema) compileProps(val any) bool {
	props, ok := val.(map[string]any)
	if !ok {
		return false
	}
	q.props = make(map[string]*quickSchema, len(props))
	for name, sub := range props {
		if q.props[name], ok = compileQuick(sub); !ok {
			return false
		}
	}
	return true
}

func typeNames(val any) ([]string, bool) {
	known := []string{"null", "boolean", "object", "array", "number", "integer", "string"}
	if s, ok := val.(string); ok {
		val = []any{s}
	}
	names, ok := stringList(val)
	for _, n := range names {
		ok = ok && slices.Contains(known, n)
	}
	return names, ok
}

func stringList(val any) ([]string, bool) {
	list, ok := val.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, v := range list {
		if out[i], ok = v.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func count(val any) (int, bool) {
	n, ok := val.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return int(i), err == nil && i >= 0 && i <= math.MaxInt32
}

// exactBound accepts integer bounds a float64 holds exactly. The library
// compares the shortest decimal form of a float64 argument with the bound;
// for such bounds that gives the same answer as comparing the floats.
func exactBound(val any) (*float64, bool) {
	n, ok := val.(json.Number)
	if !ok {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || r.Num().CmpAbs(big.NewInt(1<<53)) > 0 {
		return nil, false
	}
	f, _ := r.Float64()
	return &f, true
}

// accepts reports whether v, a value as encoding/json decodes it, is
// certainly valid. false means only that the library must decide.
func (q *quickSchema) accepts(v any) bool {
	switch x := v.(type) {
	case string:
		return q.allows("string") && q.acceptsString(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || q.enum != nil || !(q.allows("number") || q.allows("integer") && x == math.Trunc(x)) {
			return false
		}
		return (q.min == nil || x >= *q.min) && (q.max == nil || x <= *q.max)
	case bool:
		return q.enum == nil && q.allows("boolean")
	case nil:
		return q.enum == nil && q.allows("null")
	case map[string]any:
		return q.enum == nil && q.allows("object") && q.acceptsObject(x)
	case []any:
		return q.enum == nil && q.allows("array") && q.acceptsArray(x)
	}
	return false
}

func (q *quickSchema) allows(typ string) bool {
	return q.types == nil || slices.Contains(q.types, typ)
}

func (q *quickSchema) acceptsString(s string) bool {
	if q.minLen > 0 || q.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
			return false
		}
	}
	if q.pattern != nil && !q.pattern.MatchString(s) {
		return false
	}
	return q.enum == nil || slices.Contains(q.enum, s)
}

func (q *quickSchema) acceptsObject(obj map[string]any) bool {
	if len(obj) < q.minProps || q.maxProps >= 0 && len(obj) > q.maxProps {
		return false
	}
	for _, name := range q.required {
		if _, ok := obj[name]; !ok {
			return false
		}
	}
	for name, val := range obj {
		if sub, ok := q.props[name]; ok {
			if !sub.accepts(val) {
				return false
			}
		} else if q.closed || !plainJSON(val, 1) {
			// An unconstrained value still has to be plain JSON: the
			// library path would normalise anything else first.
			return false
		}
	}
	return true
}

func (q *quickSchema) acceptsArray(arr []any) bool {
	if len(arr) < q.minItems || q.maxItems >= 0 && len(arr) > q.maxItems {
		return false
	}
	for _, item := range arr {
		if q.items != nil && !q.items.accepts(item) || q.items == nil && !plainJSON(item, 1) {
			return false
		}
	}
	return true
}
