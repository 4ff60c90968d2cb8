package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/workspace"
	"github.com/cursus-dev/cursus/registry"
)

// InlineLimits cap the content one call sends instead of naming workspace
// files: its dag, config and files together, the number of files, and one
// file. A zero field takes its DefaultInlineLimits value.
type InlineLimits struct {
	MaxBytes     int64 // limits.max_inline_bytes
	MaxFiles     int   // limits.max_inline_files
	MaxFileBytes int64 // limits.max_inline_file_bytes
	// Caps on other inline content (a count of step types, say) join
	// these, with their limits.max_inline_* setting.
}

// DefaultInlineLimits are the caps when the operator sets none. The
// server's limits.max_arg_bytes (512 KiB by default) bounds a remote call
// first; these bound trusted callers (the CLI) and larger deployments.
var DefaultInlineLimits = InlineLimits{MaxBytes: 8 << 20, MaxFiles: 500, MaxFileBytes: 2 << 20}

func (l InlineLimits) orDefaults() InlineLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultInlineLimits.MaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultInlineLimits.MaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultInlineLimits.MaxFileBytes
	}
	return l
}

// overCap is the invalid_input of inline content over a cap, naming the
// cap's setting and value.
func overCap(setting string, limit int64, what string) error {
	return registry.Errorf(registry.CodeInvalidInput, "inline content over %s (%d): %s", setting, limit, what).
		WithDetails(map[string]any{"limit": setting, "limit_value": limit}).
		Suggest("Send less inline content in one call (split the work over several calls); only the operator can raise " + setting + ".")
}

// callSources is what one call reads: its inline files over the
// workspace, the step catalogs with its step types over the shared ones,
// and the inline bytes it has sent so far, for limits.max_inline_bytes.
type callSources struct {
	fs     *workspace.Overlay
	root   *workspace.Root
	cat    *catalogView
	limits InlineLimits
	sent   int64
}

// sources checks the call's files against the caps and lays them over
// the workspace, and its step types over the catalogs.
func (d *Deps) sources(ctx context.Context, files inlineFiles, types stepTypesArg) (*callSources, error) {
	lim := d.Opts.Inline.orDefaults()
	if len(files) > lim.MaxFiles {
		return nil, overCap("limits.max_inline_files", int64(lim.MaxFiles), fmt.Sprintf("files has %d entries", len(files)))
	}
	cat, err := d.catalogsFor(ctx, types)
	if err != nil {
		return nil, err
	}
	src := &callSources{root: d.Root, cat: cat, limits: lim}
	for p, text := range files {
		if n := int64(len(text)); n > lim.MaxFileBytes {
			return nil, overCap("limits.max_inline_file_bytes", lim.MaxFileBytes, fmt.Sprintf("files[%q] is %d bytes", p, n))
		}
		if err := src.count(int64(len(text))); err != nil {
			return nil, err
		}
	}
	o, err := workspace.NewOverlay(d.Root.FS(), files)
	var ie *workspace.InlinePathError
	if errors.As(err, &ie) {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'files': %s", ie.Error()).WithDetails(map[string]any{"argument": "files", "path": ie.Path})
	}
	if err != nil {
		return nil, err
	}
	src.fs = o
	return src, nil
}

// count adds n inline bytes to the call's total.
func (s *callSources) count(n int64) error {
	s.sent += n
	if s.sent > s.limits.MaxBytes {
		return overCap("limits.max_inline_bytes", s.limits.MaxBytes, fmt.Sprintf("the call's dag, config and files total at least %d bytes", s.sent))
	}
	return nil
}

// read reads the file p names (argument arg): an inline file, else the
// workspace's.
func (s *callSources) read(arg, p string) ([]byte, error) {
	name, err := s.root.FSPath(p)
	if err != nil {
		return nil, pathError(arg, err)
	}
	data, err := fs.ReadFile(s.fs, name)
	if err != nil && absolutePath(p) {
		// The errors name the file relative to the workspace, which
		// would tell the caller where its absolute path led.
		return nil, opaquePathError(arg, p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, registry.Errorf(registry.CodeNotFound, "'%s' not found: %s", arg, p)
	}
	if err != nil {
		return nil, pathError(arg, err)
	}
	return data, nil
}

// document encodes an inline JSON document (argument arg) and counts it.
func (s *callSources) document(arg string, v map[string]any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'%s': %v", arg, err)
	}
	return data, s.count(int64(len(data)))
}

// configFrom reads the exactly-one-of config / config_file input (file
// names its argument in messages) and parses it with config.Parse, so a
// document gives what the same bytes in a file give. label is how
// messages name it: the file's path, or "inline config".
func (d *Deps) configFrom(src *callSources, in configSource, fileArg string) (f *config.File, label string, err error) {
	return d.loadConfig(src, in, fileArg, config.Parse)
}

// configForCheck is configFrom for a check that reports problems as
// findings: a config with invalid values is left unloaded, failing only
// the nodes that need it.
func (d *Deps) configForCheck(src *callSources, in configSource, fileArg string) (f *config.File, label string, err error) {
	return d.loadConfig(src, in, fileArg, config.ParseForCheck)
}

func (d *Deps) loadConfig(src *callSources, in configSource, fileArg string, parse func([]byte, *config.Schemas) (*config.File, error)) (f *config.File, label string, err error) {
	hasInline, hasFile := in.Config != nil, in.ConfigFile != ""
	var raw []byte
	switch {
	case hasInline && hasFile:
		return nil, "", registry.Errorf(registry.CodeInvalidInput, "give either config or %s, not both", fileArg)
	case !hasInline && !hasFile:
		return nil, "", registry.Errorf(registry.CodeInvalidInput, "give config (the config.json document inline) or %s", fileArg).
			Suggest("Pass the config.json document as config; config.requirements lists what it needs.", "config.requirements", "config.merge_save")
	case hasFile:
		label = string(in.ConfigFile)
		raw, err = src.read(fileArg, label)
	default:
		label = "inline config"
		raw, err = src.document("config", in.Config)
	}
	if err != nil {
		return nil, "", err
	}
	f, err = parse(raw, src.cat.Config)
	if err != nil {
		return nil, "", configLoadError(label, err)
	}
	return f, label, nil
}
