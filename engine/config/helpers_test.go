package config

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

// fixtureCatalog is a minimal Catalog over parsed step files.
type fixtureCatalog map[string]*steps.Interface

func (c fixtureCatalog) Names() []string {
	var out []string
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c fixtureCatalog) Get(name string) (*steps.Interface, bool) {
	i, ok := c[name]
	return i, ok
}

func loadFixtureCatalog(t testing.TB) fixtureCatalog {
	t.Helper()
	files, err := filepath.Glob("testdata/steps/*.step.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no step fixtures: %v", err)
	}
	cat := fixtureCatalog{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		iface, err := steps.Parse(f, data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cat[iface.StepType] = iface
	}
	return cat
}

func fixtureSchemas(t testing.TB) *Schemas {
	t.Helper()
	s, err := LoadSchemas(loadFixtureCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Problems(); len(p) > 0 {
		t.Fatalf("fixture schema problems: %v", p)
	}
	return s
}

// validBase is a complete set of base essentials.
func validBase() map[string]any {
	return map[string]any{
		"author":           "jane",
		"bucket":           "my-bucket",
		"role":             "arn:aws:iam::123456789012:role/SageMakerRole",
		"region":           "NA",
		"service_name":     "fraud",
		"pipeline_version": "1.0.0",
	}
}

func kinds(ps []Problem) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		out[p.Field] = p.Kind
	}
	return out
}

func fieldOf(typ string, lo, hi *float64) steps.Field {
	return steps.Field{Type: typ, Tier: steps.TierEssential, Minimum: lo, Maximum: hi}
}
