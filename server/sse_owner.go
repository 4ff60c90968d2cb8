package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/cursus-dev/cursus/registry"
)

// sseOwners binds legacy SSE session ids to the caller who opened the
// stream. mcp-go answers a POST /message on any live session id and writes
// the response on that session's stream, so another caller holding the id
// could read into, and write onto, someone else's stream. Each id carries
// an HMAC of its owner (principal, or client address without
// authentication) under a per-process key, so the check needs no table.
// With the shared store (shared), a stream another replica holds is
// checked against its record there instead, and the POST is forwarded.
type sseOwners struct {
	key    [32]byte
	shared *sharedSessions
}

func newSSEOwners() *sseOwners {
	o := &sseOwners{}
	_, _ = rand.Read(o.key[:]) // crypto/rand does not fail on supported platforms
	return o
}

// tag is the owner's HMAC of nonce.
func (o *sseOwners) tag(nonce, owner string) string {
	m := hmac.New(sha256.New, o.key[:])
	m.Write([]byte(nonce))
	m.Write([]byte{0})
	m.Write([]byte(owner))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// generate is the SSE server's session id generator.
func (o *sseOwners) generate(_ context.Context, r *http.Request) (string, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	return nonce + o.tag(nonce, rateKey(r)), nil
}

// check refuses a POST /message on a session the caller did not open with
// 404, the answer for an unknown session. With the shared store, a stream
// held by another replica passes when its record names this caller, and
// the request carries that replica (sseHolder) to handleMessage.
func (o *sseOwners) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("sessionId")
		if len(id) == 64 && hmac.Equal([]byte(id[32:]), []byte(o.tag(id[:32], rateKey(r)))) {
			next.ServeHTTP(w, r)
			return
		}
		if o.shared != nil && len(id) == 64 {
			holder, err := o.shared.sseHolder(r.Context(), id, rateKey(r))
			if err != nil {
				writeStoreDown(w)
				return
			}
			if holder != "" {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sseHolderKey{}, holder)))
				return
			}
		}
		sseNotFound(w)
	})
}

type sseHolderKey struct{}

func sseNotFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, registry.Fail(registry.CodeNotFound,
		"SSE session not found: it ended or was opened by another caller; open /sse again").Encode())
}

// handleMessage is POST /message: mcp-go's handler for a stream held
// here, else (check found it in the shared store) the message forwarded to
// the replica holding it, answered 202 as mcp-go answers.
func (s *Server) handleMessage() http.Handler {
	local := s.sse.MessageHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		holder, ok := r.Context().Value(sseHolderKey{}).(string)
		if !ok {
			local.ServeHTTP(w, r)
			return
		}
		delivered, err := s.shared.forward(r.Context(), holder, forwardMessage(r))
		switch {
		case err != nil:
			writeStoreDown(w)
		case !delivered:
			sseNotFound(w)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}
