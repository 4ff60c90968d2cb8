package steps

import "testing"

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
