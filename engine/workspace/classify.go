package workspace

import (
	"errors"
	"fmt"
	"syscall"
)

// InvalidPathError is a path the file system cannot use as the caller gave
// it: a name too long, a file where a directory must be, a directory where
// a file must be. The caller's mistake, not the server's.
type InvalidPathError struct {
	Path   string // as the caller gave it
	Reason string
}

func (e *InvalidPathError) Error() string {
	p := e.Path
	if len(p) > 80 {
		p = p[:77] + "..."
	}
	return fmt.Sprintf("path %q %s", p, e.Reason)
}

// classify turns the operating-system errors that only a caller's path can
// cause into an InvalidPathError naming that path (not the absolute one the
// error carries); every other error passes unchanged.
func classify(p string, err error) error {
	var reason string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENAMETOOLONG):
		reason = "is too long (at most 255 bytes a name, 4095 a path)"
	case errors.Is(err, syscall.ENOTDIR):
		reason = "goes through a file as if it were a directory"
	case errors.Is(err, syscall.EISDIR):
		reason = "is a directory, not a file"
	default:
		return err
	}
	return &InvalidPathError{Path: p, Reason: reason}
}
