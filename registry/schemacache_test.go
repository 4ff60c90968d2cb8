package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// cacheIn and cacheOut are used by no other test, so the first Define
// below is the first derivation of their schemas in the process.
type cacheIn struct {
	Name string `json:"name" schema:"minLength=1"`
}

type cacheOut struct {
	Items []struct {
		Key string `json:"key"`
	} `json:"items"`
}

// TestSchemasDerivedOncePerType: tools defined concurrently with the same
// input and output types (as every namespace's help tool is) share one
// derivation of each schema, equal to a derivation of its own; a tool
// with other types gets its own schemas. Run under -race, the concurrent
// first derivations race-free.
func TestSchemasDerivedOncePerType(t *testing.T) {
	handle := Plain(func(context.Context, cacheIn) (cacheOut, error) { return cacheOut{}, nil })
	defs := make([]ToolDef, 8)
	var wg sync.WaitGroup
	for i := range defs {
		wg.Go(func() { defs[i] = Define(ToolDef{Name: "t.cache"}, handle) })
	}
	wg.Wait()
	// The first listings, concurrent too, derive each schema once.
	for i := range defs {
		wg.Go(func() {
			if err := defs[i].SchemaError(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, d := range defs {
		if reflect.ValueOf(d.Schema()).Pointer() != reflect.ValueOf(defs[0].Schema()).Pointer() ||
			reflect.ValueOf(d.DataSchema()).Pointer() != reflect.ValueOf(defs[0].DataSchema()).Pointer() ||
			reflect.ValueOf(d.OutputSchema()).Pointer() != reflect.ValueOf(defs[0].OutputSchema()).Pointer() {
			t.Errorf("tool %d: schemas derived again", i)
		}
	}
	in, err := inputSchema(reflect.TypeFor[cacheIn]())
	if err != nil {
		t.Fatal(err)
	}
	out, err := dataSchema(reflect.TypeFor[cacheOut]())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, defs[0].Schema()) || !reflect.DeepEqual(out.data, defs[0].DataSchema()) || !reflect.DeepEqual(out.output, defs[0].OutputSchema()) {
		t.Error("a shared schema differs from a derivation of its own")
	}
	other := greetTool()
	if reflect.DeepEqual(other.Schema(), defs[0].Schema()) || reflect.DeepEqual(other.DataSchema(), defs[0].DataSchema()) {
		t.Error("a tool of other types got the cached schemas")
	}
}

// lazyIn and lazyOut count their schema derivations (JSONSchema is
// called once for each derivation of a schema that holds them).
var lazyDerivations atomic.Int32

type lazyName string

func (lazyName) JSONSchema() *jsonschema.Schema {
	lazyDerivations.Add(1)
	return &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1)}
}

type lazyIn struct {
	Name lazyName `json:"name"`
}

type lazyOut struct {
	Name lazyName `json:"name"`
}

// TestSchemasDerivedOnFirstListing: building a registry, looking its tools
// up, admitting and checking the policy derive no schema; the first
// listings, concurrent (under -race), derive each once, and list what a
// derivation of its own gives.
func TestSchemasDerivedOnFirstListing(t *testing.T) {
	def := Define(ToolDef{Name: "t.lazy", Description: "d", When: "w", Examples: []string{`t.lazy {"name": "x"}`}},
		Plain(func(_ context.Context, in lazyIn) (lazyOut, error) { return lazyOut(in), nil }))
	r := newReg(t, Options{}, def)
	got, ok := r.Lookup("t.lazy")
	if !ok || len(r.Tools("")) != 1 || len(r.UnknownPolicyNames()) != 0 || !r.Admit(Caller{}, got).Allowed {
		t.Fatal("the registry does not hold t.lazy")
	}
	if n := lazyDerivations.Load(); n != 0 {
		t.Fatalf("%d derivations before any listing", n)
	}
	lists := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range lists {
		wg.Go(func() {
			if i%2 == 0 {
				lists[i], _ = json.Marshal(ExportMCP(r.Tools("")))
			} else {
				lists[i], _ = json.Marshal(ExportMCPLean(r.Tools("")))
			}
		})
	}
	wg.Wait()
	if n := lazyDerivations.Load(); n != 2 {
		t.Fatalf("%d derivations after the first listings, want 2 (input and output)", n)
	}
	for i := range lists {
		if !bytes.Equal(lists[i], lists[i%2]) {
			t.Errorf("listing %d differs from listing %d", i, i%2)
		}
	}
	in, err := inputSchema(reflect.TypeFor[lazyIn]())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(in)
	if listed, _ := json.Marshal(got.Schema()); !bytes.Equal(listed, want) || !bytes.Contains(lists[0], want) {
		t.Errorf("listed schema %s, derived %s", listed, want)
	}
	if res := r.Call(context.Background(), "t.lazy", map[string]any{"name": ""}); res.Code != CodeInvalidInput {
		t.Errorf("the derived schema is not enforced: %s", res.Encode())
	}
}
