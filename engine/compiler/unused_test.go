package compiler

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
)

// TestUnusedFieldsEveryListedField: for every step type named in
// UnusedConfigFields (and one named nowhere), a config holding every
// listed field and a field that is not listed reports exactly the fields
// that apply to its step type, sorted, each with the step type's own
// reason where it has one.
func TestUnusedFieldsEveryListedField(t *testing.T) {
	values := map[string]any{"processing_instance_type": "ml.m5.xlarge"}
	stepTypes := map[string]bool{"TabularPreprocessing": true}
	for k := range UnusedConfigFields {
		st, field, ok := strings.Cut(k, ".")
		if !ok {
			field = k
		} else {
			stepTypes[st] = true
		}
		values[field] = "x"
	}
	for st := range stepTypes {
		var want []string
		for _, field := range slices.Sorted(maps.Keys(values)) {
			if reason, ok := UnusedConfigFields[st+"."+field]; ok {
				want = append(want, field+": "+reason)
			} else if reason, ok := UnusedConfigFields[field]; ok {
				want = append(want, field+": "+reason)
			}
		}
		got := unusedFields(&node{cfg: &config.Config{StepType: st, Values: values}})
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: got %q, want %q", st, got, want)
		}
	}
	if got := unusedFields(&node{cfg: &config.Config{StepType: "XGBoostTraining", Values: map[string]any{"a": 1}}}); got != nil {
		t.Errorf("no listed field: got %q", got)
	}
}
