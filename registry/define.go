package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Define declares a tool once: the input struct is the argument schema,
// the output type is the data of its envelope (the MCP outputSchema), and
// handle is the tool.
//
// The schemas are derived by jsonschema-go from the types. A field of In
// whose json tag has no omitempty is required; its `jsonschema` tag is the
// description. What a Go type cannot say is added with two more tags:
//
//	schema:"minLength=1,maxLength=256,enum=a|b,default=true"  // keywords of the field's own schema
//	pattern:"^[A-Za-z]+$"                                     // the field's pattern (any characters)
//
// A named type that describes itself (a Schemer, such as a node name with
// its pattern) is used wherever it appears, so a shape shared by many
// tools is written once.
//
// The handler returns its whole answer as a value, a Reply: the output
// (the envelope's data) with the next steps, warnings and meta keys that
// go with it. It fails by returning an error, a *ToolError to choose the
// code; the reply beside an error is dropped. This is the one handler form
// (as the MCP go-sdk's typed tool handlers return their result with their
// output); a handler with nothing to say beyond its output is written
// func(ctx, In) (Out, error) and passed through Plain. Nothing travels
// back through ctx: a handler that starts goroutines gathers what they
// find and puts it in its reply itself.
func Define[In, Out any](spec ToolDef, handle func(ctx context.Context, in In) (Reply[Out], error)) ToolDef {
	spec.schemas = &lazySchemas{
		input: sync.OnceValues(func() (map[string]any, error) {
			return derived(&inputSchemas, reflect.TypeFor[In](), inputSchema)
		}),
		data: sync.OnceValues(func() (outputSchemas, error) {
			return derived(&dataSchemas, reflect.TypeFor[Out](), dataSchema)
		}),
	}
	spec.call = func(ctx context.Context, args map[string]any, text []byte) (*Result, error) {
		in, err := bind[In](args, text)
		if err != nil {
			return nil, Errorf(CodeInvalidInput, "invalid arguments for '%s': %v", spec.Name, err)
		}
		reply, err := handle(ctx, in)
		if err != nil {
			return nil, err
		}
		return reply.result(), nil
	}
	return spec
}

// Schemer is a named argument or output type that knows its own JSON
// Schema, for shapes that many tools share.
type Schemer interface {
	JSONSchema() *jsonschema.Schema
}

// Reply is a typed handler's answer: Out is the envelope's data, and the
// rest its next_steps, warnings and meta. Build it field by field or with
// Next, Warn and WithMeta, which append as Result's methods of the same
// names do (not synchronised: one goroutine builds a reply).
type Reply[Out any] struct {
	Out       Out
	NextSteps []NextStep
	Warnings  []string
	// Meta holds the tool's own meta keys; the registry adds meta.tool
	// and meta.duration_ms.
	Meta map[string]any
}

// Next suggests tools to call after this successful call.
func (r *Reply[Out]) Next(steps ...NextStep) { r.NextSteps = append(r.NextSteps, steps...) }

// Warn adds warnings.
func (r *Reply[Out]) Warn(msgs ...string) { r.Warnings = append(r.Warnings, msgs...) }

// WithMeta sets one meta key (a later value for a key wins).
func (r *Reply[Out]) WithMeta(key string, value any) {
	if r.Meta == nil {
		r.Meta = map[string]any{}
	}
	r.Meta[key] = value
}

func (r *Reply[Out]) result() *Result {
	res := OK(r.Out).Next(r.NextSteps...).Warn(r.Warnings...)
	for k, v := range r.Meta {
		res.WithMeta(k, v)
	}
	return res
}

// Plain adapts a handler that answers with its output alone, for Define.
func Plain[In, Out any](handle func(ctx context.Context, in In) (Out, error)) func(context.Context, In) (Reply[Out], error) {
	return func(ctx context.Context, in In) (Reply[Out], error) {
		out, err := handle(ctx, in)
		return Reply[Out]{Out: out}, err
	}
}

// lazySchemas are a tool's schemas, derived from Define's types when they
// are first needed (a listing, a description, the first call's argument
// check) rather than at start-up: answering initialize or /readyz needs
// none. The argument schema and the output schemas are derived apart (a
// call's check needs only the first). Copies of a ToolDef share them.
type lazySchemas struct {
	input func() (map[string]any, error)
	data  func() (outputSchemas, error)
}

var errNotDefined = errors.New("not declared with Define")

func (t *ToolDef) inputSchema() (map[string]any, error) {
	if t.schemas == nil {
		return nil, errNotDefined
	}
	return t.schemas.input()
}

func (t *ToolDef) dataSchemas() (outputSchemas, error) {
	if t.schemas == nil {
		return outputSchemas{}, errNotDefined
	}
	return t.schemas.data()
}

// Schema is the JSON Schema of the tool's arguments: an object schema with
// additionalProperties false, derived from Define's input struct at the
// first need (nil if it cannot be: SchemaError says why).
func (t *ToolDef) Schema() map[string]any {
	s, _ := t.inputSchema()
	return s
}

// OutputSchema is the MCP outputSchema: the envelope, with data's keys and
// their types.
func (t *ToolDef) OutputSchema() map[string]any {
	s, _ := t.dataSchemas()
	return s.output
}

// DataSchema is the whole schema of the envelope's data.
func (t *ToolDef) DataSchema() map[string]any {
	s, _ := t.dataSchemas()
	return s.data
}

// SchemaError says why the tool's schemas could not be derived from its
// types (nil when they were). Registry.CompileSchemas reports it too.
func (t *ToolDef) SchemaError() error {
	if _, err := t.inputSchema(); err != nil {
		return err
	}
	_, err := t.dataSchemas()
	return err
}

// Derived schemas by Go type, kept for the process: tools that share an
// input or output type (every namespace's help tool, for one) share the
// schema maps, derived once. The maps are read-only once derived
// (ToolDef's schemas are never modified by their readers).
var (
	inputSchemas sync.Map // reflect.Type → derivedSchema[map[string]any]
	dataSchemas  sync.Map // reflect.Type → derivedSchema[outputSchemas]
)

type derivedSchema[T any] struct {
	v   T
	err error
}

// derived is the cached schema of t, derived by derive at the first call
// (concurrent first calls may each derive it; one answer is kept).
func derived[T any](cache *sync.Map, t reflect.Type, derive func(reflect.Type) (T, error)) (T, error) {
	if d, ok := cache.Load(t); ok {
		return d.(derivedSchema[T]).v, d.(derivedSchema[T]).err
	}
	v, err := derive(t)
	d, _ := cache.LoadOrStore(t, derivedSchema[T]{v: v, err: err})
	return d.(derivedSchema[T]).v, d.(derivedSchema[T]).err
}

// outputSchemas are the schemas derived from a tool's output type: the
// whole schema of its data and the envelope around it (outputSchema).
type outputSchemas struct{ data, output map[string]any }

func dataSchema(t reflect.Type) (outputSchemas, error) {
	s, err := deriveSchema(t)
	if err != nil {
		return outputSchemas{}, err
	}
	data, err := schemaMap(s)
	if err != nil {
		return outputSchemas{}, err
	}
	return outputSchemas{data: data, output: outputSchema(data)}, nil
}

// inputSchema derives an argument schema: an object that allows no other
// keys. Arguments come from JSON, where an omitted key is how one says
// "none", so the null that jsonschema-go allows for pointers and slices is
// left out.
func inputSchema(t reflect.Type) (map[string]any, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("input type %s is not a struct", t)
	}
	s, err := deriveSchema(t)
	if err != nil {
		return nil, err
	}
	walkSchema(s, func(s *jsonschema.Schema) {
		if len(s.Types) == 2 && s.Types[0] == "null" {
			s.Type, s.Types = s.Types[1], nil
		}
	})
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return schemaMap(s)
}

// outputSchema is the schema of the envelope a tool answers with: data's
// own keys and their types, one level deep. Failures carry no data, so
// only ok is required. The whole data schema (DataSchema) is as long again
// as every tool description together; listed with every tool, it would
// fill each agent's context before its first call, so it is served by
// tools.describe_tool instead.
func outputSchema(data map[string]any) map[string]any {
	env := envelopeSchema()
	env["properties"].(map[string]any)["data"] = shallow(data, 1)
	return env
}

// shallow keeps s's type and enum and, while depth > 0, its required
// keys, closed properties, and its properties and alternatives one level
// shallower.
func shallow(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"type", "enum", "required"} {
		if v, ok := s[k]; ok && (depth > 0 || k != "required") {
			out[k] = v
		}
	}
	if depth == 0 {
		return out
	}
	if s["additionalProperties"] == false {
		out["additionalProperties"] = false
	}
	if props, ok := s["properties"].(map[string]any); ok {
		kept := map[string]any{}
		for name, sub := range props {
			kept[name] = sub // true: any value
			if m, ok := sub.(map[string]any); ok {
				kept[name] = shallow(m, depth-1)
			}
		}
		out["properties"] = kept
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			kept := make([]any, len(alts))
			for i, alt := range alts {
				kept[i] = alt
				if m, ok := alt.(map[string]any); ok {
					kept[i] = shallow(m, depth)
				}
			}
			out[k] = kept
		}
	}
	return out
}

// envelopeSchema is SPEC §2's envelope, data left open. It names only ok
// and data: the other keys are the same for every tool (SPEC §2), and
// spelling them out in each of ~70 output schemas would add tens of
// kilobytes to every tools/list an agent reads.
func envelopeSchema() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"ok"},
		"properties": map[string]any{
			"ok":   map[string]any{"type": "boolean"},
			"data": map[string]any{},
		},
	}
}

// deriveSchema asks jsonschema-go for t's schema, with every Schemer type
// reachable from t described by itself, then applies the schema and
// pattern tags of struct fields.
func deriveSchema(t reflect.Type) (*jsonschema.Schema, error) {
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{}}
	collectSchemers(t, opts.TypeSchemas, map[reflect.Type]bool{})
	s, err := jsonschema.ForType(t, opts)
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s); err != nil {
		return nil, err
	}
	return s, nil
}

var schemerType = reflect.TypeFor[Schemer]()

func collectSchemers(t reflect.Type, into map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	if t.Name() != "" && t.Implements(schemerType) {
		into[t] = reflect.Zero(t).Interface().(Schemer).JSONSchema()
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		collectSchemers(t.Elem(), into, seen)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if f.IsExported() {
				collectSchemers(f.Type, into, seen)
			}
		}
	}
}

// applyTags walks t's struct fields alongside schema s and adds the
// keywords of their schema and pattern tags.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
	default:
		return nil
	}
	if t.Implements(schemerType) {
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		prop := s.Properties[name]
		if prop == nil {
			continue
		}
		if err := applyTags(f.Type, prop); err != nil {
			return err
		}
		if p, ok := f.Tag.Lookup("pattern"); ok {
			prop.Pattern = p
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := applyKeywords(prop, tag); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// applyKeywords reads a schema tag: comma-separated key=value pairs
// (uniqueItems alone means true).
func applyKeywords(s *jsonschema.Schema, tag string) error {
	for _, kv := range strings.Split(tag, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch key {
		case "minLength":
			s.MinLength, err = intPtr(value)
		case "maxLength":
			s.MaxLength, err = intPtr(value)
		case "minItems":
			s.MinItems, err = intPtr(value)
		case "maxItems":
			s.MaxItems, err = intPtr(value)
		case "minProperties":
			s.MinProperties, err = intPtr(value)
		case "maxProperties":
			s.MaxProperties, err = intPtr(value)
		case "minimum":
			s.Minimum, err = floatPtr(value)
		case "maximum":
			s.Maximum, err = floatPtr(value)
		case "uniqueItems":
			s.UniqueItems = true
		case "enum":
			s.Enum = nil
			for _, v := range strings.Split(value, "|") {
				s.Enum = append(s.Enum, v)
			}
		case "default":
			if !json.Valid([]byte(value)) {
				return fmt.Errorf("default %q is not JSON", value)
			}
			s.Default = json.RawMessage(value)
		case "format":
			s.Format = value
		default:
			return fmt.Errorf("unknown schema keyword %q", key)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

func intPtr(v string) (*int, error) {
	n, err := strconv.Atoi(v)
	return &n, err
}

func floatPtr(v string) (*float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	return &f, err
}

func walkSchema(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	walkSchema(s.Items, fn)
	walkSchema(s.AdditionalProperties, fn)
	for _, p := range s.Properties {
		walkSchema(p, fn)
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			walkSchema(sub, fn)
		}
	}
}

// schemaMap turns a derived schema into the plain JSON value the registry
// stores, validates with and serves. An empty additionalProperties (a
// map[string]any) says nothing and is dropped.
func schemaMap(s *jsonschema.Schema) (map[string]any, error) {
	walkSchema(s, func(s *jsonschema.Schema) {
		if a := s.AdditionalProperties; a != nil && reflect.ValueOf(*a).IsZero() {
			s.AdditionalProperties = nil
		}
	})
	v, err := schemaValue(s)
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case bool:
		if v { // the empty schema (an `any`): every value
			return map[string]any{}, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("schema allows no value")
	}
	return nil, err
}
