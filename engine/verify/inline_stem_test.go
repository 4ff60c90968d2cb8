package verify

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

// A step interface sent as text has no file name: checking one draws no
// "file stem" warning, while a file whose stem does not name its step
// still does.
func TestInlineYAMLDrawsNoFileStemWarning(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	iface, _ := cat.Get("TabularPreprocessing")
	s := &Suite{Steps: cat}
	stem := func(source string) bool {
		c := *iface
		c.Source = source
		for _, w := range s.CheckInterface(&c, "").Warnings {
			if strings.Contains(w.Message, "file stem") {
				return true
			}
		}
		return false
	}
	for _, src := range []string{steps.InlineSource, steps.OverlaySource(0)} {
		if stem(src) {
			t.Errorf("source %s draws a file stem warning", src)
		}
	}
	if !stem("steps/other_name.step.yaml") {
		t.Error("a file whose stem does not name its step draws no warning")
	}
}
