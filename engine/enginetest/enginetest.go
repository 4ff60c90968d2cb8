// Package enginetest holds what engine tests share: the built-in step
// catalog and its config schemas, loaded once per test binary.
package enginetest

import (
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
)

var (
	once    sync.Once
	catalog *steps.Catalog
	schemas *config.Schemas
	loadErr error
)

// Catalog returns the built-in step catalog and the config schemas of its
// step types.
func Catalog(t testing.TB) (*steps.Catalog, *config.Schemas) {
	t.Helper()
	once.Do(func() {
		var problems []finding.Finding
		catalog, problems, loadErr = steps.LoadCatalog()
		if loadErr == nil && len(problems) > 0 {
			loadErr = fmt.Errorf("built-in step files do not load: %v", problems)
		}
		if loadErr == nil {
			schemas, loadErr = config.LoadSchemas(catalog)
		}
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return catalog, schemas
}

// ConfigFile loads the config.json name of fsys with the schemas s or
// fails the test.
func ConfigFile(t testing.TB, fsys fs.FS, name string, s *config.Schemas) *config.File {
	t.Helper()
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(data, s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}
