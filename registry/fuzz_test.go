package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"unicode/utf8"
)

var fuzzIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// fuzzTool has a schema with every kind of constraint handlers rely on. Its
// handler re-checks each constraint by hand and reports a violation as an
// internal error, so an argument the validator let through wrongly fails
// the fuzz target.
func fuzzTool() ToolDef {
	return ToolDef{
		Name: "fz.check", Description: "Checks its own arguments.", When: "In fuzz tests.",
		Examples: []string{`fz.check {"id": "a"}`}, Tags: []string{PhasePlanner},
		Schema: Object(map[string]any{
			"id":    map[string]any{"type": "string", "pattern": fuzzIDPattern.String(), "maxLength": 16},
			"count": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
			"mode":  Enum("a mode", "fast", "slow"),
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 3},
			"opts": map[string]any{"type": "object", "additionalProperties": false,
				"properties": map[string]any{"deep": Boolean("a flag")}},
		}, "id"),
		Handler: func(_ context.Context, req Request) (*Result, error) {
			var args struct {
				ID    *string         `json:"id"`
				Count *json.Number    `json:"count"`
				Mode  *string         `json:"mode"`
				Tags  []string        `json:"tags"`
				Opts  map[string]bool `json:"opts"`
			}
			if err := req.Bind(&args); err != nil {
				return nil, fmt.Errorf("validated arguments do not bind: %w", err)
			}
			switch {
			case args.ID == nil || !fuzzIDPattern.MatchString(*args.ID) || utf8.RuneCountInString(*args.ID) > 16:
				return nil, fmt.Errorf("bad id passed validation: %v", args.ID)
			case args.Mode != nil && *args.Mode != "fast" && *args.Mode != "slow":
				return nil, fmt.Errorf("bad mode passed validation: %q", *args.Mode)
			case len(args.Tags) > 3:
				return nil, fmt.Errorf("%d tags passed validation", len(args.Tags))
			}
			if args.Count != nil {
				n, err := args.Count.Int64()
				if err != nil || n < 1 || n > 100 {
					return nil, fmt.Errorf("bad count passed validation: %v", *args.Count)
				}
			}
			for k := range args.Opts {
				if k != "deep" {
					return nil, fmt.Errorf("unknown option %q passed validation", k)
				}
			}
			return OK(map[string]any{"id": *args.ID}), nil
		},
	}
}

// FuzzCallArguments sends arbitrary JSON bodies through DecodeArgs and
// Registry.Call, the path every front end uses. Every outcome must be ok or
// invalid_input (never internal_error), the envelope must be valid JSON, and
// the same arguments must always give the same answer.
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
	})
}
