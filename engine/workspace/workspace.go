// Package workspace confines file access to one directory tree. Every tool
// argument that names a file goes through a Root, so a remote caller can
// neither read nor write outside the workspace the operator configured.
//
// Every operation goes through an os.Root: the kernel resolves each path
// component relative to the root's open directory, so a symlink or
// directory swapped in while a call runs cannot redirect it outside.
// Reads take regular files only, up to a size cap; writes go to a
// temporary file that is synced and renamed into place. A directory is
// built whole out of sight and renamed into place (Stage), or swapped
// with the one it replaces in one rename (StageReplace). OpenDir reads an
// operator's directory with the same rules.
package workspace

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultMaxFileBytes is the read cap when the operator sets none.
const DefaultMaxFileBytes = 16 << 20

// TempPrefix starts the name of every temporary file and directory a write
// makes next to its target. Listings skip such names, and a write sweeps
// away the ones a killed process left behind.
const TempPrefix = ".cursus-tmp-"

// staleAfter is how old a temporary must be before a sweep removes it; a
// younger one may belong to a write still running.
const staleAfter = 15 * time.Minute

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

// FileError means a path names something that is not a file the call can
// use: a directory, a named pipe, a device, a socket, or a name too long.
type FileError struct {
	Path   string
	Reason string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s %s", e.Path, e.Reason) }

// LimitError means a file is larger than a limit: the workspace's read
// cap (ReadCap), or a smaller one of the reader's own.
type LimitError struct {
	Path    string
	Limit   int64
	ReadCap bool
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is larger than the %d-byte limit", e.Path, e.Limit)
}

// StorageError means the file system refused a write: it is full, read-only
// or not writable by the server. Nothing of the write is left behind.
type StorageError struct {
	Path string
	Err  syscall.Errno
}

func (e *StorageError) Error() string { return fmt.Sprintf("cannot write %s: %v", e.Path, e.Err) }
func (e *StorageError) Unwrap() error { return e.Err }

// Faults injects errors into the write path, named by operation ("mkdir",
// "create", "write", "sync", "rename", "exchange", "flock"). It is the
// seam for tests of a full disk, a read-only mount or a file system
// without RENAME_EXCHANGE or directory locks, which an unprivileged test
// cannot create.
type Faults func(op, name string) error

// Option configures a Root.
type Option func(*Root)

// WithMaxFileBytes caps every read (n <= 0 keeps the default).
func WithMaxFileBytes(n int64) Option {
	return func(r *Root) {
		if n > 0 {
			r.maxRead = n
		}
	}
}

// WithFaults installs a fault injector; see Faults.
func WithFaults(f Faults) Option { return func(r *Root) { r.faults = f } }

// Root is a workspace directory.
type Root struct {
	dir     string
	root    *os.Root
	maxRead int64
	faults  Faults
}

// New opens a Root at dir (made absolute, symlinks resolved). The Root
// keeps the directory open for its lifetime.
func New(dir string, opts ...Option) (*Root, error) {
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
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	r := &Root{dir: real, root: root, maxRead: DefaultMaxFileBytes}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Dir is the absolute root directory.
func (r *Root) Dir() string { return r.dir }

// MaxFileBytes is the read cap: no file larger is read from the root.
func (r *Root) MaxFileBytes() int64 { return r.maxRead }

// Close releases the root's open directory; the Root is unusable after.
func (r *Root) Close() error { return r.root.Close() }

// Rel returns p relative to the root, for messages that must not leak the
// server's directory layout.
func (r *Root) Rel(abs string) string {
	rel, err := filepath.Rel(r.dir, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// rel maps a caller's path (relative to the root, or absolute inside it)
// to a clean path relative to the root, refusing lexical escapes. Symlinks
// are left to the os.Root, which refuses those that lead out.
func (r *Root) rel(p string) (string, error) {
	if p == "" {
		return "", &EscapeError{Path: p, Reason: "empty path"}
	}
	if strings.ContainsRune(p, 0) {
		return "", &EscapeError{Path: p, Reason: "NUL byte in path"}
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(rel) {
		var err error
		if rel, err = filepath.Rel(r.dir, rel); err != nil {
			return "", &EscapeError{Path: p, Reason: "it resolves outside the workspace root"}
		}
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &EscapeError{Path: p, Reason: "it resolves outside the workspace root"}
	}
	return rel, nil
}

// Resolve maps a caller's path to its absolute path under the root, for
// messages and listings. It refuses `..` escapes, absolute paths elsewhere
// and symlinks that lead out of the root; the path need not exist. The
// answer is a name, not a capability: open files through the Root's
// methods, never by this string.
func (r *Root) Resolve(p string) (string, error) {
	rel, err := r.rel(p)
	if err != nil {
		return "", err
	}
	if _, err := r.root.Stat(rel); err != nil {
		if err := r.classify(p, err); isRefusal(err) {
			return "", err
		}
	}
	return filepath.Join(r.dir, rel), nil
}

// isRefusal reports whether err says the path may not be used at all (as
// opposed to "does not exist yet").
func isRefusal(err error) bool {
	var esc *EscapeError
	var fe *FileError
	return errors.As(err, &esc) || errors.As(err, &fe)
}

// errPathEscapes is the text of the os.Root error for a path that leaves
// the root; os does not export the error value, so it is matched by text.
const errPathEscapes = "path escapes from parent"

// isEscape reports whether err, at any depth, is the os.Root escape error.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if _, wrapper := err.(*fs.PathError); !wrapper && err.Error() == errPathEscapes {
			return true
		}
	}
	return false
}

// classify turns an os error about p into the package's error types.
func (r *Root) classify(p string, err error) error {
	if isEscape(err) {
		return &EscapeError{Path: p, Reason: "a symlink on the path leads outside the workspace root"}
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case syscall.ENAMETOOLONG:
		return &FileError{Path: p, Reason: "has a name that is too long"}
	case syscall.ENOTDIR:
		return &FileError{Path: p, Reason: "goes through something that is not a directory"}
	case syscall.ELOOP:
		return &FileError{Path: p, Reason: "goes through too many symlinks"}
	case syscall.EISDIR:
		return &FileError{Path: p, Reason: "is a directory"}
	case syscall.ENXIO, syscall.ENODEV:
		// What open(2) says of a socket or of a device with no driver.
		return &FileError{Path: p, Reason: "is not a regular file"}
	case syscall.EACCES, syscall.EPERM:
		return &FileError{Path: p, Reason: "is not accessible to the server"}
	}
	return err
}

// classifyWrite is classify for a failed write, where a full, read-only or
// forbidden file system is a *StorageError.
func (r *Root) classifyWrite(p string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EROFS, syscall.EACCES, syscall.EPERM:
			return &StorageError{Path: p, Err: errno}
		}
	}
	return r.classify(p, err)
}

// ReadFile reads a regular file inside the root, up to the read cap.
func (r *Root) ReadFile(p string) ([]byte, error) {
	_, data, err := r.ReadRegular(p, r.maxRead)
	return data, err
}

// ReadRegular reads a regular file inside the root, refusing one larger
// than limit bytes (or the read cap, if smaller); it returns the file's
// absolute path too. Named pipes, devices, sockets and directories are
// *FileError; the file is opened non-blocking so a pipe cannot stall it.
func (r *Root) ReadRegular(p string, limit int64) (string, []byte, error) {
	rel, err := r.rel(p)
	if err != nil {
		return "", nil, err
	}
	limit = min(limit, r.maxRead)
	f, err := r.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", nil, r.classify(p, absent(p, err))
	}
	defer f.Close()
	if err := checkRegular(p, f); err != nil {
		return "", nil, err
	}
	// The size answers most cases without reading; the limited read covers
	// a file that grows meanwhile.
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return "", nil, &LimitError{Path: p, Limit: limit, ReadCap: limit == r.maxRead}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", nil, r.classify(p, err)
	}
	if int64(len(data)) > limit {
		return "", nil, &LimitError{Path: p, Limit: limit, ReadCap: limit == r.maxRead}
	}
	return filepath.Join(r.dir, rel), data, nil
}

// absent is err, or for an absolute path p that is not there a
// *FileError: a caller may give an absolute path without knowing where
// the workspace lies, and "not found" would tell it that the path is
// inside (an absolute path outside is an *EscapeError, which the tool
// layer answers alike).
func absent(p string, err error) error {
	if filepath.IsAbs(p) && errors.Is(err, fs.ErrNotExist) {
		return &FileError{Path: p, Reason: "does not exist"}
	}
	return err
}

// checkRegular refuses an opened file that is not a regular file.
func checkRegular(p string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return &FileError{Path: p, Reason: "is a directory, not a file"}
	case m&fs.ModeNamedPipe != 0:
		return &FileError{Path: p, Reason: "is a named pipe, not a regular file"}
	case m&fs.ModeSocket != 0:
		return &FileError{Path: p, Reason: "is a socket, not a regular file"}
	case m&fs.ModeDevice != 0:
		return &FileError{Path: p, Reason: "is a device, not a regular file"}
	}
	return &FileError{Path: p, Reason: "is not a regular file"}
}

// Lstat stats a path inside the root without following a final symlink.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Lstat(rel)
	if err != nil {
		return nil, r.classify(p, err)
	}
	return fi, nil
}

// Stat stats a path inside the root.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Stat(rel)
	if err != nil {
		return nil, r.classify(p, err)
	}
	return fi, nil
}

// ReadDir lists a directory inside the root, sorted by name, without the
// temporaries of writes in progress or killed.
func (r *Root) ReadDir(p string) ([]fs.DirEntry, error) {
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	entries, err := r.readDir(rel)
	if err != nil {
		return nil, r.classify(p, err)
	}
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return strings.HasPrefix(e.Name(), TempPrefix) }), nil
}

func (r *Root) readDir(rel string) ([]fs.DirEntry, error) {
	// O_DIRECTORY refuses anything else before opening it, so a named pipe
	// (or a symlink to one) cannot stall the listing.
	f, err := r.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// MkdirAll creates a directory (and parents) inside the root and returns
// its absolute path.
func (r *Root) MkdirAll(p string) (string, error) {
	rel, err := r.rel(p)
	if err != nil {
		return "", err
	}
	if err := r.mkdirAll(p, rel); err != nil {
		return "", err
	}
	return filepath.Join(r.dir, rel), nil
}

func (r *Root) mkdirAll(p, rel string) error {
	if rel == "." {
		return nil
	}
	if err := r.fault("mkdir", rel); err != nil {
		return r.classifyWrite(p, err)
	}
	if err := r.root.MkdirAll(rel, 0o755); err != nil {
		// os.Root.MkdirAll answers EEXIST, not ENOTDIR, when a file sits
		// where a directory on the path should be.
		if errors.Is(err, fs.ErrExist) {
			return &FileError{Path: p, Reason: "goes through something that is not a directory"}
		}
		return r.classifyWrite(p, err)
	}
	return nil
}

func (r *Root) fault(op, rel string) error {
	if r.faults == nil {
		return nil
	}
	return r.faults(op, rel)
}

// WriteFile writes data to a file inside the root, creating parent
// directories. The data goes to a temporary file in the same directory,
// which is synced and then renamed into place, so the target is never seen
// partly written, even if the process is killed. It refuses to replace a
// symlink or, unless overwrite is set, an existing file.
func (r *Root) WriteFile(p string, data []byte, overwrite bool) error {
	rel, err := r.rel(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return &FileError{Path: p, Reason: "is a directory, not a file"}
	}
	w, err := r.openDir(p, filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer w.dir.Close()
	base := filepath.Base(rel)
	if err := w.checkTarget(base, overwrite); err != nil {
		return err
	}
	w.sweep()
	tmp := TempPrefix + rand.Text()[:12]
	if err := w.create(tmp, data); err != nil {
		return err
	}
	if err := w.place(tmp, base, overwrite); err != nil {
		_ = w.dir.Remove(tmp)
		return err
	}
	return w.sync()
}

// dirWriter writes inside one opened directory: once it is open, a swap of
// any directory on its path cannot move a later step somewhere else.
type dirWriter struct {
	r   *Root
	dir *os.Root
	p   string // the caller's path, for errors
	rel string // the directory relative to the root, for faults
}

// openDir creates the directory rel (and parents) and opens it.
func (r *Root) openDir(p, rel string) (dirWriter, error) {
	if err := r.mkdirAll(p, rel); err != nil {
		return dirWriter{}, err
	}
	dir, err := r.root.OpenRoot(rel)
	if err != nil {
		return dirWriter{}, r.classifyWrite(p, err)
	}
	return dirWriter{r: r, dir: dir, p: p, rel: rel}, nil
}

func (w dirWriter) fault(op, name string) error { return w.r.fault(op, filepath.Join(w.rel, name)) }
func (w dirWriter) fail(err error) error        { return w.r.classifyWrite(w.p, err) }

// checkTarget refuses a target that is a symlink or a directory, or that
// exists when overwrite is not set.
func (w dirWriter) checkTarget(base string, overwrite bool) error {
	fi, err := w.dir.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return w.fail(err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return &EscapeError{Path: w.p, Reason: "refusing to write through a symlink"}
	case fi.IsDir():
		return &FileError{Path: w.p, Reason: "is a directory, not a file"}
	case !overwrite:
		return &ExistsError{Path: filepath.ToSlash(filepath.Join(w.rel, base))}
	}
	return nil
}

// create writes data to the new file name and syncs it; on failure the
// file is removed.
func (w dirWriter) create(name string, data []byte) error {
	if err := w.fault("create", name); err != nil {
		return w.fail(err)
	}
	f, err := w.dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return w.fail(err)
	}
	err = w.fault("write", name)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		if err = w.fault("sync", name); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = w.dir.Remove(name)
		return w.fail(err)
	}
	return nil
}

// place moves the temporary file tmp to base. Without overwrite it links
// rather than renames, since a link fails when the target appeared in the
// meantime where a rename would silently replace it.
func (w dirWriter) place(tmp, base string, overwrite bool) error {
	if err := w.fault("rename", base); err != nil {
		return w.fail(err)
	}
	if overwrite {
		if err := w.dir.Rename(tmp, base); err != nil {
			return w.fail(err)
		}
		return nil
	}
	err := w.dir.Link(tmp, base)
	_ = w.dir.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		return &ExistsError{Path: filepath.ToSlash(filepath.Join(w.rel, base))}
	}
	if err != nil {
		return w.fail(err)
	}
	return nil
}

// sync makes a rename in the directory durable.
func (w dirWriter) sync() error {
	d, err := w.dir.Open(".")
	if err != nil {
		return w.fail(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return w.fail(err)
	}
	return nil
}

// sweep removes temporaries that a killed write left behind. It is best
// effort: a failure only leaves them for the next sweep.
func (w dirWriter) sweep() {
	d, err := w.dir.Open(".")
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		if !strings.HasPrefix(name, TempPrefix) || strings.HasPrefix(name, asidePrefix) {
			continue
		}
		if fi, err := w.dir.Lstat(name); err == nil && time.Since(fi.ModTime()) > staleAfter {
			_ = w.dir.RemoveAll(name)
		}
	}
}

// Staged is a new directory built out of sight and moved into place at
// once by Commit, so a reader or a rerun never finds it half made. Every
// Staged must end with Commit or Abort.
type Staged struct {
	w         dirWriter // the target's parent
	tmp, base string    // names in the parent
	// replace is set by StageReplace: Commit swaps the new directory with
	// the existing one instead of renaming it into an empty place.
	replace bool
	// lock is the parent directory, opened and flock'ed by StageReplace
	// until the swap is done (see replaceLock); nil where the file system
	// cannot lock it.
	lock *os.File
}

// Stage starts building the new directory p (which must not exist yet) in
// a temporary directory next to it.
func (r *Root) Stage(p string) (*Staged, error) {
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, &ExistsError{Path: "."}
	}
	w, err := r.openDir(p, filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	base := filepath.Base(rel)
	if _, err := w.dir.Lstat(base); err == nil {
		w.dir.Close()
		return nil, &ExistsError{Path: filepath.ToSlash(rel)}
	} else if !errors.Is(err, fs.ErrNotExist) {
		w.dir.Close()
		return nil, w.fail(err)
	}
	w.sweep()
	tmp := TempPrefix + rand.Text()[:12]
	err = w.fault("mkdir", tmp)
	if err == nil {
		err = w.dir.Mkdir(tmp, 0o755)
	}
	if err != nil {
		w.dir.Close()
		return nil, w.fail(err)
	}
	return &Staged{w: w, tmp: tmp, base: base}, nil
}

// StageReplace starts building a new version of the existing directory p
// in a temporary directory next to it; Commit swaps the two with one
// rename, so a reader (or a process killed at any moment) finds either
// the old directory whole or the new one whole, never a mix of both. Keep
// carries over what the new version does not replace. p must be a real
// directory: a symlink is refused, as a write through one is.
func (r *Root) StageReplace(p string) (*Staged, error) {
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, &FileError{Path: p, Reason: "is the workspace root, which cannot be replaced"}
	}
	w, err := r.openDir(p, filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	base := filepath.Base(rel)
	fi, err := w.dir.Lstat(base)
	switch {
	case err != nil:
		w.dir.Close()
		return nil, w.fail(err)
	case fi.Mode()&fs.ModeSymlink != 0:
		w.dir.Close()
		return nil, &EscapeError{Path: p, Reason: "refusing to replace a symlink"}
	case !fi.IsDir():
		w.dir.Close()
		return nil, &FileError{Path: p, Reason: "is not a directory"}
	}
	lock, err := replaceLock(w)
	if err != nil {
		w.dir.Close()
		return nil, err
	}
	w.sweep()
	tmp := TempPrefix + rand.Text()[:12]
	err = w.fault("mkdir", tmp)
	if err == nil {
		err = w.dir.Mkdir(tmp, fi.Mode().Perm())
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		w.dir.Close()
		return nil, w.fail(err)
	}
	return &Staged{w: w, tmp: tmp, base: base, replace: true, lock: lock}, nil
}

// replaceLock takes an exclusive flock on the directory w, held until the
// Staged that takes it is committed or aborted. Replacements in one
// directory run one at a time: Keep reads the directory being replaced
// through a handle, and a concurrent replacement that swapped that
// directory out and removed it under the handle would leave Keep a listing
// without the user's files, which its swap would then drop. The kernel
// releases the lock of a killed process; concurrent replacements in a
// process each open their own handle, so they exclude one another too.
// Where the file system cannot lock a directory (NFS turns flock into a
// POSIX lock, which needs a file open for writing), replacements go on
// without taking turns, as they would without this lock.
func replaceLock(w dirWriter) (*os.File, error) {
	d, err := w.dir.Open(".")
	if err != nil {
		return nil, w.fail(err)
	}
	err = w.fault("flock", ".")
	for err == nil {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
		err = nil
	}
	switch {
	case errors.Is(err, syscall.EBADF), errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
		d.Close()
		return nil, nil
	case err != nil:
		d.Close()
		return nil, w.fail(err)
	}
	return d, nil
}

// unlock releases the replacement lock, if this Staged holds one.
func (s *Staged) unlock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// Keep carries every entry of the directory being replaced over into the
// staged one, except the files at the paths in replaced (slash-separated,
// relative to the directory), which the new version writes. Files are
// hard-linked (the same file, not a copy), symlinks copied as symlinks and
// directories made anew with their permissions. A symlink at one of the
// replaced paths or on the way to one, or a directory at one of them, is
// refused, as WriteFile refuses to write through a symlink or over a
// directory.
func (s *Staged) Keep(replaced []string) error {
	if !s.replace {
		return &FileError{Path: s.base, Reason: "is new: there is nothing to keep"}
	}
	files := map[string]bool{}
	onPath := map[string]bool{}
	for _, f := range replaced {
		f = path.Clean(f)
		files[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			onPath[d] = true
		}
	}
	return s.keep(".", files, onPath)
}

func (s *Staged) keep(rel string, files, onPath map[string]bool) error {
	from := filepath.Join(s.w.p, filepath.FromSlash(rel))
	d, err := s.w.dir.OpenFile(filepath.Join(s.base, filepath.FromSlash(rel)), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return s.w.r.classify(from, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return s.w.r.classify(from, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			continue // a killed write's leftover
		}
		name := path.Join(rel, e.Name())
		old := filepath.Join(s.base, filepath.FromSlash(name))
		dst := filepath.Join(s.tmp, filepath.FromSlash(name))
		where := filepath.Join(s.w.p, filepath.FromSlash(name))
		isLink, isDir := e.Type()&fs.ModeSymlink != 0, e.IsDir()
		switch {
		case (files[name] || onPath[name]) && isLink:
			return &EscapeError{Path: where, Reason: "refusing to write through a symlink"}
		case files[name] && isDir:
			return &FileError{Path: where, Reason: "is a directory, not a file"}
		case files[name]:
			continue
		case isDir:
			fi, err := e.Info()
			if err != nil {
				return s.w.fail(err)
			}
			if err := s.w.dir.Mkdir(dst, fi.Mode().Perm()); err != nil {
				return s.w.fail(err)
			}
			if err := s.keep(name, files, onPath); err != nil {
				return err
			}
		case isLink:
			target, err := s.w.dir.Readlink(old)
			if err == nil {
				err = s.w.dir.Symlink(target, dst)
			}
			if err != nil {
				return s.w.fail(err)
			}
		default:
			if err := s.w.dir.Link(old, dst); err != nil {
				return s.w.fail(err)
			}
		}
	}
	return nil
}

// WriteFile writes a synced file at rel inside the staged directory.
func (s *Staged) WriteFile(rel string, data []byte) error {
	clean := filepath.Clean(rel)
	if filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return &EscapeError{Path: rel, Reason: "it leaves the staged directory"}
	}
	name := filepath.Join(s.tmp, clean)
	if dir := filepath.Dir(name); dir != s.tmp {
		err := s.w.fault("mkdir", dir)
		if err == nil {
			err = s.w.dir.MkdirAll(dir, 0o755)
		}
		if err != nil {
			return s.w.fail(err)
		}
	}
	return s.w.create(name, data)
}

// Commit renames the staged directory into place. If the target appeared
// meanwhile it fails with *ExistsError and the staged copy is removed. A
// Staged from StageReplace is swapped with the directory it replaces
// instead (see exchange), and the old one is removed.
func (s *Staged) Commit() error {
	if s.replace {
		return s.exchange()
	}
	err := s.w.fault("rename", s.base)
	if err == nil {
		// rename(2) replaces an empty directory but refuses a non-empty one
		// or a file, so a target that appeared keeps its content.
		err = s.w.dir.Rename(s.tmp, s.base)
	}
	if err != nil {
		s.Abort()
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
			return &ExistsError{Path: filepath.ToSlash(filepath.Join(s.w.rel, s.base))}
		}
		return s.w.fail(err)
	}
	defer s.w.dir.Close()
	return s.w.sync()
}

// exchange swaps the staged directory with the one it replaces by
// renameat2(RENAME_EXCHANGE): both names exist before and after, so there
// is no moment at which the target is missing or mixed. A file system
// without it (NFS, some FUSE mounts) gets two renames instead: the old
// directory aside, the new one in. A kill between them leaves the target
// missing and the old directory beside it under a TempPrefix+"old-" name
// (which sweeps leave alone), never a mix; a concurrent replacement that
// finds the target missing in that moment fails and changes nothing.
func (s *Staged) exchange() error {
	parent, err := s.w.dir.Open(".")
	if err != nil {
		s.Abort()
		return s.w.fail(err)
	}
	err = s.w.fault("exchange", s.base)
	if err == nil {
		fd := int(parent.Fd())
		err = unix.Renameat2(fd, s.tmp, fd, s.base, unix.RENAME_EXCHANGE)
	}
	parent.Close()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENOTSUP) {
		return s.renameAside()
	}
	if err != nil {
		s.Abort()
		return s.w.fail(err)
	}
	// s.tmp now names the old directory.
	return s.dropOld()
}

// dropOld makes the swap durable, then removes the replaced directory (now
// at s.tmp) and releases the parent.
func (s *Staged) dropOld() error {
	defer s.w.dir.Close()
	defer s.unlock()
	err := s.w.sync()
	_ = s.w.dir.RemoveAll(s.tmp)
	return err
}

// asidePrefix starts the name a replaced directory has between the two
// renames of renameAside; sweeps leave such directories alone.
const asidePrefix = TempPrefix + "old-"

func (s *Staged) renameAside() error {
	aside := asidePrefix + rand.Text()[:12]
	err := s.w.fault("rename", s.base)
	if err == nil {
		err = s.w.dir.Rename(s.base, aside)
	}
	if err != nil {
		s.Abort()
		return s.w.fail(err)
	}
	if err := s.w.dir.Rename(s.tmp, s.base); err != nil {
		_ = s.w.dir.Rename(aside, s.base)
		s.Abort()
		return s.w.fail(err)
	}
	s.tmp = aside
	return s.dropOld()
}

// Abort removes the staged directory.
func (s *Staged) Abort() {
	_ = s.w.dir.RemoveAll(s.tmp)
	s.unlock()
	s.w.dir.Close()
}

// FS is the root as an fs.FS (with Stat, Lstat, ReadLink, ReadDir and
// ReadFile) for readers that take one, such as the compiler's sources and
// the script runner. Names go through the os.Root, so ".." and symlinks
// that leave it fail; Open refuses what is neither a regular file nor a
// directory without blocking on it, and ReadFile has the same regular-file
// and size rules as Root.ReadFile.
func (r *Root) FS() fs.FS { return rootFS{r} }

type rootFS struct{ r *Root }

func (f rootFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

func wrap(op, name string, err error) error {
	var pe *fs.PathError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (f rootFS) Open(name string) (fs.File, error) {
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	file, err := f.r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, wrap("open", name, f.r.classify(name, err))
	}
	if fi, err := file.Stat(); err != nil || !fi.IsDir() {
		if err := checkRegular(name, file); err != nil {
			file.Close()
			return nil, wrap("open", name, err)
		}
	}
	return file, nil
}

func (f rootFS) ReadFile(name string) ([]byte, error) {
	if err := f.check("readfile", name); err != nil {
		return nil, err
	}
	data, err := f.r.ReadFile(name)
	return data, wrap("readfile", name, err)
}

func (f rootFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	fi, err := f.r.Stat(name)
	return fi, wrap("stat", name, err)
}

func (f rootFS) Lstat(name string) (fs.FileInfo, error) {
	if err := f.check("lstat", name); err != nil {
		return nil, err
	}
	fi, err := f.r.Lstat(name)
	return fi, wrap("lstat", name, err)
}

func (f rootFS) ReadLink(name string) (string, error) {
	if err := f.check("readlink", name); err != nil {
		return "", err
	}
	target, err := f.r.root.Readlink(name)
	if err != nil {
		return "", wrap("readlink", name, f.r.classify(name, err))
	}
	return target, nil
}

func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	entries, err := f.r.ReadDir(name)
	return entries, wrap("readdir", name, err)
}

// FSPath maps a caller's path (relative to the root, or absolute inside
// it) to the name FS and an Overlay over it take, refusing lexical escapes.
func (r *Root) FSPath(p string) (string, error) {
	rel, err := r.rel(p)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// OpenDir opens an operator's directory (extra step or pipeline catalog
// directories) for reading with the workspace's rules: regular files only,
// opened without blocking, at most maxBytes each, and symlinks followed
// only while they stay inside dir. A named pipe, a device or a symlink to
// one outside cannot stall or exhaust the reader; Skipped says why a file
// was refused.
func OpenDir(dir string, maxBytes int64) (*Root, error) {
	return New(dir, WithMaxFileBytes(maxBytes))
}

// Skipped names why a file of an operator's directory was not read, for the
// report of files left out of a catalog: a short rule ("not_regular",
// "outside", "file_size", or "read") and a reason that speaks of the
// directory rather than of a workspace.
func Skipped(err error) (rule, reason string) {
	var esc *EscapeError
	var fe *FileError
	var le *LimitError
	switch {
	case errors.As(err, &esc):
		return "outside", "it is a symlink that leads outside its directory; only files inside the directory are read"
	case errors.As(err, &le):
		return "file_size", fmt.Sprintf("it is larger than the %d-byte limit", le.Limit)
	case errors.As(err, &fe):
		return "not_regular", "it " + fe.Reason
	}
	return "read", err.Error()
}
