package registry

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type nodeName string

func (nodeName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^[A-Z]"}
}

type defineIn struct {
	Name   string              `json:"name" jsonschema:"Who to greet." schema:"minLength=1,maxLength=8"`
	Mode   string              `json:"mode,omitempty" schema:"enum=loud|quiet,default=\"quiet\""`
	ID     string              `json:"id,omitempty" pattern:"^[a-z]{1,3}$"`
	Count  *int                `json:"count,omitempty" schema:"minimum=0,maximum=3"`
	Nodes  []nodeName          `json:"nodes,omitempty" schema:"maxItems=2"`
	Edges  [][2]nodeName       `json:"edges,omitempty"`
	Values map[string]any      `json:"values,omitempty"`
	Nested struct{ On bool }   `json:"nested,omitzero"`
	Labels map[string]nodeName `json:"labels,omitempty"`
}

type defineOut struct {
	Greeting string   `json:"greeting"`
	Tags     []string `json:"tags"`
	Detail   struct {
		Depth int `json:"depth"`
	} `json:"detail"`
}

func greetTool() ToolDef {
	return Define(ToolDef{Name: "t.greet", Description: "d", When: "w", Examples: []string{`t.greet {"name": "x"}`}},
		func(ctx context.Context, in defineIn) (Reply[defineOut], error) {
			reply := Reply[defineOut]{Warnings: []string{"w0"}}
			if in.Name == "fail" {
				reply.Warn("dropped with the error")
				return reply, Errorf(CodeValidationFailed, "no")
			}
			reply.Warn("w1")
			reply.WithMeta("n", len(in.Nodes))
			reply.Next(NextStep{Tool: "t.greet", When: "again", Why: "why"})
			reply.Out = defineOut{Greeting: "hi " + in.Name}
			return reply, nil
		})
}

func TestDefineDerivesTheInputSchema(t *testing.T) {
	def := greetTool()
	got, _ := json.Marshal(def.Schema())
	want := `{"additionalProperties":false,"properties":{` +
		`"count":{"maximum":3,"minimum":0,"type":"integer"},` +
		`"edges":{"items":{"items":{"pattern":"^[A-Z]","type":"string"},"maxItems":2,"minItems":2,"type":"array"},"type":"array"},` +
		`"id":{"pattern":"^[a-z]{1,3}$","type":"string"},` +
		`"labels":{"additionalProperties":{"pattern":"^[A-Z]","type":"string"},"type":"object"},` +
		`"mode":{"default":"quiet","enum":["loud","quiet"],"type":"string"},` +
		`"name":{"description":"Who to greet.","maxLength":8,"minLength":1,"type":"string"},` +
		`"nested":{"additionalProperties":false,"properties":{"On":{"type":"boolean"}},"required":["On"],"type":"object"},` +
		`"nodes":{"items":{"pattern":"^[A-Z]","type":"string"},"maxItems":2,"type":"array"},` +
		`"values":{"type":"object"}},` +
		`"required":["name"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
}

func TestDefineOutputSchemaIsTheEnvelope(t *testing.T) {
	greet := greetTool()
	out := greet.OutputSchema()
	props := out["properties"].(map[string]any)
	data := props["data"].(map[string]any)
	if out["type"] != "object" || !reflect.DeepEqual(out["required"], []any{"ok"}) {
		t.Fatalf("envelope = %v", out)
	}
	if !reflect.DeepEqual(data["required"], []any{"greeting", "tags", "detail"}) || data["additionalProperties"] != false {
		t.Fatalf("data = %v", data)
	}
	// Listed: data's keys and their types; the nesting only in DataSchema.
	if detail := data["properties"].(map[string]any)["detail"]; !reflect.DeepEqual(detail, map[string]any{"type": "object"}) {
		t.Fatalf("listed detail = %v", detail)
	}
	full := greet.DataSchema()["properties"].(map[string]any)["detail"].(map[string]any)
	if !reflect.DeepEqual(full["required"], []any{"depth"}) {
		t.Fatalf("full detail = %v", full)
	}
	// Output slices may be null (a nil slice encodes so).
	if tags := data["properties"].(map[string]any)["tags"].(map[string]any); !reflect.DeepEqual(tags["type"], []any{"null", "array"}) {
		t.Fatalf("tags = %v", tags)
	}
}

func TestDefineRunsTheTypedHandler(t *testing.T) {
	r := newReg(t, Options{}, greetTool())
	res := r.Call(context.Background(), "t.greet", map[string]any{"name": "Ann", "nodes": []any{"A"}})
	body := string(res.Encode())
	for _, want := range []string{`"greeting":"hi Ann"`, `"warnings":["w0","w1"]`, `"n":1`, `"next_steps":[{"tool":"t.greet"`} {
		if !strings.Contains(body, want) {
			t.Errorf("envelope lacks %s: %s", want, body)
		}
	}
	if res := r.Call(context.Background(), "t.greet", map[string]any{"name": "fail"}); res.Code != CodeValidationFailed || len(res.Warnings) != 0 {
		t.Errorf("tool error = %s, want the error without the reply's warnings", res.Encode())
	}
	if res := r.Call(context.Background(), "t.greet", map[string]any{"name": "Ann", "count": 9.0}); res.Code != CodeInvalidInput {
		t.Errorf("tag constraint not enforced: %s", res.Encode())
	}
}

func TestDefineReportsBadTags(t *testing.T) {
	type bad struct {
		X string `json:"x" schema:"minLenght=1"`
	}
	def := Define(ToolDef{Name: "t.bad", Description: "d", When: "w", Examples: []string{"t.bad {}"}},
		Plain(func(context.Context, bad) (struct{}, error) { return struct{}{}, nil }))
	if err := def.SchemaError(); err == nil || !strings.Contains(err.Error(), `unknown schema keyword "minLenght"`) {
		t.Fatalf("SchemaError = %v", err)
	}
	if def.Schema() != nil {
		t.Error("an argument schema beside its derivation error")
	}
	// The registry refuses every call to it, and CompileSchemas (which
	// the handler tests run over every tool) names it.
	r, err := New(Options{}, func() (Namespace, error) {
		return Namespace{Name: "t", Description: "d", Tools: []ToolDef{def}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Call(context.Background(), "t.bad", map[string]any{"x": "y"}); res.OK || !strings.Contains(string(res.Encode()), "minLenght") {
		t.Errorf("call = %s", res.Encode())
	}
	if err := r.CompileSchemas(); err == nil || !strings.Contains(err.Error(), "t.bad") || !strings.Contains(err.Error(), "minLenght") {
		t.Errorf("CompileSchemas = %v", err)
	}
}

// A typed tool binds from the JSON text the front end holds, where the
// decoded arguments have lost what float64 cannot carry, and falls back to
// the arguments for a number the schema calls an integer but the decoder
// does not take as one.
func TestCallJSONBindsFromTheText(t *testing.T) {
	type bigIn struct {
		ID    int64 `json:"id"`
		Count int   `json:"count,omitempty"`
	}
	var got bigIn
	r, err := New(Options{}, func() (Namespace, error) {
		return Namespace{Name: "b", Description: "bench", Tools: []ToolDef{Define(ToolDef{
			Name: "b.ids", Description: "test tool", When: "in tests", Examples: []string{`b.ids {"id": 1}`}, Tags: []string{PhasePlanner},
		}, Plain(func(_ context.Context, in bigIn) (any, error) { got = in; return nil, nil }))}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(text string, viaText bool) bigIn {
		t.Helper()
		args, bad := DecodeArgs([]byte(text))
		if bad != nil {
			t.Fatal(bad.Error)
		}
		got = bigIn{}
		var res *Result
		if viaText {
			res = r.CallJSON(context.Background(), "b.ids", args, []byte(text))
		} else {
			res = r.Call(context.Background(), "b.ids", args)
		}
		if !res.OK {
			t.Fatalf("%s: %s", text, res.Encode())
		}
		return got
	}
	const exact = `{"id": 9007199254740993}` // 2^53 + 1: no float64 holds it
	if in := call(exact, true); in.ID != 9007199254740993 {
		t.Errorf("from the text: id = %d, want 9007199254740993", in.ID)
	}
	if in := call(exact, false); in.ID != 9007199254740992 {
		t.Errorf("from the arguments: id = %d, want the float64 rounding 9007199254740992", in.ID)
	}
	if in := call(`{"id": 1, "count": 5.0}`, true); in.Count != 5 || in.ID != 1 {
		t.Errorf("count 5.0 from the text: got %+v, want id 1 and count 5", in)
	}
}
