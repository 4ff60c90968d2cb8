package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/steps"
)

// stepFiles is a config.Catalog over the fixture step files in testdata.
type stepFiles map[string]*steps.Interface

func (c stepFiles) Names() []string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c stepFiles) Get(name string) (*steps.Interface, bool) { i, ok := c[name]; return i, ok }

func fuzzSchemas(f *testing.F) *config.Schemas {
	f.Helper()
	files, err := filepath.Glob("testdata/steps/*.step.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no step fixtures: %v", err)
	}
	cat := stepFiles{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		iface, err := steps.Parse(name, data)
		if err != nil {
			f.Fatal(err)
		}
		cat[iface.StepType] = iface
	}
	s, err := config.LoadSchemas(cat)
	if err != nil {
		f.Fatal(err)
	}
	return s
}

// FuzzParseConfig feeds arbitrary bytes to the config.json loader. Bad input
// must be a *LoadError; a file it accepts must save and load back to the
// same configs with byte-identical output.
//
//	go test -run=^$ -fuzz=FuzzParseConfig -fuzztime=10m ./engine/config
func FuzzParseConfig(f *testing.F) {
	schemas := fuzzSchemas(f)
	if data, err := os.ReadFile("testdata/cursus_config.json"); err == nil {
		f.Add(data)
	}
	for _, seed := range []string{
		`{"configuration":{"shared":{},"specific":{}},"metadata":{"config_types":{}}}`,
		`{"configuration":{"shared":{"author":"a"},"specific":{"XGBoostTraining":{"__model_type__":"XGBoostTrainingConfig"}}},"metadata":{"config_types":{"XGBoostTraining":"XGBoostTrainingConfig"}}}`,
		`{"configuration":{"specific":{"k":{"__model_type__":"NoSuchConfig"}}}}`,
		`{"configuration":[]}`, `{"metadata":{"config_types":{"k":7}}}`,
		`{} {}`, `[]`, `1e999`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := config.Parse(data, schemas)
		if err != nil {
			if _, ok := err.(*config.LoadError); !ok {
				t.Fatalf("error is %T, want *config.LoadError: %v", err, err)
			}
			return
		}
		const stamp = "2025-01-01T00:00:00Z"
		first, err := config.Marshal(file.Configs, stamp)
		if err != nil {
			t.Fatalf("accepted configs cannot be saved: %v", err)
		}
		again, err := config.Parse(first, schemas)
		if err != nil {
			t.Fatalf("saved file does not load back: %v\n%s", err, first)
		}
		if !slices.Equal(again.Keys(), file.Keys()) {
			t.Fatalf("round trip changed the keys: %v → %v", file.Keys(), again.Keys())
		}
		second, err := config.Marshal(again.Configs, stamp)
		if err != nil {
			t.Fatal(err)
		}
		if string(first) != string(second) {
			t.Fatalf("save → load → save is not byte-stable:\n%s\n---\n%s", first, second)
		}
	})
}
