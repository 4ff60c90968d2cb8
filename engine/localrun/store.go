package localrun

import (
	"context"
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

	"github.com/cursus-dev/cursus/engine/sagemaker"
)

// Remote is a real S3 the local run reads from and writes through to;
// *sagemaker.Client is one. Get returns an error that is fs.ErrNotExist
// for a missing object and reads at most limit bytes (0: no limit).
type Remote interface {
	Get(ctx context.Context, bucket, key string, limit int64) ([]byte, error)
	List(ctx context.Context, bucket, prefix string) ([]sagemaker.ObjectInfo, error)
	Put(ctx context.Context, bucket, key string, data []byte) error
}

// RemoteError is a call to the configured S3 that failed. Its message
// names the object and the cause, never the endpoint.
type RemoteError struct {
	Op  string // "read", "list" or "write"
	URI string
	Err error
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("S3 %s of %s failed: %v", e.Op, e.URI, e.Err)
}

func (e *RemoteError) Unwrap() error { return e.Err }

// store is S3 emulated as a local directory: object s3://<bucket>/<key>
// is the file <dir>/<bucket>/<key>. Any bucket exists. Every write counts
// against one byte budget, the run's storage limit.
//
// With a remote, the directory is the working copy of a real S3: an
// object the directory lacks is read from the remote (and kept, counted
// against the budget), and every object a job produces is written
// through to the remote as well. Code and sample data stay local.
type store struct {
	dir    string
	ctx    context.Context // the run's, for remote calls
	remote Remote

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

// reserve takes n bytes of the budget for an object the run writes.
func (s *store) reserve(uri string, n int64) error {
	if err := s.take(n); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written[uri] += n
	return nil
}

// take takes n bytes of the budget.
func (s *store) take(n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 && s.used+n > s.limit {
		return &StorageError{What: "the local object store", Limit: s.limit}
	}
	s.used += n
	return nil
}

// left is how much of the budget is left (0: no limit).
func (s *store) left() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit <= 0 {
		return 0
	}
	return max(s.limit-s.used, 1)
}

// put writes data as the object at uri, through to the remote if any.
func (s *store) put(uri string, data []byte) error {
	if err := s.putLocal(uri, data); err != nil {
		return err
	}
	return s.push(uri, data)
}

// putLocal writes data as the object at uri in the directory alone.
func (s *store) putLocal(uri string, data []byte) error {
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

// push writes the object at uri through to the remote.
func (s *store) push(uri string, data []byte) error {
	if s.remote == nil {
		return nil
	}
	bucket, key, err := splitURI(uri)
	if err != nil {
		return err
	}
	if err := s.remote.Put(s.ctx, bucket, key, data); err != nil {
		return &RemoteError{Op: "write", URI: uri, Err: err}
	}
	return nil
}

// putFile copies the local file src to the object at uri, through to the
// remote if any.
func (s *store) putFile(uri, src string) error {
	if err := s.putFileLocal(uri, src); err != nil {
		return err
	}
	if s.remote == nil {
		return nil
	}
	p, _ := s.file(uri)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return s.push(uri, data)
}

// putFileLocal copies the local file src to the object at uri in the
// directory alone.
func (s *store) putFileLocal(uri, src string) error {
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
	if errors.Is(err, fs.ErrNotExist) && s.remote != nil {
		bucket, key, _ := splitURI(uri)
		data, err = s.fetch(uri, bucket, key, p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NoObjectsError{URI: uri}
	}
	return data, err
}

// fetch reads the object at uri (bucket, key) from the remote and keeps
// it at p, counted against the budget. A missing object is
// fs.ErrNotExist.
func (s *store) fetch(uri, bucket, key, p string) ([]byte, error) {
	data, err := s.remote.Get(s.ctx, bucket, key, s.left())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if _, big := errors.AsType[*sagemaker.ObjectTooLargeError](err); big {
		return nil, &StorageError{What: "reading " + uri + " from S3", Limit: s.limit}
	}
	if err != nil {
		return nil, &RemoteError{Op: "read", URI: uri, Err: err}
	}
	if err := s.take(int64(len(data))); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, storageErr(err)
	}
	return data, storageErr(writeFileAtomic(p, data))
}

// pull copies into the directory every remote object an S3Prefix input
// of uri reads (the object named exactly uri and those under uri/) that
// the directory lacks. A remote key the directory cannot hold safely is
// an error naming it.
func (s *store) pull(uri, bucket, key string) error {
	base := strings.TrimSuffix(key, "/")
	objs, err := s.remote.List(s.ctx, bucket, base)
	if err != nil {
		return &RemoteError{Op: "list", URI: uri, Err: err}
	}
	for _, o := range objs {
		under := base == "" || strings.HasPrefix(o.Key, base+"/")
		exact := o.Key == base && !strings.HasSuffix(key, "/")
		if !under && !exact || strings.HasSuffix(o.Key, "/") {
			continue // a sibling sharing the prefix, or a folder marker
		}
		ouri := "s3://" + bucket + "/" + o.Key
		p, err := s.file(ouri)
		if err != nil {
			return fmt.Errorf("S3 object %s cannot be read into the local working copy: %v", ouri, err)
		}
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if _, err := s.fetch(ouri, bucket, o.Key, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
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
	if s.remote != nil {
		if err := s.pull(uri, bucket, key); err != nil {
			return nil, err
		}
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
