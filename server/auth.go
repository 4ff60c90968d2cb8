package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/registry"
)

// identity is an authenticated caller.
type identity struct {
	principal string
	scopes    []string
}

var (
	errNoCredentials  = errors.New("missing bearer token")
	errBadCredentials = errors.New("invalid bearer token")
)

// authenticator checks the Authorization header against static tokens
// and/or OIDC-issued JWTs. Tokens are accepted only in that header, never
// in a query string.
type authenticator struct {
	cfg     AuthConfig
	baseURL string // mcp.base_url
	static  *tokenFile
	oidc    *jwtVerifier
	log     zerolog.Logger
	// failures charges each invalid token to its caller's address
	// (limits.auth_failures_per_minute; nil = no limit).
	failures *rateLimiter
	perMin   int
}

// newAuthenticator returns nil when no authentication is configured.
func newAuthenticator(cfg Config, log zerolog.Logger) *authenticator {
	if !cfg.Auth.Enabled() {
		return nil
	}
	a := &authenticator{cfg: cfg.Auth, baseURL: cfg.MCP.BaseURL, log: log, perMin: cfg.Limits.AuthFailuresPerMinute}
	if a.perMin > 0 {
		a.failures = newRateLimiter(a.perMin, time.Now)
	}
	if cfg.Auth.TokensFile != "" {
		a.static = newTokenFile(cfg.Auth.TokensFile, log)
	}
	if cfg.Auth.OIDC.Issuer != "" {
		a.oidc = newJWTVerifier(cfg.Auth, log)
	}
	return a
}

// close stops the background JWKS refresh, if any.
func (a *authenticator) close() {
	if a != nil && a.oidc != nil {
		a.oidc.close()
	}
}

// CheckAuth loads what can be checked before serving (the tokens file), so
// a bad file stops startup with its line named instead of refusing every
// request later.
func CheckAuth(cfg AuthConfig) error {
	if cfg.TokensFile == "" {
		return nil
	}
	_, err := loadTokens(cfg.TokensFile)
	return err
}

func (a *authenticator) authenticate(r *http.Request) (identity, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return identity{}, errNoCredentials
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return identity{}, errBadCredentials
	}
	if a.static != nil {
		if id, ok := a.static.lookup(token); ok {
			return id, nil
		}
	}
	if a.oidc != nil && strings.Count(token, ".") == 2 {
		id, err := a.oidc.verify(r.Context(), token)
		if err == nil {
			return id, nil
		}
		// The reason helps operators; the token itself is never logged.
		a.log.Debug().Err(err).Str("request_id", requestIDFrom(r.Context())).Msg("jwt rejected")
	}
	return identity{}, errBadCredentials
}

// middleware authenticates every request it guards. A failure is a 401
// whose WWW-Authenticate header points at the RFC 9728 metadata, so MCP
// clients can discover the authorization server.
func (a *authenticator) middleware(m *metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if a == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// An address that has used up its failed logins is refused
			// before its token is looked at, so guessing stops there.
			// Before authentication the caller key is the address.
			key := rateKey(r)
			if a.failures != nil {
				if spent, wait := a.failures.exhausted(key); spent {
					m.rateLimited.WithLabelValues("auth").Inc()
					secs := int(math.Ceil(wait.Seconds()))
					w.Header().Set("Retry-After", strconv.Itoa(secs))
					writeJSON(w, http.StatusTooManyRequests, registry.Fail(registry.CodeRateLimited,
						fmt.Sprintf("too many failed logins from this address: the limit is %d invalid tokens per minute (limits.auth_failures_per_minute)", a.perMin)).
						Suggest(fmt.Sprintf("Check the token, then retry after %d s (the Retry-After header).", secs)).Encode())
					return
				}
			}
			id, err := a.authenticate(r)
			if err != nil {
				reason, challenge := "missing", a.challenge(r)
				if !errors.Is(err, errNoCredentials) {
					reason, challenge = "invalid", a.challenge(r, `error="invalid_token"`)
					if a.failures != nil {
						a.failures.allow(key)
					}
				}
				m.authFailures.WithLabelValues(reason).Inc()
				w.Header().Set("WWW-Authenticate", challenge)
				writeJSON(w, http.StatusUnauthorized, registry.Fail(registry.CodeUnauthenticated, a.unauthenticatedMessage()).Encode())
				return
			}
			// remoteCaller, on every authenticated route, makes the identity
			// the caller's.
			stateFrom(r.Context()).setIdentity(id)
			next.ServeHTTP(w, r)
		})
	}
}

// base is the public URL of this server: the origin of auth.resource_url
// when set, else mcp.base_url, else (last resort, since any client can
// send any Host) the request's scheme and Host.
func (a *authenticator) base(r *http.Request) string {
	if p, err := url.Parse(a.cfg.ResourceURL); err == nil && p.Host != "" {
		return p.Scheme + "://" + p.Host
	}
	if a.baseURL != "" {
		return strings.TrimRight(a.baseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

const protectedResourcePath = "/.well-known/oauth-protected-resource"

func (a *authenticator) metadataURL(r *http.Request) string {
	return a.base(r) + protectedResourcePath
}

// usesOAuth reports whether an authorization server issues tokens for this
// server. Only then is there RFC 9728 metadata to publish: the MCP
// authorization spec requires it to list authorization_servers, and a
// client given metadata without one falls back to dynamic client
// registration against this server, which has no such endpoint.
func (a *authenticator) usesOAuth() bool { return a.cfg.OIDC.Issuer != "" }

// challenge is the WWW-Authenticate value of a 401 or 403: it points at
// the RFC 9728 metadata when there is any, and is a plain Bearer challenge
// for static tokens.
func (a *authenticator) challenge(r *http.Request, params ...string) string {
	if a.usesOAuth() {
		params = append(params, fmt.Sprintf("resource_metadata=%q", a.metadataURL(r)))
	} else {
		params = append([]string{`realm="cursus"`}, params...)
	}
	return "Bearer " + strings.Join(params, ", ")
}

// unauthenticatedMessage says what to send and where a token comes from,
// since a client's own wording (e.g. a failed OAuth flow) rarely does.
func (a *authenticator) unauthenticatedMessage() string {
	msg := "authentication required: send a bearer token in the header 'Authorization: Bearer <token>'; "
	if a.usesOAuth() {
		return msg + "get one from the authorization server " + a.cfg.OIDC.Issuer + " or ask this server's operator"
	}
	return msg + "this server does not issue tokens: ask its operator for one"
}

// handleProtectedResource serves the RFC 9728 document.
func (a *authenticator) handleProtectedResource() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		resource := a.cfg.ResourceURL
		if resource == "" {
			resource = a.base(r) + "/mcp"
		}
		doc := map[string]any{
			"resource":                 resource,
			"resource_name":            "cursus",
			"scopes_supported":         []string{registry.ScopeRead, registry.ScopeWrite, registry.ScopeExec},
			"bearer_methods_supported": []string{"header"},
		}
		if a.cfg.OIDC.Issuer != "" {
			doc["authorization_servers"] = []string{a.cfg.OIDC.Issuer}
		}
		body, _ := json.Marshal(doc)
		writeJSON(w, http.StatusOK, body)
	}
}

// registrationPath is where OAuth clients that find no authorization
// server metadata try dynamic client registration (RFC 7591): the MCP SDKs
// fall back to the resource's own origin.
const registrationPath = "/register"

// handleNoRegistration answers such a registration attempt on a server with
// static tokens only. An RFC 7591 error body is what clients show (a bare
// 404 became "Dynamic Client Registration rejected (HTTP 404)"), so it
// says what to send instead.
func (a *authenticator) handleNoRegistration() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		body, _ := json.Marshal(map[string]string{
			"error":             "invalid_client_metadata",
			"error_description": "this server does not use OAuth; " + a.unauthenticatedMessage(),
		})
		writeJSON(w, http.StatusBadRequest, body)
	}
}

// normalizeScopes keeps the scopes cursus knows; write and exec imply read,
// since a caller trusted to change things may also look. The result is
// never nil, so the registry checks scopes for every authenticated caller.
func normalizeScopes(in []string) []string {
	out := []string{}
	for _, s := range in {
		switch s {
		case registry.ScopeRead, registry.ScopeWrite, registry.ScopeExec:
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) > 0 && !slices.Contains(out, registry.ScopeRead) {
		out = append(out, registry.ScopeRead)
	}
	slices.Sort(out)
	return out
}

// tokenFile is the static bearer tokens, held as SHA-256 digests and
// re-read when the file changes (checked at most once a second), so a
// rotated Kubernetes secret takes effect without a restart.
type tokenFile struct {
	path string
	log  zerolog.Logger
	now  func() time.Time

	mu      sync.Mutex
	checked time.Time
	modTime time.Time
	size    int64
	entries []tokenEntry
}

type tokenEntry struct {
	digest    [sha256.Size]byte
	principal string
	scopes    []string
}

// tokenRecheck is how often the file's mtime is looked at.
const tokenRecheck = time.Second

func newTokenFile(path string, log zerolog.Logger) *tokenFile {
	t := &tokenFile{path: path, log: log, now: time.Now}
	t.mu.Lock()
	t.reload()
	t.mu.Unlock()
	return t
}

// reload re-reads the file if it changed; on error the previous tokens
// stay in force (a half-written file must not lock everyone out). Holds mu.
func (t *tokenFile) reload() {
	t.checked = t.now()
	fi, err := os.Stat(t.path)
	if err != nil {
		t.log.Error().Err(err).Msg("auth.tokens_file: cannot stat; keeping the tokens loaded before")
		return
	}
	if fi.ModTime().Equal(t.modTime) && fi.Size() == t.size {
		return
	}
	entries, err := loadTokens(t.path)
	if err != nil {
		t.log.Error().Err(err).Msg("auth.tokens_file: cannot load; keeping the tokens loaded before")
		return
	}
	t.entries, t.modTime, t.size = entries, fi.ModTime(), fi.Size()
	t.log.Info().Int("tokens", len(entries)).Msg("auth.tokens_file loaded")
}

func (t *tokenFile) lookup(token string) (identity, bool) {
	digest := sha256.Sum256([]byte(token))
	t.mu.Lock()
	if t.now().Sub(t.checked) >= tokenRecheck {
		t.reload()
	}
	entries := t.entries
	t.mu.Unlock()
	// Compare with every entry, without stopping at a match, so timing
	// says nothing about which entry (if any) matched.
	match := -1
	for i := range entries {
		if subtle.ConstantTimeCompare(digest[:], entries[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return identity{}, false
	}
	return identity{principal: entries[match].principal, scopes: entries[match].scopes}, true
}

// loadTokens parses a tokens file: one "TOKEN PRINCIPAL [SCOPES]" per line,
// TOKEN either the token itself or sha256:<64 hex digits>, SCOPES a comma
// list of read, write, exec (default read); # starts a comment. Errors
// name the line, never the token.
func loadTokens(path string) ([]tokenEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth.tokens_file: %w", err)
	}
	var out []tokenEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 2 || len(fields) > 3 {
			return nil, fmt.Errorf("auth.tokens_file %s line %d: want TOKEN PRINCIPAL [SCOPES]", path, line)
		}
		e := tokenEntry{principal: fields[1], scopes: []string{registry.ScopeRead}}
		if hexDigest, ok := strings.CutPrefix(fields[0], "sha256:"); ok {
			b, err := hex.DecodeString(hexDigest)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("auth.tokens_file %s line %d: sha256: needs 64 hex digits", path, line)
			}
			copy(e.digest[:], b)
		} else {
			e.digest = sha256.Sum256([]byte(fields[0]))
		}
		if len(fields) == 3 {
			scopes := strings.Split(fields[2], ",")
			for _, s := range scopes {
				if s != registry.ScopeRead && s != registry.ScopeWrite && s != registry.ScopeExec {
					return nil, fmt.Errorf("auth.tokens_file %s line %d: unknown scope %q (use read, write, exec)", path, line, s)
				}
			}
			e.scopes = normalizeScopes(scopes)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth.tokens_file %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("auth.tokens_file %s: no tokens", path)
	}
	return out, nil
}
