package steps

import (
	"strings"
	"testing"
)

// Cursus files write some compatible sources with the producer's job type.
func TestSourceStepType(t *testing.T) {
	for in, want := range map[string]string{
		"MissingValueImputation_Training": "MissingValueImputation",
		"TabularPreprocessing-Training":   "TabularPreprocessing",
		"RiskTableMapping":                "RiskTableMapping",
		"ProcessingStep":                  "ProcessingStep",
		"_odd":                            "_odd",
	} {
		if got := SourceStepType(in); got != want {
			t.Errorf("SourceStepType(%q) = %q, want %q", in, got, want)
		}
	}
}

// CanonicalKey's ASCII path gives what lower-casing and keeping letters
// and digits gives, for every byte; non-ASCII names keep the full rules.
func TestCanonicalKeyASCII(t *testing.T) {
	slow := func(name string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(name) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	var all []byte
	for c := 0; c < 0x80; c++ {
		all = append(all, byte(c))
	}
	for _, name := range []string{string(all), "XGBoostTraining_calibration", "tabularpreprocessing", "", "A-b.C 9",
		"\u212Aelvin", "Straße_Ünit"} {
		if got, want := CanonicalKey(name), slow(name); got != want {
			t.Errorf("CanonicalKey(%q) = %q, want %q", name, got, want)
		}
	}
}
