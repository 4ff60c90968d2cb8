package pipelines

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"

	"github.com/cursus-dev/cursus/engine/workspace"
)

// DirsStamp is a digest of what Load reads from the extra directories dirs:
// each one's catalog_index.json and <framework>/<name>.dag.json files
// (names and contents). A changed directory changes it whatever the clock
// granularity of its file system; a directory or file that cannot be read
// enters as its error, so the stamp changes again once it can. Files are
// opened as Load opens them (workspace.OpenDir): a named pipe, a device or
// a symlink leading out enters as its error, unread.
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
		files, problems := dagFiles(fsys, dir)
		for _, p := range problems {
			fmt.Fprintf(h, "problem %q\n", p.String())
		}
		for _, name := range append([]string{IndexFile}, files...) {
			sum, err := fileDigest(fsys, name)
			if err != nil {
				fmt.Fprintf(h, "file %q error %q\n", name, err)
				continue
			}
			fmt.Fprintf(h, "file %q %x\n", name, sum)
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
