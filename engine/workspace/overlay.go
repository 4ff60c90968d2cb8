package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing/fstest"
)

// InlinePathError means a path of a call's inline files cannot be used:
// it is empty, absolute, leaves the tree, holds a NUL byte, or collides
// with another inline path.
type InlinePathError struct {
	Path   string
	Reason string
}

func (e *InlinePathError) Error() string {
	return fmt.Sprintf("inline file %q: %s", e.Path, e.Reason)
}

// Overlay is a read-only fs.FS: a call's inline files (relative slash
// path → content) over a base file system, the workspace's FS. An inline
// file hides the base entry of the same path, and a path below an inline
// file does not exist, whatever the base holds there. Directories that
// hold inline files exist (fstest.MapFS synthesises them), and listing
// one merges its base entries with its inline ones, so a walk of a source
// directory sees both.
//
// The inline side is an fstest.MapFS, which already gives reads, stats
// and synthesised directories; what is hand-written here is only what
// MapFS cannot do: fall back to the base, and merge a directory present
// on both sides.
type Overlay struct {
	base   fs.FS
	inline fstest.MapFS
}

// NewOverlay lays files over base. Each path is cleaned ("./a//b" is
// "a/b") and must stay inside the tree; two paths that clean to the same
// name, or a file that is also another file's directory, are refused. An
// empty files gives an Overlay that reads base unchanged; a nil base is
// an empty tree.
func NewOverlay(base fs.FS, files map[string]string) (*Overlay, error) {
	inline := fstest.MapFS{}
	for raw, text := range files {
		p, err := cleanInlinePath(raw)
		if err != nil {
			return nil, err
		}
		if _, dup := inline[p]; dup {
			return nil, &InlinePathError{Path: raw, Reason: "names the same file as another inline path"}
		}
		inline[p] = &fstest.MapFile{Data: []byte(text), Mode: 0o444}
	}
	for p := range inline {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, isFile := inline[dir]; isFile {
				return nil, &InlinePathError{Path: p, Reason: fmt.Sprintf("lies under %q, which is an inline file too", dir)}
			}
		}
	}
	if base == nil {
		base = fstest.MapFS{}
	}
	return &Overlay{base: base, inline: inline}, nil
}

// cleanInlinePath is p as an fs path, or why it cannot be one.
func cleanInlinePath(p string) (string, error) {
	switch {
	case p == "":
		return "", &InlinePathError{Path: p, Reason: "empty path"}
	case strings.ContainsRune(p, 0):
		return "", &InlinePathError{Path: p, Reason: "NUL byte in path"}
	case strings.HasPrefix(p, "/"):
		return "", &InlinePathError{Path: p, Reason: "absolute path; give it relative to the workspace"}
	case strings.ContainsRune(p, '\\'):
		return "", &InlinePathError{Path: p, Reason: `backslash in path; separate directories with "/"`}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", &InlinePathError{Path: p, Reason: "names the root directory, not a file"}
	}
	if clean == ".." || strings.HasPrefix(clean, "../") || !fs.ValidPath(clean) {
		return "", &InlinePathError{Path: p, Reason: "it resolves outside the workspace"}
	}
	return clean, nil
}

// isInlineFile reports whether name is one of the inline files.
func (o *Overlay) isInlineFile(name string) bool {
	f, ok := o.inline[name]
	return ok && !f.Mode.IsDir()
}

// side says where name lives: in the inline tree (as a file or a
// synthesised directory), hidden (under an inline file), or in the base.
type side int

const (
	onBase side = iota
	inlineFile
	inlineDir
	hidden
)

func (o *Overlay) side(name string) side {
	if len(o.inline) == 0 {
		return onBase
	}
	if o.isInlineFile(name) {
		return inlineFile
	}
	if name == "." {
		return inlineDir
	}
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if o.isInlineFile(dir) {
			return hidden
		}
	}
	prefix := name + "/"
	for p := range o.inline {
		if strings.HasPrefix(p, prefix) {
			return inlineDir
		}
	}
	return onBase
}

func (o *Overlay) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	switch o.side(name) {
	case inlineFile:
		return o.inline.Open(name)
	case inlineDir:
		entries, err := o.ReadDir(name)
		if err != nil {
			return nil, err
		}
		info, err := fs.Stat(o.inline, name)
		if err != nil {
			return nil, err
		}
		return &mergedDir{info: info, entries: entries}, nil
	case hidden:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return o.base.Open(name)
}

func (o *Overlay) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	switch o.side(name) {
	case inlineFile:
		return slices.Clone(o.inline[name].Data), nil
	case inlineDir:
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: &FileError{Path: name, Reason: "is a directory"}}
	case hidden:
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrNotExist}
	}
	return fs.ReadFile(o.base, name)
}

func (o *Overlay) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	switch o.side(name) {
	case inlineFile, inlineDir:
		return fs.Stat(o.inline, name)
	case hidden:
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Stat(o.base, name)
}

// ReadDir lists name sorted by file name; for a directory with inline
// files, its inline entries replace base entries of the same name.
func (o *Overlay) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	switch o.side(name) {
	case inlineFile:
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: &FileError{Path: name, Reason: "is not a directory"}}
	case hidden:
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	case onBase:
		return fs.ReadDir(o.base, name)
	}
	inline, err := fs.ReadDir(o.inline, name)
	if err != nil {
		return nil, err
	}
	base, err := fs.ReadDir(o.base, name)
	// The directory exists because inline files are in it, whether or not
	// the base has it (or has a file there, which the inline tree hides).
	var notDir *FileError
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &notDir) {
		return nil, err
	}
	seen := make(map[string]bool, len(inline))
	for _, e := range inline {
		seen[e.Name()] = true
	}
	merged := inline
	for _, e := range base {
		if !seen[e.Name()] {
			merged = append(merged, e)
		}
	}
	slices.SortFunc(merged, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return merged, nil
}

// mergedDir is an opened directory of both trees: fs.ReadDirFile over
// the entries ReadDir merged.
type mergedDir struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	offset  int
}

func (d *mergedDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *mergedDir) Close() error               { return nil }

func (d *mergedDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: fs.ErrInvalid}
}

func (d *mergedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.offset:]
	if n <= 0 {
		d.offset = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.offset += len(rest)
	return rest, nil
}
