package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// fuzzIDPattern is fuzzIn.ID's pattern, re-checked by the handler.
var fuzzIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// fuzzIn has every kind of constraint handlers rely on.
type fuzzIn struct {
	ID    string   `json:"id" pattern:"^[a-z][a-z0-9_]*$" schema:"maxLength=16"`
	Count *fuzzInt `json:"count,omitempty"`
	Mode  string   `json:"mode,omitempty" jsonschema:"a mode" schema:"enum=fast|slow"`
	Tags  []string `json:"tags,omitempty" schema:"maxItems=3"`
	Opts  fuzzOpts `json:"opts,omitempty"`
}

// fuzzInt is an integer from 1 to 100, decoded as a float so that a
// fraction the validator let through reaches the handler.
type fuzzInt float64

func (fuzzInt) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Minimum: ptr(1.0), Maximum: ptr(100.0)}
}

// fuzzOpts allows only "deep"; a map, so that any other key the validator
// let through reaches the handler.
type fuzzOpts map[string]bool

func (fuzzOpts) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{"deep": {Type: "boolean", Description: "a flag"}}}
}

func ptr[T any](v T) *T { return &v }

// fuzzTool's handler re-checks each constraint by hand and reports a
// violation as an internal error, so an argument the validator let
// through wrongly fails the fuzz target.
func fuzzTool() ToolDef {
	return Define(ToolDef{
		Name: "fz.check", Description: "Checks its own arguments.", When: "In fuzz tests.",
		Examples: []string{`fz.check {"id": "a"}`}, Tags: []string{PhasePlanner},
	}, Plain(func(_ context.Context, in fuzzIn) (map[string]any, error) {
		switch {
		case !fuzzIDPattern.MatchString(in.ID) || utf8.RuneCountInString(in.ID) > 16:
			return nil, fmt.Errorf("bad id passed validation: %q", in.ID)
		case in.Mode != "" && in.Mode != "fast" && in.Mode != "slow":
			return nil, fmt.Errorf("bad mode passed validation: %q", in.Mode)
		case len(in.Tags) > 3:
			return nil, fmt.Errorf("%d tags passed validation", len(in.Tags))
		case in.Count != nil && (*in.Count < 1 || *in.Count > 100 || *in.Count != fuzzInt(math.Trunc(float64(*in.Count)))):
			return nil, fmt.Errorf("bad count passed validation: %v", *in.Count)
		}
		for k := range in.Opts {
			if k != "deep" {
				return nil, fmt.Errorf("unknown option %q passed validation", k)
			}
		}
		return map[string]any{"id": in.ID, "count": in.Count, "mode": in.Mode, "tags": in.Tags, "opts": in.Opts}, nil
	}))
}

// FuzzCallArguments sends arbitrary JSON bodies through DecodeArgs and
// Registry.Call, the path every front end uses. Every outcome must be ok or
// invalid_input (never internal_error), the envelope must be valid JSON, and
// the same arguments must always give the same answer, whether the input is
// bound from the arguments (MCP) or from the body (REST, CallJSON).
//
//	go test -run=^$ -fuzz=FuzzCallArguments -fuzztime=10m ./registry
func FuzzCallArguments(f *testing.F) {
	r, err := New(Options{}, func() (Namespace, error) {
		return Namespace{Name: "fz", Description: "fuzz namespace", Tools: []ToolDef{fuzzTool()}}, nil
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"id":"a"}`,
		`{"id":"abc_1","count":100,"mode":"slow","tags":["x","y"],"opts":{"deep":true}}`,
		`{"id":"A"}`, `{"id":"a","count":0}`, `{"id":"a","count":1.5}`, `{"id":"a","count":1e2}`,
		`{"id":"a","mode":"medium"}`, `{"id":"a","tags":["1","2","3","4"]}`, `{"id":"a","opts":{"x":1}}`,
		`{"id":"a","extra":null}`, `{"id":"aaaaaaaaaaaaaaaaa"}`, `{"id":"\u00e9"}`, `{"id":"a\n"}`,
		`{}`, `[]`, `null`, `"x"`, `{"id":"a"} {}`, `{"id":`, ``, `   `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		call := func() *Result {
			args, bad := DecodeArgs(body)
			if bad != nil {
				return bad
			}
			return r.Call(context.Background(), "fz.check", args)
		}
		res := call()
		if !res.OK && res.Code != CodeInvalidInput {
			t.Fatalf("body %q: code %s: %s", body, res.Code, res.Error)
		}
		wire := res.Encode()
		var env map[string]any
		if err := json.Unmarshal(wire, &env); err != nil || env["ok"] != res.OK {
			t.Fatalf("envelope is not valid JSON or disagrees on ok: %v\n%s", err, wire)
		}
		again := call()
		if again.OK != res.OK || again.Code != res.Code || again.Error != res.Error ||
			!reflect.DeepEqual(again.Meta["details"], res.Meta["details"]) {
			t.Fatalf("body %q: two calls disagree:\n%s\n%s", body, wire, again.Encode())
		}
		if args, bad := DecodeArgs(body); bad == nil {
			fromText := r.CallJSON(context.Background(), "fz.check", args, body)
			if fromText.OK != res.OK || fromText.Code != res.Code || !reflect.DeepEqual(fromText.Data, res.Data) {
				t.Fatalf("body %q: binding from the body disagrees:\n%s\n%s", body, wire, fromText.Encode())
			}
		}
	})
}
