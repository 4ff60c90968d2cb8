package server

import (
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/registry"
)

// remoteCaller marks requests as coming from a remote caller on the given
// transport, so gates apply; the request state's caller() is then the
// caller of its tool calls, with the identity authentication found, and
// the state's guards are the limits its MCP tool calls pass (see
// admitMCPCall). observeHTTP (for the request state) runs before it.
func (g *guards) remoteCaller(transport string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st := stateFrom(r.Context())
			st.transport, st.guards, st.callerKey = transport, g, rateKey(r)
			next.ServeHTTP(w, r)
		})
	}
}

// checkOrigin refuses a request whose Origin header is present and not on
// the allow-list (DNS-rebinding protection). Requests without an Origin
// (curl, SDK clients) pass. An allow-list entry matches scheme and host,
// and its port when it names one: "http://localhost:3000" admits that
// port only, while "http://localhost" admits local tools on any port.
func checkOrigin(allowed []string) func(http.Handler) http.Handler {
	type origin struct{ scheme, host, port string }
	var list []origin
	wildcard := false
	for _, a := range allowed {
		if a == "*" {
			wildcard = true
			continue
		}
		if u, err := url.Parse(a); err == nil {
			list = append(list, origin{strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()})
		}
	}
	admitted := func(o string) bool {
		u, err := url.Parse(o)
		if err != nil {
			return false
		}
		scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
		return slices.ContainsFunc(list, func(a origin) bool {
			return a.scheme == scheme && a.host == host && (a.port == "" || a.port == port)
		})
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o := r.Header.Get("Origin")
			if o == "" || wildcard || admitted(o) {
				next.ServeHTTP(w, r)
				return
			}
			writeJSON(w, http.StatusForbidden, registry.Fail(registry.CodeForbidden, "origin "+strings.ReplaceAll(o, "\n", "")+" is not allowed").Encode())
		})
	}
}

// limitBody caps request bodies; a larger one gets 413 when it is read.
// A body with a Content-Length needs no reader of its own: net/http stops
// it at that length, which is within the cap once checked here.
func limitBody(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > max {
				writeJSON(w, http.StatusRequestEntityTooLarge, registry.Fail(registry.CodeInvalidInput, "request body too large").Encode())
				return
			}
			if r.ContentLength < 0 {
				r.Body = http.MaxBytesReader(w, r.Body, max)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// recoverer turns a panic outside a tool (tool panics are contained by the
// registry) into a 500 and a logged stack.
func recoverer(log zerolog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.Error().Interface("panic", v).Bytes("stack", debug.Stack()).Str("path", r.URL.Path).Msg("http handler panicked")
					writeJSON(w, http.StatusInternalServerError, registry.Fail(registry.CodeInternal, "internal error").Encode())
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}
