package steps_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

// FuzzParseInterface feeds arbitrary bytes to the step interface YAML
// loader. It must reject bad input with a *LoadError that names the file and
// carries at least one finding, and whatever it accepts must validate
// without panicking.
//
//	go test -run=^$ -fuzz=FuzzParseInterface -fuzztime=10m ./engine/steps
func FuzzParseInterface(f *testing.F) {
	files, _ := filepath.Glob("catalog/*.step.yaml")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	for _, seed := range []string{
		"step_type: X\n",
		"step_type: [a, b]\n",
		"- a\n- b\n",
		"a: &x [*x]\n",
		"contract:\n  inputs: yes\n",
		"step_type: X\nconfig:\n  fields:\n    f: {type: string, tier: essential}\n",
		"",
		"\t",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		iface, err := steps.Parse("fuzz.step.yaml", data)
		if err != nil {
			le, ok := err.(*steps.LoadError)
			if !ok {
				t.Fatalf("error is %T, want *steps.LoadError: %v", err, err)
			}
			if le.File != "fuzz.step.yaml" || len(le.Findings) == 0 {
				t.Fatalf("load error does not name the file or has no findings: %+v", le)
			}
			return
		}
		if iface == nil {
			t.Fatal("Parse returned neither an interface nor an error")
		}
		for _, finding := range steps.Validate(iface) {
			if finding.Message == "" || finding.Rule == "" {
				t.Fatalf("finding without rule or message: %+v", finding)
			}
		}
	})
}
