// Package sagemakertest validates pipeline definitions in tests against the
// SDK-compatible SageMaker schema kept outside the repository, at
// ../shared/sagemaker/pipeline-definition.sdk.schema.json relative to the
// module root.
package sagemakertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaFile is the schema's name in the shared directory.
const SchemaFile = "pipeline-definition.sdk.schema.json"

var (
	once     sync.Once
	compiled *jsonschema.Schema
	loadErr  error
	notFound bool
	location string
)

// SchemaPath returns where the schema is expected: ../shared/sagemaker next
// to the module root (the directory holding go.mod).
func SchemaPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "sagemaker", SchemaFile), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func load() {
	path, err := SchemaPath()
	if err != nil {
		loadErr = err
		return
	}
	location = path
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		notFound = true
		return
	}
	if err != nil {
		loadErr = err
		return
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		loadErr = fmt.Errorf("%s: %w", path, err)
		return
	}
	// The file names a draft-less meta-schema URL the library cannot fetch;
	// its keywords are draft-07.
	if m, ok := doc.(map[string]any); ok {
		delete(m, "$schema")
		if err := applyPatches(m); err != nil {
			loadErr = fmt.Errorf("%s: %w", path, err)
			return
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	const url = "file:///sagemaker/" + SchemaFile
	if err := c.AddResource(url, doc); err != nil {
		loadErr = err
		return
	}
	compiled, loadErr = c.Compile(url)
}

// Schema returns the compiled schema. When the file is absent the test is
// skipped, or fails if the CI environment variable is set (CI must never
// silently skip the check).
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	once.Do(load)
	if loadErr != nil {
		t.Fatalf("SageMaker schema: %v", loadErr)
	}
	if notFound {
		if os.Getenv("CI") != "" {
			t.Fatalf("SageMaker schema missing at %s (required when CI is set)", location)
		}
		t.Skipf("SageMaker schema missing at %s", location)
	}
	return compiled
}

// Validate checks an encoded definition against the schema and returns the
// validation error (nil when valid). It skips or fails the test like Schema
// when the schema file is absent.
func Validate(t testing.TB, definition []byte) error {
	t.Helper()
	s := Schema(t)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(definition))
	if err != nil {
		return fmt.Errorf("definition is not JSON: %w", err)
	}
	return s.Validate(doc)
}

// MustValidate fails the test when the definition does not validate.
func MustValidate(t testing.TB, definition []byte) {
	t.Helper()
	if err := Validate(t, definition); err != nil {
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, definition, "", "  ")
		t.Fatalf("definition does not validate against %s:\n%v\n--- definition ---\n%s", SchemaFile, err, pretty.String())
	}
}
