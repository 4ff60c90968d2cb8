package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// Artifact kinds.
const (
	KindScript    = "script"    // one script file (script processors)
	KindSourceDir = "sourcedir" // a packed source directory (framework processors, estimators, models)
	KindGenerated = "generated" // text the compiler writes (runproc.sh)
)

// MaxSourceDirBytes bounds the uncompressed size of one packed source
// directory: a source_dir pointing at a data directory is a mistake, not
// something to upload.
const MaxSourceDirBytes = 64 << 20

// Artifact is one code object the pipeline needs in S3. Its key is
// content-addressed: <pipeline>/code/<sha256 of the bytes>/<file name>.
type Artifact struct {
	Kind   string   `json:"kind"`
	Local  string   `json:"local"` // workspace-relative file or directory ("" for generated text)
	S3URI  string   `json:"s3_uri"`
	Bucket string   `json:"bucket"`
	Key    string   `json:"key"`
	SHA256 string   `json:"sha256,omitempty"`
	Size   int      `json:"size"`
	Steps  []string `json:"steps"`
	// Missing: the local file or directory does not exist. Compiling
	// warns; uploading refuses.
	Missing bool   `json:"missing,omitempty"`
	Data    []byte `json:"-"`
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
func (s *artifactSet) add(kind, local, name string, data []byte, missing bool, step string) string {
	digest := ""
	seg := "missing"
	if !missing {
		sum := sha256.Sum256(data)
		digest = hex.EncodeToString(sum[:])
		seg = digest
	}
	key := s.pipeline + "/code/" + seg + "/" + name
	a, ok := s.byKey[key]
	if !ok {
		a = &Artifact{Kind: kind, Local: local, Bucket: s.bucket, Key: key, S3URI: "s3://" + s.bucket + "/" + key,
			SHA256: digest, Size: len(data), Missing: missing, Data: data}
		s.byKey[key] = a
		s.order = append(s.order, key)
	}
	if len(a.Steps) == 0 || a.Steps[len(a.Steps)-1] != step {
		a.Steps = append(a.Steps, step)
	}
	return a.S3URI
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

// readSource reads a workspace file; a missing file (or no workspace) is
// reported as missing, anything else is an error.
func readSource(fsys fs.FS, p string) (data []byte, missing bool, err error) {
	if fsys == nil {
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

// packSourceDir packs dir into a reproducible .tar.gz: entries sorted by
// path, fixed mtime, owner and modes, no gzip name or time. extra files
// (path → bytes) are added or replace files of the same path. Hidden
// entries and __pycache__ are skipped.
func packSourceDir(fsys fs.FS, dir string, extra map[string][]byte) (data []byte, missing bool, err error) {
	if fsys == nil {
		return nil, true, nil
	}
	dir = cleanRel(dir)
	st, err := fs.Stat(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("source dir %s: %w", dir, err)
	}
	files := map[string][]byte{}
	total := 0
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
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
			return nil // directories are implied; symlinks and devices are not packed
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += len(b)
		if total > MaxSourceDirBytes {
			return fmt.Errorf("source dir %s is larger than %d MiB; point source_dir at the scripts only", dir, MaxSourceDirBytes>>20)
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
	for k, v := range extra {
		files[k] = v
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: epoch, Typeflag: tar.TypeReg}
		if strings.HasSuffix(n, ".sh") {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, false, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, false, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, false, err
	}
	if err := gz.Close(); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), false, nil
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
