package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
)

// StampDirs is a digest of the files pick chooses in each of dirs (names
// and contents), so that a changed directory is noticed whatever the clock
// granularity of its file system. A directory or file that cannot be read
// enters as its error, and each note pick returns (a file it could not
// consider) enters as it is, so the stamp changes again once they clear.
// Directories are opened as the loaders open them (OpenDir): a named
// pipe, a device or a symlink leading out enters as its error, unread.
// Each file counts up to maxFileSize+1 bytes: enough to see any change to
// one that can load, without reading a huge one whole.
func StampDirs(dirs []string, maxFileSize int64, pick func(fsys fs.FS, dir string) (files, notes []string)) string {
	h := sha256.New()
	for _, dir := range dirs {
		fmt.Fprintf(h, "dir %q\n", dir)
		root, err := OpenDir(dir, maxFileSize)
		if err != nil {
			fmt.Fprintf(h, "error %q\n", err)
			continue
		}
		fsys := root.FS()
		files, notes := pick(fsys, dir)
		for _, n := range notes {
			fmt.Fprintf(h, "note %q\n", n)
		}
		for _, name := range files {
			sum, err := fileDigest(fsys, name, maxFileSize)
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

// fileDigest is the SHA-256 of the first maxFileSize+1 bytes of name.
func fileDigest(fsys fs.FS, name string, maxFileSize int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxFileSize+1)); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
