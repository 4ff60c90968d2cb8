package serving

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// This file holds the JSONPath subset batch transform accepts in
// DataProcessing.InputFilter and OutputFilter, evaluated the way the
// SageMaker developer guide ("Associate Prediction Results with Input
// Records", section "Supported JSONPath Operators") describes it:
//
//   - "$" is the root and must begin every path; "" means "$".
//   - ".name" and "['name']" select an object's member; "['a','b']"
//     selects several members and yields an object holding just those
//     (in the order written), as Jayway JsonPath (which the guide points
//     to) does. A name in brackets may not itself be a path ('a.b').
//   - ".*" and "[*]" select every member or element.
//   - "[i]" selects one element, "[i,j,...]" several (in the order
//     written); a negative index counts from the end ("-1" is the last).
//   - "[start:end]" is a slice. The guide says the colon includes "all of
//     the elements between two values, inclusive": "$[1:4]" is the second
//     through fifth columns and "$[:5]" the first through the sixth. So
//     the end is INCLUSIVE here, unlike Python or Jayway. An omitted
//     start is the first element, an omitted end the last.
//   - A bracket may mix indexes with at most one slice ("$[0,5:]");
//     SageMaker refuses two ("only single range filters ... are
//     supported").
//   - An index or explicit slice bound outside the record is an error
//     ("If you specify indexes that aren't within the dimension size of
//     the joined dataset, you get an error").
//   - Recursive descent (".."), filters ("?()"), script expressions and
//     slice steps are not supported; the API caps a path at 63
//     characters.
//
// A CSV record is the JSON array of its fields (strings), so only index
// selectors apply to it ("$[0]", "$[1:]").

// maxPathLen is the API's length limit of InputFilter and OutputFilter.
const maxPathLen = 63

// Path is a parsed DataProcessing filter.
type Path struct {
	raw  string
	sels []selector
}

type selKind int

const (
	selNames selKind = iota
	selIndexes
	selWildcard
)

type selector struct {
	kind  selKind
	names []string
	items []indexItem
}

type indexItem struct {
	slice      bool
	idx        int
	start, end *int
}

// ParsePath parses a DataProcessing filter.
func ParsePath(s string) (*Path, error) {
	if s == "" {
		s = "$"
	}
	if len(s) > maxPathLen {
		return nil, fmt.Errorf("%q is %d characters long; SageMaker allows %d", s, len(s), maxPathLen)
	}
	if s[0] != '$' {
		return nil, fmt.Errorf("%q does not start with $ (the root)", s)
	}
	p := &Path{raw: s}
	i := 1
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], ".."):
			return nil, fmt.Errorf("%q: recursive descent (..) is not supported by batch transform", s)
		case s[i] == '.':
			i++
			if i >= len(s) {
				return nil, fmt.Errorf("%q ends with a dot", s)
			}
			switch s[i] {
			case '*':
				p.sels = append(p.sels, selector{kind: selWildcard})
				i++
			case '[':
				// ".['a','b']" is the same as "['a','b']".
			default:
				j := i
				for j < len(s) && s[j] != '.' && s[j] != '[' {
					j++
				}
				p.sels = append(p.sels, selector{kind: selNames, names: []string{s[i:j]}})
				i = j
			}
		case s[i] == '[':
			sel, n, err := parseBracket(s, i)
			if err != nil {
				return nil, err
			}
			p.sels = append(p.sels, sel)
			i = n
		default:
			return nil, fmt.Errorf("%q: unexpected %q at offset %d", s, s[i], i)
		}
	}
	return p, nil
}

// parseBracket parses the bracket starting at s[i] and returns the
// offset after its closing "]".
func parseBracket(s string, i int) (selector, int, error) {
	j := i + 1
	// Find the closing bracket outside quotes.
	var quote byte
	end := -1
	for k := j; k < len(s); k++ {
		c := s[k]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == ']':
			end = k
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return selector{}, 0, fmt.Errorf("%q: unclosed [ at offset %d", s, i)
	}
	body := strings.TrimSpace(s[j:end])
	switch {
	case body == "*":
		return selector{kind: selWildcard}, end + 1, nil
	case body == "":
		return selector{}, 0, fmt.Errorf("%q: empty brackets", s)
	case strings.HasPrefix(body, "?") || strings.HasPrefix(body, "("):
		return selector{}, 0, fmt.Errorf("%q: filter and script expressions are not supported by batch transform", s)
	case body[0] == '\'' || body[0] == '"':
		names, err := parseNames(s, body)
		return selector{kind: selNames, names: names}, end + 1, err
	}
	sel := selector{kind: selIndexes}
	slices := 0
	for _, part := range strings.Split(body, ",") {
		part = strings.TrimSpace(part)
		if !strings.Contains(part, ":") {
			n, err := strconv.Atoi(part)
			if err != nil {
				return selector{}, 0, fmt.Errorf("%q: %q is not an index", s, part)
			}
			sel.items = append(sel.items, indexItem{idx: n})
			continue
		}
		bounds := strings.Split(part, ":")
		if len(bounds) != 2 {
			return selector{}, 0, fmt.Errorf("%q: slice steps (%s) are not supported by batch transform", s, part)
		}
		slices++
		if slices > 1 {
			return selector{}, 0, fmt.Errorf("invalid JsonPath %s: only single range filters of format (eg: [1:5]) are supported", s)
		}
		it := indexItem{slice: true}
		for k, b := range bounds {
			b = strings.TrimSpace(b)
			if b == "" {
				continue
			}
			n, err := strconv.Atoi(b)
			if err != nil {
				return selector{}, 0, fmt.Errorf("%q: %q is not a slice bound", s, b)
			}
			if k == 0 {
				it.start = &n
			} else {
				it.end = &n
			}
		}
		sel.items = append(sel.items, it)
	}
	return sel, end + 1, nil
}

func parseNames(s, body string) ([]string, error) {
	var names []string
	for len(body) > 0 {
		q := body[0]
		if q != '\'' && q != '"' {
			return nil, fmt.Errorf("%q: expected a quoted name at %q", s, body)
		}
		k := strings.IndexByte(body[1:], q)
		if k < 0 {
			return nil, fmt.Errorf("%q: unclosed quote", s)
		}
		name := body[1 : 1+k]
		if strings.ContainsAny(name, ".[") {
			return nil, fmt.Errorf("%q: a bracketed name may not nest a path (%q); batch transform supports only direct children there", s, name)
		}
		names = append(names, name)
		body = strings.TrimSpace(body[2+k:])
		if body == "" {
			break
		}
		if body[0] != ',' {
			return nil, fmt.Errorf("%q: expected , between names", s)
		}
		body = strings.TrimSpace(body[1:])
	}
	return names, nil
}

// String is the path as written.
func (p *Path) String() string { return p.raw }

// IsRoot reports whether the path selects the whole record ("$").
func (p *Path) IsRoot() bool { return len(p.sels) == 0 }

// Select applies the path to v (a value from decodeJSON or a CSV
// record). A path whose every step selects exactly one thing yields that
// thing; any other yields the array of what it selected, except that a
// set of names on an object yields an object.
func (p *Path) Select(v any) (any, error) {
	nodes := []any{v}
	definite := true
	for _, sel := range p.sels {
		var next []any
		for _, n := range nodes {
			got, one, err := sel.apply(n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.raw, err)
			}
			if one {
				next = append(next, got)
			} else {
				next = append(next, got.([]any)...)
				definite = false
			}
		}
		nodes = next
	}
	if definite && len(nodes) == 1 {
		return nodes[0], nil
	}
	if nodes == nil {
		nodes = []any{}
	}
	return nodes, nil
}

// apply returns one value (one=true) or a []any of several.
func (sel selector) apply(v any) (any, bool, error) {
	switch sel.kind {
	case selWildcard:
		switch t := v.(type) {
		case []any:
			return append([]any{}, t...), false, nil
		case *object:
			out := make([]any, 0, len(t.keys))
			for _, k := range t.keys {
				out = append(out, t.vals[k])
			}
			return out, false, nil
		}
		return nil, false, fmt.Errorf("* applies to an object or an array, not %s", typeName(v))
	case selNames:
		o, ok := v.(*object)
		if !ok {
			return nil, false, fmt.Errorf("['%s'] selects a member of an object, but the record here is %s (a CSV record is an array: select its columns by index)", strings.Join(sel.names, "','"), typeName(v))
		}
		for _, n := range sel.names {
			if _, ok := o.vals[n]; !ok {
				return nil, false, fmt.Errorf("the record has no member %q (members: %s)", n, strings.Join(o.keys, ", "))
			}
		}
		if len(sel.names) == 1 {
			return o.vals[sel.names[0]], true, nil
		}
		out := &object{vals: map[string]any{}}
		for _, n := range sel.names {
			out.set(n, o.vals[n])
		}
		return out, true, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, false, fmt.Errorf("an index selects an element of an array, but the record here is %s", typeName(v))
	}
	n := len(arr)
	if len(sel.items) == 1 && !sel.items[0].slice {
		i, err := resolveIndex(sel.items[0].idx, n)
		if err != nil {
			return nil, false, err
		}
		return arr[i], true, nil
	}
	out := []any{}
	for _, it := range sel.items {
		if !it.slice {
			i, err := resolveIndex(it.idx, n)
			if err != nil {
				return nil, false, err
			}
			out = append(out, arr[i])
			continue
		}
		start, last := 0, n-1
		if it.start != nil {
			s, err := resolveIndex(*it.start, n)
			if err != nil {
				return nil, false, err
			}
			start = s
		}
		if it.end != nil {
			e, err := resolveIndex(*it.end, n)
			if err != nil {
				return nil, false, err
			}
			last = e // inclusive, as the developer guide documents
		}
		for i := start; i <= last; i++ {
			out = append(out, arr[i])
		}
	}
	return out, false, nil
}

func resolveIndex(i, n int) (int, error) {
	j := i
	if j < 0 {
		j += n
	}
	if j < 0 || j >= n {
		return 0, fmt.Errorf("index %d is outside the record's %d elements (0..%d)", i, n, n-1)
	}
	return j, nil
}

func typeName(v any) string {
	switch v.(type) {
	case *object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// object is a JSON object that keeps its members' order, so a joined
// record keeps the input's order with SageMakerOutput last.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// decodeJSON decodes one JSON value, keeping numbers as written and
// objects in order.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(kt.(string), v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// encodeJSON writes v compactly, objects in their order.
func encodeJSON(buf *bytes.Buffer, v any) {
	switch t := v.(type) {
	case *object:
		buf.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k)
			buf.WriteByte(':')
			encodeJSON(buf, t.vals[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeJSON(buf, e)
		}
		buf.WriteByte(']')
	case string:
		writeJSONString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	default:
		b, _ := json.Marshal(t)
		buf.Write(b)
	}
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// parseCSVRecord reads one CSV record (RFC 4180) as an array of strings.
func parseCSVRecord(line string) ([]any, error) {
	if strings.TrimSpace(line) == "" {
		return []any{""}, nil
	}
	r := csv.NewReader(strings.NewReader(line))
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("not a CSV record: %v", err)
	}
	if _, err := r.Read(); err != io.EOF {
		return nil, fmt.Errorf("not one CSV record: a record may not hold a line break")
	}
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = f
	}
	return out, nil
}

// formatCSVRecord writes v (an array of fields, or one field) as one CSV
// line without its line break.
func formatCSVRecord(v any) (string, error) {
	var fields []string
	add := func(e any) error {
		switch t := e.(type) {
		case string:
			fields = append(fields, t)
		case json.Number:
			fields = append(fields, t.String())
		case bool:
			fields = append(fields, strconv.FormatBool(t))
		case nil:
			fields = append(fields, "")
		case *object:
			return fmt.Errorf("a CSV record cannot hold an object")
		default:
			var b bytes.Buffer
			encodeJSON(&b, t)
			fields = append(fields, b.String())
		}
		return nil
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if err := add(e); err != nil {
				return "", err
			}
		}
	} else if err := add(v); err != nil {
		return "", err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(fields)
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n"), nil
}
