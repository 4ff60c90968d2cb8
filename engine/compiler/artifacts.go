package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// Artifact kinds.
const (
	KindScript    = "script"    // one script file (script processors)
	KindSourceDir = "sourcedir" // a packed source directory (framework processors, estimators, models)
	KindGenerated = "generated" // text the compiler writes (runproc.sh)
	KindInput     = "input"     // a file of a step input a config field names by a local path
)

// MaxSourceDirBytes bounds the uncompressed size of one packed source
// directory: a source_dir pointing at a data directory is a mistake, not
// something to upload.
const MaxSourceDirBytes = 64 << 20

// Artifact is one code object the pipeline needs in S3. Its key is
// content-addressed: <pipeline>/code/<sha256 of the bytes>/<file name>,
// or for a file of an uploaded input folder
// <pipeline>/code/<sha256 of the folder>/<folder name>/<relative path>, so
// the folder's files share one prefix. SHA256 is that content address.
type Artifact struct {
	Kind string `json:"kind"`
	// Local is the workspace-relative file or directory, builtin:<path> for
	// built-in step code (BuiltinPrefix), "" for generated text.
	Local  string   `json:"local"`
	S3URI  string   `json:"s3_uri"`
	Bucket string   `json:"bucket"`
	Key    string   `json:"key"`
	SHA256 string   `json:"sha256,omitempty"`
	Size   int      `json:"size"`
	Steps  []string `json:"steps"`
	Data   []byte   `json:"-"`
}

// artifactSet collects artifacts, one per S3 key.
type artifactSet struct {
	bucket, pipeline string
	byKey            map[string]*Artifact
	order            []string
}

func newArtifactSet(bucket, pipeline string) *artifactSet {
	return &artifactSet{bucket: bucket, pipeline: pipeline, byKey: map[string]*Artifact{}}
}

// add registers data under its content address and returns its S3 URI.
func (s *artifactSet) add(kind, local, name string, data []byte, step string) string {
	return s.put(kind, local, digestOf(data), name, data, step)
}

// put registers data at <pipeline>/code/<digest>/<name> and returns its S3
// URI.
func (s *artifactSet) put(kind, local, digest, name string, data []byte, step string) string {
	key := s.codeKey(digest + "/" + name)
	a, ok := s.byKey[key]
	if !ok {
		a = &Artifact{Kind: kind, Local: local, Bucket: s.bucket, Key: key, S3URI: "s3://" + s.bucket + "/" + key,
			SHA256: digest, Size: len(data), Data: data}
		s.byKey[key] = a
		s.order = append(s.order, key)
	}
	if len(a.Steps) == 0 || a.Steps[len(a.Steps)-1] != step {
		a.Steps = append(a.Steps, step)
	}
	return a.S3URI
}

func (s *artifactSet) codeKey(rel string) string { return s.pipeline + "/code/" + rel }

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// addDir registers every file of a folder under one content-addressed
// prefix, <pipeline>/code/<folder digest>/<name>/, and returns the prefix's
// S3 URI. files maps paths relative to the folder (local) to their bytes.
func (s *artifactSet) addDir(local, name string, files map[string][]byte, step string) string {
	digest := dirDigest(files)
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		s.put(KindInput, path.Join(local, rel), digest, name+"/"+rel, files[rel], step)
	}
	return "s3://" + s.bucket + "/" + s.codeKey(digest+"/"+name+"/")
}

// dirDigest is the content address of a folder: the sha256 over its
// files' sorted relative paths and the sha256 of each file. Paths are
// length-prefixed and digests fixed-length, so no two folders share an
// encoding.
func dirDigest(files map[string][]byte) string {
	h := sha256.New()
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		sum := sha256.Sum256(files[rel])
		fmt.Fprintf(h, "%d:%s%x", len(rel), rel, sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *artifactSet) list() []Artifact {
	out := make([]Artifact, 0, len(s.order))
	keys := append([]string(nil), s.order...)
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, *s.byKey[k])
	}
	return out
}

// readSource reads a workspace file; a missing file (or no workspace, or
// an absolute local path, which a Cursus config may hold and the workspace
// cannot serve) is reported as missing, anything else is an error.
func readSource(fsys fs.FS, p string) (data []byte, missing bool, err error) {
	if fsys == nil || path.IsAbs(p) {
		return nil, true, nil
	}
	p = cleanRel(p)
	data, err = fs.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return data, false, nil
}

func cleanRel(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if p == "" {
		return "."
	}
	return p
}

// epoch is the modification time of every packed entry, so the tarball
// depends on content only.
var epoch = time.Unix(0, 0).UTC()

// errTooLarge marks a folder over MaxSourceDirBytes.
var errTooLarge = fmt.Errorf("larger than %d MiB", MaxSourceDirBytes>>20)

// collectDir reads the files under dir, keyed by their path relative to
// it. Hidden entries and __pycache__ are skipped, and so are symlinks and
// devices; the total is bounded by MaxSourceDirBytes. A dir that does not
// exist (or is a file, or an absolute local path, or no workspace) is
// missing. It stops when ctx ends.
func collectDir(ctx context.Context, fsys fs.FS, dir string) (files map[string][]byte, missing bool, err error) {
	if fsys == nil || path.IsAbs(dir) {
		return nil, true, nil
	}
	dir = cleanRel(dir)
	st, err := fs.Stat(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("folder %s: %w", dir, err)
	}
	files = map[string][]byte{}
	total := 0
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, ".") || name == "__pycache__") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // directories are implied; symlinks and devices are not shipped
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += len(b)
		if total > MaxSourceDirBytes {
			return fmt.Errorf("%s is %w", dir, errTooLarge)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		if dir == "." {
			rel = p
		}
		files[rel] = b
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return files, false, nil
}

// packSourceDir packs dir into a reproducible .tar.gz: entries sorted by
// path, fixed mtime, owner and modes, no gzip name or time. extra files
// (path → bytes) are added or replace files of the same path. The files
// are those collectDir keeps.
func packSourceDir(ctx context.Context, fsys fs.FS, dir string, extra map[string][]byte) ([]byte, error) {
	files, missing, err := collectDir(ctx, fsys, dir)
	return packCollected(files, missing, err, dir, extra)
}

// packCollected packs what collectDir gave for dir.
func packCollected(files map[string][]byte, missing bool, err error, dir string, extra map[string][]byte) ([]byte, error) {
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("source dir %w; point source_dir at the scripts only", err)
	}
	if err != nil {
		return nil, err
	}
	if missing {
		return nil, fmt.Errorf("source dir %s: %w", cleanRel(dir), fs.ErrNotExist)
	}
	return packFiles(files, extra)
}

// packScript packs one script, at the tarball's root, with the extra
// files: the source directory of a step that has none configured.
func packScript(fsys fs.FS, script string, extra map[string][]byte) ([]byte, error) {
	b, err := fs.ReadFile(fsys, cleanRel(script))
	if err != nil {
		return nil, err
	}
	return packFiles(map[string][]byte{path.Base(script): b}, extra)
}

// packFiles writes files and extra (which wins on the same path) as a
// reproducible .tar.gz.
func packFiles(files, extra map[string][]byte) ([]byte, error) {
	for k, v := range extra {
		files[k] = v
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	key := packKey(names, files)
	if b, ok := packed.get(key); ok {
		return b, nil
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: epoch, Typeflag: tar.TypeReg}
		if strings.HasSuffix(n, ".sh") {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	b := slices.Clip(buf.Bytes())
	packed.put(key, b)
	return b, nil
}

// runProc is the entry script of a framework processor: unpack the source
// directory, install its requirements if it has any, run the script with
// the job arguments.
func runProc(script string) []byte {
	return []byte(`#!/bin/bash
# Generated by cursus: unpack the step's source directory and run its script.
set -euo pipefail
cd ` + "/opt/ml/processing/input/code/" + `
tar -xzf sourcedir.tar.gz
if [[ -f requirements.txt ]]; then
  python -m pip install -r requirements.txt
fi
python ` + shellQuote(script) + ` "$@"
`)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
