package registry

import (
	"encoding/json"
	"testing"
)

func TestLeadClause(t *testing.T) {
	for in, want := range map[string]string{
		"Search step types by free text. Ranked and explainable.":                           "Search step types by free text.",
		"Check a step's script against its contract (static analysis): main() and more.":    "Check a step's script against its contract.",
		"Every field, e.g. a default. More.":                                                "Every field, e.g. a default.",
		"Short: a list of things":                                                           "Short: a list of things.",
		"The config constraints of one step type: every field with type, tier and default.": "The config constraints of one step type.",
		"Routing axes and how many strategies each has":                                     "Routing axes and how many strategies each has.",
		"Version 1.2 of the thing; then more":                                               "Version 1.2 of the thing.",
	} {
		if got := leadClause(in); got != want {
			t.Errorf("leadClause(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLeanSchemaKeepsTheShapeOfACall(t *testing.T) {
	var full map[string]any
	_ = json.Unmarshal([]byte(`{"type":"object","additionalProperties":false,"required":["name"],
		"properties":{
			"name":{"type":"string","description":"d","minLength":1,"maxLength":9,"pattern":"^a"},
			"kind":{"type":"string","enum":["a","b"],"default":"a","description":"d"},
			"n":{"type":"integer","minimum":1,"maximum":5},
			"tags":{"type":"array","maxItems":3,"items":{"type":"string","maxLength":4}},
			"values":{"type":"object","additionalProperties":{"type":"number","description":"d"}},
			"one":{"anyOf":[{"type":"string","format":"uri"},true]}}}`), &full)
	got, _ := json.Marshal(LeanSchema(full))
	want := `{"properties":{"kind":{"default":"a","enum":["a","b"],"type":"string"},` +
		`"n":{"maximum":5,"minimum":1,"type":"integer"},"name":{"type":"string"},"one":{"anyOf":[{"type":"string"},true]},` +
		`"tags":{"items":{"type":"string"},"type":"array"},"values":{"additionalProperties":{"type":"number"},"type":"object"}},` +
		`"required":["name"],"type":"object"}`
	if string(got) != want {
		t.Errorf("LeanSchema:\n got %s\nwant %s", got, want)
	}
	if _, ok := full["properties"].(map[string]any)["name"].(map[string]any)["pattern"]; !ok {
		t.Error("LeanSchema changed its argument")
	}
}

func TestLeanAnnotationsLeaveOutOnlyMeaninglessHints(t *testing.T) {
	read := (&ToolDef{Name: "a.b"}).LeanAnnotations()
	if read.ReadOnlyHint == nil || !*read.ReadOnlyHint || read.DestructiveHint != nil || read.IdempotentHint != nil || read.OpenWorldHint == nil || *read.OpenWorldHint {
		t.Errorf("read-only tool hints: %+v", read)
	}
	write := (&ToolDef{Name: "a.b", Destructive: true, Network: true}).LeanAnnotations()
	if *write.ReadOnlyHint || !*write.DestructiveHint || *write.IdempotentHint || !*write.OpenWorldHint {
		t.Errorf("destructive tool hints: %+v", write)
	}
}
