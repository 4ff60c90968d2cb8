// Package cursus holds assets that live at the repository root and are
// embedded into the binary (the OpenAPI description of the REST routes).
package cursus

import _ "embed"

// OpenAPI is openapi.yaml, served at GET /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Version is the build version, set with -ldflags "-X github.com/cursus-dev/cursus.Version=…".
var Version = "dev"
