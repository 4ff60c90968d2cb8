package steps

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/cursus-dev/cursus/engine/workspace"
)

// DirsStamp is a digest of the step interface files of dirs (names and
// contents), so that a changed directory is noticed whatever the clock
// granularity of its file system. A directory that cannot be read enters
// the digest as its error, so that it changes again once it can. Files are
// opened as LoadCatalog opens them (workspace.OpenDir): a named pipe, a
// device or a symlink leading out enters as its error, unread.
func DirsStamp(dirs []string) string {
	h := sha256.New()
	for _, dir := range dirs {
		fmt.Fprintf(h, "dir %q\n", dir)
		root, err := workspace.OpenDir(dir, MaxFileSize)
		if err != nil {
			fmt.Fprintf(h, "error %q\n", err)
			continue
		}
		fsys := root.FS()
		entries, err := fs.ReadDir(fsys, ".")
		if err != nil {
			root.Close()
			fmt.Fprintf(h, "error %q\n", err)
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), FileSuffix) {
				continue
			}
			sum, err := fileDigest(fsys, e.Name())
			if err != nil {
				fmt.Fprintf(h, "file %q error %q\n", e.Name(), err)
				continue
			}
			fmt.Fprintf(h, "file %q %x\n", e.Name(), sum)
		}
		root.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fileDigest is the SHA-256 of the first MaxFileSize+1 bytes of name:
// enough to see any change to a file that can load, without reading a
// huge one whole.
func fileDigest(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, MaxFileSize+1)); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
