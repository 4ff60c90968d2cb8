package serving

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// extractTarGz unpacks a gzip tar into dir of root, as the platform
// unpacks model.tar.gz into /opt/ml/model and the toolkit a source
// tarball into /opt/ml/code: regular files and directories only (a link
// or device is refused), every name inside dir, at most limit bytes in
// all. field names the request field the archive came from.
func extractTarGz(ctx context.Context, root *os.Root, dir string, data []byte, limit int64, field string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return errorf(KindArchive, field, "not a gzip-compressed tar archive: %v", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errorf(KindArchive, field, "not a readable tar archive: %v", err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return errorf(KindArchive, field, "the archive holds %q, which points outside the directory it is unpacked into", h.Name)
		}
		target := path.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(target, 0o700); err != nil {
				return errorf(KindArchive, field, "unpack %s: %v", name, withoutPath(err))
			}
		case tar.TypeReg:
			total += h.Size
			if total > limit {
				return errorf(KindLimit, field, "the archive unpacks to more than the %d-byte limit", limit)
			}
			if err := root.MkdirAll(path.Dir(target), 0o700); err != nil {
				return errorf(KindArchive, field, "unpack %s: %v", name, withoutPath(err))
			}
			f, err := root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return errorf(KindArchive, field, "unpack %s: %v", name, withoutPath(err))
			}
			_, err = io.Copy(f, io.LimitReader(tr, h.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return errorf(KindArchive, field, "unpack %s: %v", name, withoutPath(err))
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
		default:
			return errorf(KindArchive, field, "the archive holds %q, a %s; only regular files and directories are unpacked here", h.Name, tarType(h.Typeflag))
		}
	}
}

func tarType(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "named pipe"
	}
	return fmt.Sprintf("entry of type %q", t)
}

// copyTree copies directory src to dst inside root (regular files and
// directories only).
func copyTree(root *os.Root, src, dst string) error {
	entries, err := fsReadDir(root, src)
	if err != nil {
		return err
	}
	if err := root.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		s, d := path.Join(src, e.Name()), path.Join(dst, e.Name())
		switch {
		case e.IsDir():
			if err := copyTree(root, s, d); err != nil {
				return err
			}
		case e.Type().IsRegular():
			b, err := root.ReadFile(s)
			if err != nil {
				return err
			}
			if err := root.WriteFile(d, b, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

func fsReadDir(root *os.Root, dir string) ([]os.DirEntry, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// withoutPath drops the server path an *os.PathError names.
func withoutPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
