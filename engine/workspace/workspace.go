// Package workspace confines file access to one directory tree. Every tool
// argument that names a file goes through a Root, so a remote caller can
// neither read nor write outside the workspace the operator configured.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// EscapeError means a path would leave the workspace.
type EscapeError struct {
	Path   string
	Reason string
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("path %q is outside the workspace: %s", e.Path, e.Reason)
}

// ExistsError means a write would overwrite an existing file.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exists; pass overwrite to replace it", e.Path)
}

// Root is a workspace directory.
type Root struct{ dir string }

// New returns a Root at dir (made absolute, symlinks resolved).
func New(dir string) (*Root, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", dir, err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("workspace root %s is not a directory", dir)
	}
	return &Root{dir: real}, nil
}

// Dir is the absolute root directory.
func (r *Root) Dir() string { return r.dir }

// Rel returns p relative to the root, for messages that must not leak the
// server's directory layout.
func (r *Root) Rel(abs string) string {
	rel, err := filepath.Rel(r.dir, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// Resolve maps a caller's path (relative to the root, or absolute inside
// it) to an absolute path inside the root. It refuses `..` escapes,
// absolute paths elsewhere and symlinks that lead out of the root. The
// path itself need not exist yet.
func (r *Root) Resolve(p string) (string, error) {
	if p == "" {
		return "", &EscapeError{Path: p, Reason: "empty path"}
	}
	if strings.ContainsRune(p, 0) {
		return "", &EscapeError{Path: p, Reason: "NUL byte in path"}
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(r.dir, p)
	}
	if !r.contains(abs) {
		return "", &EscapeError{Path: p, Reason: "it resolves outside " + "the workspace root"}
	}
	// Resolve symlinks on the longest existing prefix: a link anywhere on
	// the way may point out of the root.
	existing, rest := abs, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", &EscapeError{Path: p, Reason: "cannot resolve: " + err.Error()}
	}
	final := filepath.Join(real, rest)
	if !r.contains(final) {
		return "", &EscapeError{Path: p, Reason: "a symlink on the path leads outside the workspace root"}
	}
	return final, nil
}

func (r *Root) contains(abs string) bool {
	return abs == r.dir || strings.HasPrefix(abs, r.dir+string(filepath.Separator))
}

// ReadFile reads a file inside the root.
func (r *Root) ReadFile(p string) ([]byte, error) {
	abs, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(abs)
	return data, classify(p, err)
}

// ReadRegular reads a regular file inside the root, refusing one larger
// than limit bytes; it returns the file's absolute path too.
func (r *Root) ReadRegular(p string, limit int64) (string, []byte, error) {
	abs, err := r.Resolve(p)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", nil, classify(p, err)
	}
	if fi.IsDir() {
		return "", nil, classify(p, syscall.EISDIR)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s is not a regular file: %w", filepath.Base(abs), fs.ErrNotExist)
	}
	if fi.Size() > limit {
		return "", nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(abs), limit)
	}
	data, err := os.ReadFile(abs)
	return abs, data, classify(p, err)
}

// Lstat stats a path inside the root without following a final symlink.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	abs, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(abs)
	return fi, classify(p, err)
}

// ReadDir lists a directory inside the root, sorted by name.
func (r *Root) ReadDir(p string) ([]fs.DirEntry, error) {
	abs, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(abs)
	return entries, classify(p, err)
}

// Stat stats a path inside the root.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	abs, err := r.Resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	return fi, classify(p, err)
}

// MkdirAll creates a directory (and parents) inside the root.
func (r *Root) MkdirAll(p string) (string, error) {
	abs, err := r.Resolve(p)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", classify(p, err)
	}
	// Re-check: a concurrent symlink swap must not redirect later writes.
	if _, err := r.Resolve(p); err != nil {
		return "", err
	}
	return abs, nil
}

// WriteFile writes data to a file inside the root, creating parent
// directories. It never follows a symlink at the final component and
// refuses to replace an existing file unless overwrite is set.
func (r *Root) WriteFile(p string, data []byte, overwrite bool) error {
	if _, err := r.Resolve(p); err != nil {
		return err
	}
	// Resolve only the directory: the final component is opened with
	// O_NOFOLLOW so a symlink there is refused, never written through.
	dir, err := r.MkdirAll(filepath.Dir(filepath.Clean(p)))
	if err != nil {
		return err
	}
	abs := filepath.Join(dir, filepath.Base(filepath.Clean(p)))
	flags := os.O_WRONLY | os.O_CREATE | syscall.O_NOFOLLOW
	if overwrite {
		flags |= os.O_TRUNC
	} else {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(abs, flags, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return &EscapeError{Path: p, Reason: "refusing to write through a symlink"}
		}
		if errors.Is(err, fs.ErrExist) {
			return &ExistsError{Path: r.Rel(abs)}
		}
		return classify(p, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// FS is the root as an fs.FS (with Stat and ReadDir) for readers that take
// one, such as the compiler's sources: every name is resolved through the
// root, so ".." and symlinks that leave it fail.
func (r *Root) FS() fs.FS { return rootFS{r} }

type rootFS struct{ r *Root }

func (f rootFS) resolve(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	abs, err := f.r.Resolve(name)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	return abs, nil
}

func (f rootFS) Open(name string) (fs.File, error) {
	abs, err := f.resolve("open", name)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(abs)
	if err != nil {
		return nil, classify(name, err)
	}
	return file, nil
}

func (f rootFS) Stat(name string) (fs.FileInfo, error) {
	abs, err := f.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	return fi, classify(name, err)
}

func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	abs, err := f.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(abs) // already sorted by name
	return entries, classify(name, err)
}
