// Package enginetest holds what engine tests share: the built-in step
// catalog and its config schemas, loaded once per test binary.
package enginetest

import (
	"sync"
	"testing"

	"github.com/cursus-dev/cursus/engine/config"
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
		catalog, _, loadErr = steps.LoadCatalog()
		if loadErr == nil {
			schemas, loadErr = config.LoadSchemas(catalog)
		}
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return catalog, schemas
}
