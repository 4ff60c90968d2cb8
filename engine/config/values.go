package config

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cursus-dev/cursus/internal/textdist"
)

// Problem kinds.
const (
	KindMissing = "missing" // an essential field has no value
	KindType    = "type"    // wrong JSON type (or a value too deeply nested)
	KindRange   = "range"   // outside minimum/maximum, or a string/collection too large
	KindPattern = "pattern" // a string does not match the field's pattern
	KindEnum    = "enum"    // not one of the allowed values
	KindUnknown = "unknown" // not a settable field of the step type
	KindRule    = "rule"    // a cross-field rule (e.g. max_parallel_jobs ≤ max_jobs)
)

// Problem is one thing wrong with a config value. It is not a
// finding.Finding because the tools emit it as it is (a config file's
// problems, in the details of the error that rejects it), with a node,
// field and kind where a Finding has a file, key path and rule.
type Problem struct {
	// Node is the DAG node or config key the problem belongs to, when the
	// check covered several configs.
	Node    string `json:"node,omitempty"`
	Field   string `json:"field"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Node != "" {
		return p.Node + "." + p.Field + ": " + p.Message
	}
	return p.Field + ": " + p.Message
}

// Limits on user-supplied values: configs are small; anything bigger is
// hostile or a mistake, and must not be able to exhaust memory downstream.
const (
	MaxDepth     = 32      // nesting of arrays/objects inside one value
	MaxStringLen = 1 << 18 // bytes per string (256 KiB: room for SQL or long feature lists)
	MaxElements  = 100000  // array elements + object members per value
)

// checkValue normalises v for field f and checks type, enum, pattern and
// range. Nested paths appear in Problem.Field as dotted/indexed suffixes.
func checkValue(f *Field, v any) (any, []Problem) {
	budget := MaxElements
	n, p := normalizeBudget(v, f.Type, f.Name, 0, &budget)
	if p != nil {
		return nil, []Problem{*p}
	}
	var probs []Problem
	if f.Type == "array" {
		arr := n.([]any)
		for i, el := range arr {
			name := fmt.Sprintf("%s[%d]", f.Name, i)
			if f.Items != "" {
				el2, p := normalize(el, f.Items, name, 1)
				if p != nil {
					probs = append(probs, *p)
					continue
				}
				arr[i] = el2
				el = el2
			}
			if folded, ok := foldAllowed(f, el); ok {
				arr[i], el = folded, folded
			}
			probs = append(probs, scalarChecks(f, name, el)...)
		}
		return n, probs
	}
	if folded, ok := foldAllowed(f, n); ok {
		n = folded
	}
	probs = append(probs, scalarChecks(f, f.Name, n)...)
	return n, probs
}

// foldAllowed returns the allowed spelling of a string that matches an
// allowed value only when case is ignored: Cursus compares these closed
// sets case-insensitively (PARQUET for Parquet).
func foldAllowed(f *Field, v any) (any, bool) {
	s, ok := v.(string)
	if !ok || len(f.Allowed) == 0 || containsValue(f.Allowed, v) {
		return nil, false
	}
	for _, a := range f.Allowed {
		if as, ok := a.(string); ok && strings.EqualFold(as, s) {
			return as, true
		}
	}
	return nil, false
}

// scalarChecks applies allowed/pattern/range to one value (an array's
// element for array fields).
func scalarChecks(f *Field, name string, v any) []Problem {
	var probs []Problem
	if len(f.Allowed) > 0 && !containsValue(f.Allowed, v) {
		probs = append(probs, Problem{Field: name, Kind: KindEnum,
			Message: fmt.Sprintf("%s is not allowed; allowed values: %s", short(v), listValues(f.Allowed))})
	}
	if s, ok := v.(string); ok && f.re != nil && !f.re.MatchString(s) {
		probs = append(probs, Problem{Field: name, Kind: KindPattern,
			Message: fmt.Sprintf("%s does not match pattern %s", short(v), f.Pattern)})
	}
	if x, ok := toFloat(v); ok {
		if f.Minimum != nil && x < *f.Minimum || f.Maximum != nil && x > *f.Maximum {
			probs = append(probs, Problem{Field: name, Kind: KindRange,
				Message: fmt.Sprintf("%s is outside the range %s", short(v), rangeText(f))})
		}
	}
	return probs
}

func rangeText(f *Field) string {
	lo, hi := "-∞", "∞"
	if f.Minimum != nil {
		lo = strconv.FormatFloat(*f.Minimum, 'g', -1, 64)
	}
	if f.Maximum != nil {
		hi = strconv.FormatFloat(*f.Maximum, 'g', -1, 64)
	}
	return lo + ".." + hi
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func normalize(v any, typ, name string, depth int) (any, *Problem) {
	budget := MaxElements
	return normalizeBudget(v, typ, name, depth, &budget)
}

// normalizeBudget converts v to the canonical Go form of typ: string,
// int64, float64, bool, []any, map[string]any (nested values canonical
// too). JSON numbers may arrive as float64, json.Number or Go ints.
func normalizeBudget(v any, typ, name string, depth int, budget *int) (any, *Problem) {
	bad := func(kind, msg string) (any, *Problem) {
		return nil, &Problem{Field: name, Kind: kind, Message: msg}
	}
	if v == nil {
		return bad(KindType, "must not be null; expected "+article(typ))
	}
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return bad(KindType, fmt.Sprintf("expected a string, got %s", describe(v)))
		}
		if len(s) > MaxStringLen {
			return bad(KindRange, fmt.Sprintf("string of %d bytes exceeds the limit of %d", len(s), MaxStringLen))
		}
		if !utf8.ValidString(s) {
			return bad(KindType, "string is not valid UTF-8")
		}
		return s, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return bad(KindType, fmt.Sprintf("expected a boolean (true or false), got %s", describe(v)))
		}
		return b, nil
	case "integer":
		n, ok := asNumber(v)
		if !ok {
			return bad(KindType, fmt.Sprintf("expected an integer, got %s", describe(v)))
		}
		if i, isInt := n.(int64); isInt {
			return i, nil
		}
		f := n.(float64)
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return bad(KindType, fmt.Sprintf("expected an integer, got %v", f))
		}
		return int64(f), nil
	case "number":
		n, ok := asNumber(v)
		if !ok {
			return bad(KindType, fmt.Sprintf("expected a number, got %s", describe(v)))
		}
		if i, isInt := n.(int64); isInt {
			return float64(i), nil
		}
		return n, nil
	case "array", "object", "any":
		return normalizeAny(v, typ, name, depth, budget)
	}
	return bad(KindType, "unsupported field type "+typ)
}

// normalizeAny converts nested JSON-like data, enforcing the limits.
func normalizeAny(v any, want, name string, depth int, budget *int) (any, *Problem) {
	bad := func(kind, msg string) (any, *Problem) {
		return nil, &Problem{Field: name, Kind: kind, Message: msg}
	}
	if depth > MaxDepth {
		return bad(KindType, fmt.Sprintf("value nests deeper than %d levels", MaxDepth))
	}
	switch x := v.(type) {
	case []any:
		if want == "object" {
			return bad(KindType, "expected an object, got an array")
		}
		*budget -= len(x)
		if *budget < 0 {
			return bad(KindRange, fmt.Sprintf("value has more than %d elements", MaxElements))
		}
		out := make([]any, len(x))
		for i, el := range x {
			n, p := normalizeAny(el, "any", fmt.Sprintf("%s[%d]", name, i), depth+1, budget)
			if p != nil {
				return nil, p
			}
			out[i] = n
		}
		return out, nil
	case []string:
		arr := make([]any, len(x))
		for i, s := range x {
			arr[i] = s
		}
		return normalizeAny(arr, want, name, depth, budget)
	case map[string]any:
		if want == "array" {
			return bad(KindType, "expected an array, got an object")
		}
		*budget -= len(x)
		if *budget < 0 {
			return bad(KindRange, fmt.Sprintf("value has more than %d elements", MaxElements))
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			if len(k) > MaxStringLen {
				return bad(KindRange, "object key exceeds the string limit")
			}
			n, p := normalizeAny(el, "any", name+"."+k, depth+1, budget)
			if p != nil {
				return nil, p
			}
			out[k] = n
		}
		return out, nil
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return normalizeAny(m, want, name, depth, budget)
	}
	if want != "any" {
		return bad(KindType, fmt.Sprintf("expected %s, got %s", article(want), describe(v)))
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if len(x) > MaxStringLen {
			return bad(KindRange, fmt.Sprintf("string of %d bytes exceeds the limit of %d", len(x), MaxStringLen))
		}
		return x, nil
	}
	if n, ok := asNumber(v); ok {
		return n, nil
	}
	return bad(KindType, fmt.Sprintf("unsupported value %s", describe(v)))
}

// asNumber returns an int64 for integral JSON numbers that fit, else a
// float64.
func asNumber(v any) (any, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return float64(x), true
		}
		return int64(x), true
	case float32:
		return asNumber(float64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return x, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		f, err := x.Float64()
		if err != nil {
			return nil, false
		}
		return f, true
	}
	return nil, false
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + short(x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any, []string:
		return "an array"
	case map[string]any, map[string]string:
		return "an object"
	}
	if _, ok := asNumber(v); ok {
		return fmt.Sprintf("number %v", v)
	}
	return fmt.Sprintf("%T", v)
}

func article(typ string) string {
	switch typ {
	case "integer", "array", "object":
		return "an " + typ
	}
	return "a " + typ
}

// short renders a value for a message, cut to a readable length.
func short(v any) string {
	b, err := json.Marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprint(v)
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func listValues(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if s, ok := v.(string); ok {
			parts[i] = s
		} else {
			parts[i] = short(v)
		}
	}
	return strings.Join(parts, ", ")
}

func containsValue(set []any, v any) bool {
	k := canonical(v)
	for _, a := range set {
		if canonical(a) == k {
			return true
		}
	}
	return false
}

// canonical is the comparison key of a value: JSON with sorted keys.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// suggest returns up to three names close to name.
func suggest(name string, names []string) []string {
	type cand struct {
		n string
		d int
	}
	var cs []cand
	ln := strings.ToLower(name)
	for _, n := range names {
		l := strings.ToLower(n)
		d := textdist.Distance(ln, l)
		if d <= max(2, len(ln)/4) || (len(ln) >= 4 && (strings.Contains(l, ln) || strings.Contains(ln, l))) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].n < cs[j].n
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].n)
	}
	return out
}
