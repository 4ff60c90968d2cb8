package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cursus-dev/cursus/internal/verbatim"
)

// ArgError is one schema violation.
type ArgError struct {
	Pointer string // JSON pointer into the arguments ("" = the object itself)
	Message string
}

type validator struct {
	schema *jsonschema.Schema
}

var printer = message.NewPrinter(language.English)

func compileSchema(tool string, schema map[string]any) (*validator, error) {
	// The compiler wants plain JSON values, which a derived schema already
	// is (schemaValue); a schema written by hand ([]string and so on) is
	// normalised through JSON first.
	var doc any = schema
	if !plainJSON(schema, 0) {
		var err error
		doc, err = jsonschema.UnmarshalJSON(strings.NewReader(string(mustJSON(schema))))
		if err != nil {
			return nil, fmt.Errorf("tool %q: schema: %w", tool, err)
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "cursus:///" + tool + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", tool, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", tool, err)
	}
	return &validator{schema: s}, nil
}

func mustJSON(v any) []byte {
	b, err := verbatim.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// validate returns one message per violation, sorted by pointer then
// message, so the same bad input always reads the same way.
func (v *validator) validate(args map[string]any) []ArgError {
	// The validator wants plain JSON values. Arguments decoded by
	// encoding/json (every front end) already are; in-process callers may
	// pass other Go types, which are normalised through JSON first.
	var doc any = args
	if !plainJSON(args, 0) {
		var err error
		doc, err = jsonschema.UnmarshalJSON(strings.NewReader(string(mustJSON(args))))
		if err != nil {
			return []ArgError{{Message: "arguments are not valid JSON: " + err.Error()}}
		}
	}
	err := v.schema.Validate(doc)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []ArgError{{Message: err.Error()}}
	}
	var out []ArgError
	collect(ve, &out)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pointer != out[j].Pointer {
			return out[i].Pointer < out[j].Pointer
		}
		return out[i].Message < out[j].Message
	})
	return dedupe(out)
}

func collect(e *jsonschema.ValidationError, out *[]ArgError) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, out)
		}
		return
	}
	ptr := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, ArgError{Pointer: ptr + "/" + m, Message: fmt.Sprintf("missing required argument '%s'", joinName(e.InstanceLocation, m))})
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, ArgError{Pointer: ptr + "/" + p, Message: fmt.Sprintf("unknown argument '%s'", joinName(e.InstanceLocation, p))})
		}
	default:
		name := "arguments"
		if len(e.InstanceLocation) > 0 {
			name = "argument '" + strings.Join(e.InstanceLocation, ".") + "'"
		}
		*out = append(*out, ArgError{Pointer: ptr, Message: name + ": " + e.ErrorKind.LocalizedString(printer)})
	}
}

func joinName(loc []string, leaf string) string {
	return strings.Join(append(append([]string{}, loc...), leaf), ".")
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, p := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

func dedupe(in []ArgError) []ArgError {
	out := in[:0]
	for i, e := range in {
		if i > 0 && e == in[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// plainJSON reports whether v holds only the types encoding/json decodes
// into. Values nested deeper than maxPlainDepth are treated as not plain
// (normalised through JSON), which also bounds this walk.
func plainJSON(v any, depth int) bool {
	if depth > maxPlainDepth {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool, float64:
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

const maxPlainDepth = 64
