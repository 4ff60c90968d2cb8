package compiler

import (
	"context"
	"errors"
	"io/fs"
)

// These rebuild a code artifact's bytes from its source exactly as Compile
// packs them, so a consumer holding only a definition and its manifest
// (the local run) can check a source against its content address.

// PackSourceDir packs the folder dir of fsys as a sourcedir.tar.gz
// artifact with no compile-time extras; missing is true when dir is not
// there.
func PackSourceDir(ctx context.Context, fsys fs.FS, dir string) (data []byte, missing bool, err error) {
	data, err = packSourceDir(ctx, fsys, dir, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	return data, false, err
}

// PackScript packs the one file script as a sourcedir.tar.gz artifact.
func PackScript(fsys fs.FS, script string) (data []byte, missing bool, err error) {
	data, err = packScript(fsys, script, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	return data, false, err
}

// RunProc is the runproc.sh generated for a framework processor's entry
// script.
func RunProc(script string) []byte { return runProc(script) }

// DirDigest is the content address of an uploaded input folder (relative
// path → bytes).
func DirDigest(files map[string][]byte) string { return dirDigest(files) }
