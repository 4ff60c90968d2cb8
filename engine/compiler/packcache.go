package compiler

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"maps"
	"slices"
	"sync"
)

// packed keeps the tarballs packFiles made, keyed by a digest of what went
// in (every path and its bytes), so compiling the same step code again
// reuses the tarball instead of compressing it again: gzip at its best
// compression was half of compiling the shared DAGs. A changed file, a
// caller's overlay or another generated file gives another digest, so a
// stale tarball is never served. Bounded in entries and bytes; the oldest
// entry goes first.
var packed = packCache{max: 128, maxBytes: 32 << 20}

type packCache struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	bytes    int
	order    [][sha256.Size]byte
	m        map[[sha256.Size]byte][]byte
}

// packKey digests names (sorted) and their contents, each length-prefixed
// so that no two different inputs run together into the same stream.
func packKey(names []string, files map[string][]byte) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, name := range names {
		binary.LittleEndian.PutUint64(n[:], uint64(len(name)))
		h.Write(n[:])
		h.Write([]byte(name))
		binary.LittleEndian.PutUint64(n[:], uint64(len(files[name])))
		h.Write(n[:])
		h.Write(files[name])
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// get returns the tarball under key. It is shared, like every artifact's
// Data, which nothing modifies (artifacts are uploaded or unpacked).
func (c *packCache) get(key [sha256.Size]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[key]
	return b, ok
}

func (c *packCache) put(key [sha256.Size]byte, b []byte) {
	if len(b) > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[sha256.Size]byte][]byte{}
	}
	if _, ok := c.m[key]; ok {
		return
	}
	for len(c.order) > 0 && (len(c.order) >= c.max || c.bytes+len(b) > c.maxBytes) {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old])
		delete(c.m, old)
	}
	c.m[key] = slices.Clip(b)
	c.order = append(c.order, key)
	c.bytes += len(b)
}

// builtinDirs holds the files collectDir read from a folder of the
// built-in step code (stepcode.FS), which never changes: each compile
// packing a built-in step's folder read every file of it again.
var builtinDirs sync.Map // dir → map[string][]byte

// packBuiltinDir is packSourceDir for a folder of the built-in step code.
func packBuiltinDir(ctx context.Context, fsys fs.FS, dir string, extra map[string][]byte) ([]byte, error) {
	if v, ok := builtinDirs.Load(dir); ok {
		return packFiles(maps.Clone(v.(map[string][]byte)), extra) // packFiles adds extra to the map
	}
	files, missing, err := collectDir(ctx, fsys, dir)
	if err == nil && !missing {
		builtinDirs.Store(dir, maps.Clone(files))
	}
	return packCollected(files, missing, err, dir, extra)
}
