package registry

import (
	"context"
	"strings"
)

// Resource is read-only data offered to MCP clients as a resource: one
// document at a fixed URI, or a family of them under a URI template with
// one variable (cursus://steps/{step_type}).
type Resource struct {
	// URI is the fixed URI or the RFC 6570 template.
	URI         string
	Name        string
	Description string
	MIMEType    string
	// Tool is the tool whose data the resource serves (dotted name): a
	// caller lists and reads it only when it may call that tool. Empty:
	// any caller; Read then decides what the caller sees.
	Tool string
	// Values lists the template variable's values that exist now, in
	// order (nil for a fixed URI). Listing, completion and reading all
	// go by it: a value it does not list has no resource.
	Values func(ctx context.Context) []string
	// Read returns the document for the template value (empty for a
	// fixed URI), for a caller that may call the tools open reports true
	// for.
	Read func(ctx context.Context, value string, open func(tool string) bool) (string, error)
}

// Variable is the name of the template's variable ("" for a fixed URI).
func (r Resource) Variable() string {
	start := strings.IndexByte(r.URI, '{')
	end := strings.IndexByte(r.URI, '}')
	if start < 0 || end < start {
		return ""
	}
	return r.URI[start+1 : end]
}

// Expand is the URI of the template's resource for value.
func (r Resource) Expand(value string) string {
	return strings.Replace(r.URI, "{"+r.Variable()+"}", value, 1)
}

// Match reports the template value a URI names, if it has this
// resource's shape (a fixed URI matches only itself, with value "").
func (r Resource) Match(uri string) (string, bool) {
	v := r.Variable()
	if v == "" {
		return "", uri == r.URI
	}
	prefix, suffix, _ := strings.Cut(r.URI, "{"+v+"}")
	if !strings.HasPrefix(uri, prefix) || !strings.HasSuffix(uri, suffix) || len(uri) <= len(prefix)+len(suffix) {
		return "", false
	}
	value := uri[len(prefix) : len(uri)-len(suffix)]
	return value, !strings.ContainsAny(value, "/?#")
}
