package registry

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func schemaOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const variantInput = `{"type":"object","additionalProperties":false,"required":["name"],
	"properties":{
		"name":{"type":"string","maxLength":9},
		"kind":{"type":"string","enum":["a","b"]},
		"size":{"type":"integer","enum":[1,2]},
		"dag":{"type":"object","description":"A DAG.","maxProperties":5},
		"rows":{"type":"array","items":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"extra":{"type":"object"}}}}}}`

func TestStrictSchema(t *testing.T) {
	got, _ := json.Marshal(StrictSchema(schemaOf(t, variantInput)))
	want := `{"additionalProperties":false,"properties":{` +
		`"dag":{"description":"A DAG. Send it as a string holding the JSON object.","type":["string","null"]},` +
		`"kind":{"enum":["a","b",null],"type":["string","null"]},` +
		`"name":{"type":"string"},` +
		`"rows":{"items":{"additionalProperties":false,"properties":{"extra":{"description":"Send it as a string holding the JSON object.","type":["string","null"]},"id":{"type":"string"}},"required":["extra","id"],"type":"object"},"type":["array","null"]},` +
		`"size":{"enum":[1,2,null],"type":["integer","null"]}},` +
		`"required":["dag","kind","name","rows","size"],"type":"object"}`
	if string(got) != want {
		t.Errorf("StrictSchema:\n got %s\nwant %s", got, want)
	}
}

func TestGeminiSchema(t *testing.T) {
	got, _ := json.Marshal(GeminiSchema(schemaOf(t, variantInput)))
	want := `{"properties":{` +
		`"dag":{"description":"A DAG. Send it as a string holding the JSON object.","type":"STRING"},` +
		`"kind":{"enum":["a","b"],"format":"enum","type":"STRING"},` +
		`"name":{"maxLength":9,"type":"STRING"},` +
		`"rows":{"items":{"properties":{"extra":{"description":"Send it as a string holding the JSON object.","type":"STRING"},"id":{"type":"STRING"}},"required":["id"],"type":"OBJECT"},"type":"ARRAY"},` +
		`"size":{"description":"One of [1,2].","type":"INTEGER"}},` +
		`"required":["name"],"type":"OBJECT"}`
	if string(got) != want {
		t.Errorf("GeminiSchema:\n got %s\nwant %s", got, want)
	}
	if g := GeminiSchema(schemaOf(t, `{"type":"object","properties":{}}`)); g != nil {
		t.Errorf("no arguments: %v, want no parameters", g)
	}
}

func TestFromVariantArgs(t *testing.T) {
	s := schemaOf(t, variantInput)
	got, err := FromVariantArgs(s, map[string]any{
		"name": "n", "kind": nil, "size": nil, "dag": `{"nodes":["A"]}`,
		"rows":  []any{map[string]any{"id": "x", "extra": `{"k":1}`}, map[string]any{"id": "y", "extra": nil}},
		"other": nil, // not a property: left for validation to refuse
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "n", "dag": map[string]any{"nodes": []any{"A"}},
		"rows":  []any{map[string]any{"id": "x", "extra": map[string]any{"k": float64(1)}}, map[string]any{"id": "y"}},
		"other": nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromVariantArgs:\n got %#v\nwant %#v", got, want)
	}
	// A required property's null stays for validation to refuse.
	if got, _ := FromVariantArgs(s, map[string]any{"name": nil}); !reflect.DeepEqual(got, map[string]any{"name": nil}) {
		t.Errorf("required null: %v", got)
	}
	if _, err := FromVariantArgs(s, map[string]any{"rows": []any{map[string]any{"extra": "{"}}}); err == nil || !strings.Contains(err.Error(), "/rows/0/extra") {
		t.Errorf("bad JSON string: %v", err)
	}
}
