package finding

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{Finding{Level: Error, File: "a.step.yaml", Path: "spec.outputs", Rule: "required", Message: "missing"}, "error: a.step.yaml: spec.outputs [required]: missing"},
		{Finding{Level: Warning, Path: "spec", Rule: "unknown_key", Message: "unknown"}, "warning: spec [unknown_key]: unknown"},
		{Finding{Level: Error, File: "a.step.yaml", Rule: "yaml_syntax", Message: "bad"}, "error: a.step.yaml [yaml_syntax]: bad"},
		{Finding{File: "dags/x.dag.json", Path: "metadata", Rule: "metadata", Message: "bad"}, "dags/x.dag.json: metadata [metadata]: bad"},
		{Finding{File: "dags/x.dag.json", Rule: "json", Message: "bad"}, "dags/x.dag.json [json]: bad"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.f, got, c.want)
		}
	}
}

// The wire shape: a level only when set, a file only when set, the key
// path always, in this order.
func TestJSON(t *testing.T) {
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{Finding{Level: Error, File: "a", Path: "p", Rule: "r", Message: "m"}, `{"level":"error","file":"a","path":"p","rule":"r","message":"m"}`},
		{Finding{File: "a", Rule: "r", Message: "m"}, `{"file":"a","path":"","rule":"r","message":"m"}`},
		{Finding{Level: Warning, Path: "p", Rule: "r", Message: "m"}, `{"level":"warning","path":"p","rule":"r","message":"m"}`},
	} {
		b, err := json.Marshal(c.f)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: got %s (%v), want %s", c.f, b, err, c.want)
		}
	}
}

func TestLevels(t *testing.T) {
	levels := []Level{Info, "", Warning, Critical, Error}
	slices.SortStableFunc(levels, CompareLevels) // Info and "" rank alike
	if want := []Level{Critical, Error, Warning, Info, ""}; !slices.Equal(levels, want) {
		t.Errorf("sorted %v, want %v", levels, want)
	}
	for l, want := range map[Level]bool{Critical: true, Error: true, Warning: false, Info: false, "": false} {
		if got := (Finding{Level: l}).Blocking(); got != want {
			t.Errorf("%q blocking = %v, want %v", l, got, want)
		}
	}
	if AnyBlocking([]Finding{{Level: Warning}, {Level: Info}}) || !AnyBlocking([]Finding{{Level: Warning}, {Level: Critical}}) {
		t.Error("AnyBlocking does not follow Blocking")
	}
}
