package handlers

import "testing"

// The registry compiles a tool's argument schema at its first call; every
// tool's must compile.
func TestEveryArgumentSchemaCompiles(t *testing.T) {
	reg, _ := newTestRegistry(t)
	if err := reg.CompileSchemas(); err != nil {
		t.Fatal(err)
	}
}
