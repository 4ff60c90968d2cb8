package localrun

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// store is S3 emulated as a local directory: object s3://<bucket>/<key>
// is the file <dir>/<bucket>/<key>. Any bucket exists. Every write counts
// against one byte budget, the run's storage limit.
type store struct {
	dir string

	mu      sync.Mutex
	used    int64
	limit   int64
	written map[string]int64 // object URI → size, for the report
}

func newStore(dir string, limit int64) *store {
	return &store{dir: dir, limit: limit, written: map[string]int64{}}
}

// splitURI splits s3://bucket/key. The key may be empty (a bucket) and
// may end in "/" (a prefix); its segments must be plain names.
func splitURI(uri string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q is not an s3:// URI", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || bucket == "." || bucket == ".." || strings.ContainsAny(bucket, `\`) {
		return "", "", fmt.Errorf("%q has no valid bucket", uri)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
		if key == "" {
			break
		}
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return "", "", fmt.Errorf("%q has a key segment the local object store cannot hold (%q)", uri, seg)
		}
	}
	return bucket, key, nil
}

// file is where the object at uri lives.
func (s *store) file(uri string) (string, error) {
	bucket, key, err := splitURI(uri)
	if err != nil {
		return "", err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return "", fmt.Errorf("%q names a prefix, not an object", uri)
	}
	return filepath.Join(s.dir, bucket, filepath.FromSlash(key)), nil
}

// reserve takes n bytes of the budget.
func (s *store) reserve(uri string, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 && s.used+n > s.limit {
		return &StorageError{What: "the local object store", Limit: s.limit}
	}
	s.used += n
	s.written[uri] += n
	return nil
}

// put writes data as the object at uri.
func (s *store) put(uri string, data []byte) error {
	p, err := s.file(uri)
	if err != nil {
		return err
	}
	if err := s.reserve(uri, int64(len(data))); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return storageErr(err)
	}
	return storageErr(writeFileAtomic(p, data))
}

// putFile copies the local file src to the object at uri.
func (s *store) putFile(uri, src string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", filepath.Base(src))
	}
	p, err := s.file(uri)
	if err != nil {
		return err
	}
	if err := s.reserve(uri, fi.Size()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return storageErr(err)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return storageErr(err)
	}
	_, err = io.Copy(tmp, io.LimitReader(in, fi.Size()))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return storageErr(err)
}

// get reads the object at uri.
func (s *store) get(uri string) ([]byte, error) {
	p, err := s.file(uri)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NoObjectsError{URI: uri}
	}
	return data, err
}

// object is one object under a prefix: its URI and its path relative to
// the prefix.
type object struct {
	URI, Rel, File string
}

// list returns the objects an S3Prefix input of uri reads, as SageMaker
// lays them out: the object named exactly uri (Rel its base name), and
// every object under uri + "/" (Rel its path below it).
func (s *store) list(uri string) ([]object, error) {
	bucket, key, err := splitURI(uri)
	if err != nil {
		return nil, err
	}
	var out []object
	base := filepath.Join(s.dir, bucket, filepath.FromSlash(strings.TrimSuffix(key, "/")))
	fi, err := os.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case fi.Mode().IsRegular() && !strings.HasSuffix(key, "/"):
		return []object{{URI: uri, Rel: path.Base(key), File: base}}, nil
	case !fi.IsDir():
		return nil, nil
	}
	prefix := strings.TrimSuffix(uri, "/")
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".put-") {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		rel = filepath.ToSlash(rel)
		out = append(out, object{URI: prefix + "/" + rel, Rel: rel, File: p})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out, err
}

// Written lists every object the run wrote with its size.
func (s *store) objects() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.written))
	for k, v := range s.written {
		out[k] = v
	}
	return out
}

func writeFileAtomic(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
