package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
)

// jwtVerifier validates JWTs from one OIDC issuer: signature against the
// issuer's JWKS, issuer, audience and expiry. keyfunc (on jwkset) fetches
// and caches the JWKS, refreshes it in the background every
// auth.oidc.jwks_refresh, and refetches it, rate-limited, when a token names
// a key id it has not seen. That refetch runs in the asking request alone:
// tokens under known keys read the cached set and never wait for it.
type jwtVerifier struct {
	issuer   string
	audience string
	jwksURL  string
	refresh  time.Duration
	client   *http.Client
	log      zerolog.Logger
	// missRefetch is the least time between two refetches triggered by an
	// unknown key id; fetchTimeout bounds one fetch, and also how long such
	// a token waits for the next allowed refetch.
	missRefetch  time.Duration
	fetchTimeout time.Duration

	// ctx ends the background refresh; close cancels it.
	ctx  context.Context
	stop context.CancelFunc

	// keys is built on the first token, so a server that never sees a JWT
	// never calls the issuer.
	keys       atomic.Pointer[keyfunc.Keyfunc]
	setupMu    sync.Mutex
	setupRetry *rate.Limiter
	setupErr   error
}

// unknownKidRefetch is the least time between two refetches triggered by
// an unknown key id, so a flood of forged kids cannot hammer the issuer.
const unknownKidRefetch = 10 * time.Second

const jwksFetchTimeout = 10 * time.Second

// jwksMaxBytes caps every response body from the issuer (JWKS and OIDC
// discovery); real key sets are a few KiB.
const jwksMaxBytes = 1 << 20

// cappedTransport fails a response body that grows past max bytes. jwkset
// decodes the JWKS body with no limit of its own, so the cap has to sit in
// the HTTP client it is given, or a hostile issuer could exhaust memory.
type cappedTransport struct {
	base http.RoundTripper
	max  int64
}

func (c cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	// MaxBytesReader needs no ResponseWriter to cap a body; it only tells
	// one (there is none here) that a request was too large.
	resp.Body = cappedBody{ReadCloser: http.MaxBytesReader(nil, resp.Body, c.max), max: c.max}
	return resp, nil
}

// cappedBody words MaxBytesReader's error for a response, not a request.
type cappedBody struct {
	io.ReadCloser
	max int64
}

func (b cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		err = fmt.Errorf("response body larger than %d bytes", b.max)
	}
	return n, err
}

func newJWTVerifier(cfg AuthConfig, log zerolog.Logger) *jwtVerifier {
	aud := cfg.OIDC.Audience
	if aud == "" {
		aud = cfg.ResourceURL
	}
	refresh := cfg.OIDC.JWKSRefresh
	if refresh <= 0 {
		refresh = 15 * time.Minute
	}
	ctx, stop := context.WithCancel(context.Background())
	return &jwtVerifier{
		issuer: cfg.OIDC.Issuer, audience: aud, jwksURL: cfg.OIDC.JWKSURL, refresh: refresh,
		client: &http.Client{Timeout: jwksFetchTimeout, Transport: cappedTransport{base: http.DefaultTransport, max: jwksMaxBytes}}, log: log,
		missRefetch: unknownKidRefetch, fetchTimeout: jwksFetchTimeout,
		ctx: ctx, stop: stop,
		setupRetry: rate.NewLimiter(rate.Every(unknownKidRefetch), 1),
	}
}

// close stops the background JWKS refresh.
func (v *jwtVerifier) close() { v.stop() }

// jwtMethods is the alg allow-list: asymmetric signatures only, so neither
// "none" nor an HMAC keyed with a public key can pass.
var jwtMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

func (v *jwtVerifier) verify(ctx context.Context, raw string) (identity, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		keys, err := v.keySet()
		if err != nil {
			return nil, err
		}
		// A caller hanging up must not abort a refetch it started: the
		// rate limit would then hold back the next one.
		return keys.KeyfuncCtx(context.WithoutCancel(ctx))(t)
	},
		jwt.WithValidMethods(jwtMethods),
		jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(30*time.Second),
	)
	if err != nil {
		return identity{}, err
	}
	principal, _ := claims["sub"].(string)
	for _, alt := range []string{"azp", "client_id"} {
		if principal == "" {
			principal, _ = claims[alt].(string)
		}
	}
	if principal == "" {
		return identity{}, errors.New("token has no sub, azp or client_id claim")
	}
	return identity{principal: principal, scopes: normalizeScopes(tokenScopes(claims))}, nil
}

// tokenScopes reads the OAuth "scope" claim (space-separated) and the
// "scp" claim some issuers use instead (a list or a string).
func tokenScopes(claims jwt.MapClaims) []string {
	var out []string
	if s, ok := claims["scope"].(string); ok {
		out = append(out, strings.Fields(s)...)
	}
	switch scp := claims["scp"].(type) {
	case string:
		out = append(out, strings.Fields(scp)...)
	case []any:
		for _, s := range scp {
			if str, ok := s.(string); ok {
				out = append(out, str)
			}
		}
	}
	return out
}

// keySet returns the issuer's key set, building it on first use. A failed
// build (OIDC discovery) is retried at most once per unknownKidRefetch.
func (v *jwtVerifier) keySet() (keyfunc.Keyfunc, error) {
	if k := v.keys.Load(); k != nil {
		return *k, nil
	}
	v.setupMu.Lock()
	defer v.setupMu.Unlock()
	if k := v.keys.Load(); k != nil {
		return *k, nil
	}
	if !v.setupRetry.Allow() {
		return nil, v.setupErr
	}
	k, err := v.newKeySet()
	if err != nil {
		v.setupErr = err
		return nil, err
	}
	v.keys.Store(&k)
	return k, nil
}

func (v *jwtVerifier) newKeySet() (keyfunc.Keyfunc, error) {
	jwksURL := v.jwksURL
	if jwksURL == "" {
		var err error
		if jwksURL, err = v.discoverJWKSURL(); err != nil {
			return nil, err
		}
	}
	remote, err := jwkset.NewStorageFromHTTP(jwksURL, jwkset.HTTPClientStorageOptions{
		Client:          v.client,
		Ctx:             v.ctx,
		HTTPTimeout:     v.fetchTimeout,
		RefreshInterval: v.refresh,
		// An issuer down now is asked again on the next unknown kid.
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler: func(_ context.Context, err error) {
			v.log.Warn().Err(err).Str("jwks_url", jwksURL).Msg("JWKS fetch failed; the keys fetched before (if any) stay in use")
		},
	})
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	store, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{jwksURL: remote},
		RateLimitWaitMax:  v.fetchTimeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(v.missRefetch), 1),
	})
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	// Keys published for encryption ("use": "enc") never verify a token.
	return keyfunc.New(keyfunc.Options{Storage: store, UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}})
}

// discoverJWKSURL reads jwks_uri from the issuer's OIDC discovery document.
// It stays hand-written: keyfunc starts from a JWKS URL, and the one GET
// does not justify a full OIDC client library.
func (v *jwtVerifier) discoverJWKSURL() (string, error) {
	ctx, cancel := context.WithTimeout(v.ctx, v.fetchTimeout)
	defer cancel()
	u := strings.TrimSuffix(v.issuer, "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("OIDC discovery: %w", err)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("OIDC discovery: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("OIDC discovery: GET %s: %s", u, resp.Status)
	}
	var disc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&disc); err != nil {
		return "", fmt.Errorf("OIDC discovery: %w", err)
	}
	if disc.JWKSURI == "" {
		return "", errors.New("OIDC discovery: no jwks_uri")
	}
	return disc.JWKSURI, nil
}
