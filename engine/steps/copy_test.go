package steps

import (
	"reflect"
	"strings"
	"testing"
)

// shared reports a path where a and b (equal values) share memory that
// a caller could modify: a pointer, a map, or a slice's backing array.
// Interface's document, file text and load notes are shared on purpose.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Interface:
		if a.IsNil() {
			return ""
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() == 0 {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for j := range a.Len() {
			if p := shared(a.Index(j), b.Index(j), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Map:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for _, k := range a.MapKeys() {
			if p := shared(a.MapIndex(k), b.MapIndex(k), path+"."+k.String()); p != "" {
				return p
			}
		}
	case reflect.Struct:
		for j := range a.NumField() {
			name := a.Type().Field(j).Name
			if a.Type() == reflect.TypeFor[Interface]() && (name == "raw" || name == "text" || name == "unknown" || name == "missing") {
				continue
			}
			if p := shared(a.Field(j), b.Field(j), path+"."+name); p != "" {
				return p
			}
		}
	}
	return ""
}

// Every built-in interface and each of its variants copies to an equal
// value that shares nothing a caller could change.
func TestDeepCopySharesNothing(t *testing.T) {
	cat, _, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	doc := mustParse(t, variantYAML+"  testing:\n    contract:\n      job_arguments: [{flag: --x, source: y}]\n")
	all := []*Interface{doc}
	for _, name := range cat.Names() {
		iface, _ := cat.Get(name)
		all = append(all, iface)
	}
	for _, base := range all {
		for _, jt := range append([]string{""}, base.JobTypes()...) {
			v, _, err := base.WithJobType(jt)
			if err != nil {
				t.Fatal(err)
			}
			c := v.deepCopy()
			if !reflect.DeepEqual(c, v) {
				t.Fatalf("%s/%s: copy differs", base.StepType, jt)
			}
			if p := shared(reflect.ValueOf(c), reflect.ValueOf(v), base.StepType); p != "" {
				t.Fatalf("%s/%s: copy shares %s", base.StepType, jt, p)
			}
		}
	}
}

// A variant is decoded once per file content: the second request is a
// copy of the first, changing that copy changes no later answer, and new
// content under the same file name (a reload, a caller's overlay) is
// decoded afresh.
func TestVariantsDecodedOncePerContent(t *testing.T) {
	base := mustParse(t, variantYAML)
	first, _, err := base.WithJobType("training")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decoded.get(variantKey{base.digest, "training"}); !ok {
		t.Fatal("the training variant was not kept")
	}
	d, _ := first.Spec.Dependencies.Get("input_data")
	d.CompatibleSources[0] = "Changed"
	first.Spec.Dependencies.Set("input_data", d)
	first.Contract.Inputs.Set("added", InputPort{Path: "/x"})
	again, _, _ := base.WithJobType("training")
	if d, _ := again.Spec.Dependencies.Get("input_data"); d.CompatibleSources[0] != "DummyDataLoading" {
		t.Fatalf("a caller's change reached the next copy: %v", d.CompatibleSources)
	}
	if _, ok := again.Contract.Inputs.Get("added"); ok {
		t.Fatal("a caller's added input reached the next copy")
	}
	if again.JobType != "training" || again.Source != base.Source || string(again.Text()) != variantYAML {
		t.Fatalf("copy lost its identity: %q %q", again.JobType, again.Source)
	}

	reloaded := mustParse(t, strings.Replace(variantYAML, "compatible_sources: [DummyDataLoading]", "compatible_sources: [CradleDataLoading]", 1))
	if reloaded.Source != base.Source {
		t.Fatalf("same file expected: %q %q", reloaded.Source, base.Source)
	}
	tr, _, _ := reloaded.WithJobType("training")
	if d, _ := tr.Spec.Dependencies.Get("input_data"); strings.Join(d.CompatibleSources, ",") != "CradleDataLoading" {
		t.Fatalf("new content under the same name gave the old variant: %v", d.CompatibleSources)
	}
	if tr, _, _ := base.WithJobType("training"); tr.Spec.Dependencies.Len() != 2 {
		t.Fatal("the old content's variant is gone")
	}
}

// SharedJobType answers repeat requests with the same interface, equal to
// WithJobType's, and new content with a new one.
func TestSharedJobType(t *testing.T) {
	base := mustParse(t, variantYAML)
	a, _, err := base.SharedJobType("training")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := base.SharedJobType("training")
	if a != b {
		t.Error("a repeat request got another copy")
	}
	if w, _, _ := base.WithJobType("training"); !reflect.DeepEqual(w, a) {
		t.Error("shared variant differs from WithJobType's")
	}
	_, warns, _ := base.SharedJobType("delta")
	_, again, _ := base.SharedJobType("delta")
	if len(warns) != 1 || !reflect.DeepEqual(warns, again) {
		t.Errorf("warnings %v, then %v", warns, again)
	}
	other := mustParse(t, strings.Replace(variantYAML, "compatible_sources: [DummyDataLoading]", "compatible_sources: [Other]", 1))
	c, _, _ := other.SharedJobType("training")
	if d, _ := c.Spec.Dependencies.Get("input_data"); c == a || d.CompatibleSources[0] != "Other" {
		t.Errorf("new content got the old variant: %v", d.CompatibleSources)
	}
}
