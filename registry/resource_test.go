package registry

import "testing"

// TestResourceMatch: a template matches one path segment, a fixed URI
// only itself.
func TestResourceMatch(t *testing.T) {
	tpl := Resource{URI: "cursus://steps/{step_type}"}
	for uri, want := range map[string]string{"cursus://steps/XGBoostTraining": "XGBoostTraining"} {
		if got, ok := tpl.Match(uri); !ok || got != want {
			t.Errorf("Match(%s) = %q %v", uri, got, ok)
		}
	}
	for _, uri := range []string{"cursus://steps/", "cursus://steps", "cursus://steps/a/b", "cursus://steps/a?x", "cursus://dags/a"} {
		if got, ok := tpl.Match(uri); ok {
			t.Errorf("Match(%s) = %q, want no match", uri, got)
		}
	}
	fixed := Resource{URI: "cursus://steps"}
	if _, ok := fixed.Match("cursus://steps"); !ok {
		t.Error("a fixed URI does not match itself")
	}
	if _, ok := fixed.Match("cursus://steps/x"); ok {
		t.Error("a fixed URI matches another")
	}
	if tpl.Variable() != "step_type" || tpl.Expand("X") != "cursus://steps/X" || fixed.Variable() != "" {
		t.Errorf("Variable %q, Expand %q", tpl.Variable(), tpl.Expand("X"))
	}
}
