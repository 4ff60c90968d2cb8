package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
)

// catalogDigest caches the digest of one catalog view (views are
// immutable, and a reload makes a new one).
type catalogDigest struct {
	mu     sync.Mutex
	view   *catalogView
	digest string
}

// CatalogDigest is a short digest of the catalogs this server answers
// from now: every step type as loaded (built-in and the operator's
// directories) and the shared-DAG index (built-in and the operator's
// pipeline directories). Two replicas with the same
// digest resolve step types and DAGs alike; the metrics show it per pod.
func (d *Deps) CatalogDigest() string {
	// A scrape has no context of its own: it waits a moment at most for a
	// reload it triggers, then digests the catalogs still in use.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	view := d.catalogs(ctx)
	d.digest.mu.Lock()
	defer d.digest.mu.Unlock()
	if d.digest.view == view && d.digest.digest != "" {
		return d.digest.digest
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, name := range view.Steps.Names() {
		iface, _ := view.Steps.Get(name)
		_ = enc.Encode(iface) // loaded from YAML: always encodable
	}
	if index, err := view.DAGs.Index(); err == nil {
		h.Write(index)
	}
	d.digest.view, d.digest.digest = view, hex.EncodeToString(h.Sum(nil))[:16]
	return d.digest.digest
}

// WorkflowKeyID names the key new workflow run tokens are signed with.
func (d *Deps) WorkflowKeyID() string { return d.Runs.KeyID() }
