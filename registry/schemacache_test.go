package registry

import (
	"context"
	"reflect"
	"sync"
	"testing"
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
	for i, d := range defs {
		if d.defineErr != nil {
			t.Fatal(d.defineErr)
		}
		if reflect.ValueOf(d.Schema).Pointer() != reflect.ValueOf(defs[0].Schema).Pointer() ||
			reflect.ValueOf(d.DataSchema).Pointer() != reflect.ValueOf(defs[0].DataSchema).Pointer() ||
			reflect.ValueOf(d.OutputSchema).Pointer() != reflect.ValueOf(defs[0].OutputSchema).Pointer() {
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
	if !reflect.DeepEqual(in, defs[0].Schema) || !reflect.DeepEqual(out.data, defs[0].DataSchema) || !reflect.DeepEqual(out.output, defs[0].OutputSchema) {
		t.Error("a shared schema differs from a derivation of its own")
	}
	other := greetTool()
	if reflect.DeepEqual(other.Schema, defs[0].Schema) || reflect.DeepEqual(other.DataSchema, defs[0].DataSchema) {
		t.Error("a tool of other types got the cached schemas")
	}
}
