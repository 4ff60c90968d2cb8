package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

// TestEveryResourceValueReads: every value a template lists (what
// resources/list and completion offer) reads, JSON resources decode, and
// the step type listing names exactly the step type template's values.
func TestEveryResourceValueReads(t *testing.T) {
	d := testDeps(t)
	ctx := context.Background()
	open := func(string) bool { return true }
	byURI := map[string]registry.Resource{}
	for _, r := range Resources(d) {
		byURI[r.URI] = r
		values := []string{""}
		if r.Variable() != "" {
			values = r.Values(ctx)
			if len(values) == 0 {
				t.Errorf("%s lists no values", r.URI)
			}
		}
		for _, v := range values {
			text, err := r.Read(ctx, v, open)
			if err != nil || text == "" {
				t.Errorf("%s: %v, %d bytes", r.Expand(v), err, len(text))
				continue
			}
			if strings.HasSuffix(r.MIMEType, "json") && !json.Valid([]byte(text)) {
				t.Errorf("%s (%s) is not JSON", r.Expand(v), r.MIMEType)
			}
		}
	}
	listing, err := byURI["cursus://steps"].Read(ctx, "", open)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		StepTypes []struct {
			StepType string `json:"step_type"`
		} `json:"step_types"`
	}
	if err := json.Unmarshal([]byte(listing), &doc); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range doc.StepTypes {
		listed = append(listed, s.StepType)
	}
	if want := byURI["cursus://steps/{step_type}"].Values(ctx); !slices.Equal(listed, want) {
		t.Errorf("cursus://steps lists %v, the template has %v", listed, want)
	}
}
