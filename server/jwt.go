package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// jwtVerifier validates JWTs from one OIDC issuer: signature against the
// issuer's JWKS (cached, refreshed after auth.oidc.jwks_refresh or when a
// token names a key id not seen yet), issuer, audience and expiry.
type jwtVerifier struct {
	issuer   string
	audience string
	jwksURL  string
	refresh  time.Duration
	client   *http.Client
	now      func() time.Time

	mu      sync.Mutex
	keys    map[string]any // kid → *rsa.PublicKey | *ecdsa.PublicKey
	fetched time.Time
	// lastMissFetch rate-limits refetches triggered by unknown key ids,
	// so a flood of forged kids cannot hammer the issuer.
	lastMissFetch time.Time
}

// unknownKidRefetch is the least time between two refetches triggered by
// an unknown key id.
const unknownKidRefetch = 10 * time.Second

func newJWTVerifier(cfg AuthConfig) *jwtVerifier {
	aud := cfg.OIDC.Audience
	if aud == "" {
		aud = cfg.ResourceURL
	}
	refresh := cfg.OIDC.JWKSRefresh
	if refresh <= 0 {
		refresh = 15 * time.Minute
	}
	return &jwtVerifier{
		issuer: cfg.OIDC.Issuer, audience: aud, jwksURL: cfg.OIDC.JWKSURL, refresh: refresh,
		client: &http.Client{Timeout: 10 * time.Second}, now: time.Now,
	}
}

var jwtMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

func (v *jwtVerifier) verify(ctx context.Context, raw string) (identity, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.key(ctx, kid)
	},
		jwt.WithValidMethods(jwtMethods),
		jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(30*time.Second),
		jwt.WithTimeFunc(v.now),
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

func (v *jwtVerifier) key(ctx context.Context, kid string) (any, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	stale := v.keys == nil || now.Sub(v.fetched) >= v.refresh
	_, known := v.keys[kid]
	if stale || (!known && kid != "" && now.Sub(v.lastMissFetch) >= unknownKidRefetch) {
		if !stale {
			v.lastMissFetch = now
		}
		// Fetch on behalf of every waiter: a caller hanging up must not
		// abort it.
		keys, err := v.fetch(context.WithoutCancel(ctx))
		switch {
		case err == nil:
			v.keys, v.fetched = keys, now
		case v.keys == nil:
			return nil, err
		}
		// On a failed refresh the keys fetched before stay in use.
	}
	if kid == "" && len(v.keys) == 1 {
		for _, k := range v.keys {
			return k, nil
		}
	}
	if k, ok := v.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("no signing key with id %q in the issuer's JWKS", kid)
}

func (v *jwtVerifier) fetch(ctx context.Context) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	jwksURL := v.jwksURL
	if jwksURL == "" {
		var disc struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, strings.TrimSuffix(v.issuer, "/")+"/.well-known/openid-configuration", &disc); err != nil {
			return nil, fmt.Errorf("OIDC discovery: %w", err)
		}
		if disc.JWKSURI == "" {
			return nil, errors.New("OIDC discovery: no jwks_uri")
		}
		jwksURL = disc.JWKSURI
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := v.getJSON(ctx, jwksURL, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	keys := map[string]any{}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			continue // a key type we do not use must not hide the others
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS: no usable signing keys")
	}
	return keys, nil
}

func (v *jwtVerifier) getJSON(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}

// jwk is one JSON Web Key (RFC 7517) of type RSA or EC.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func (k jwk) publicKey() (any, error) {
	b64 := func(s string) (*big.Int, error) {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("bad base64url value in key %q", k.Kid)
		}
		return new(big.Int).SetBytes(b), nil
	}
	switch k.Kty {
	case "RSA":
		n, err := b64(k.N)
		if err != nil {
			return nil, err
		}
		e, err := b64(k.E)
		if err != nil || !e.IsInt64() || e.Int64() > 1<<31 {
			return nil, fmt.Errorf("bad RSA exponent in key %q", k.Kid)
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, fmt.Errorf("unsupported curve %q", k.Crv)
		}
		// JWK coordinates are fixed-length big-endian; the uncompressed
		// SEC 1 form is 0x04 || X || Y.
		size := (curve.Params().BitSize + 7) / 8
		x, errX := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.X, "="))
		y, errY := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.Y, "="))
		if errX != nil || errY != nil || len(x) != size || len(y) != size {
			return nil, fmt.Errorf("bad EC coordinates in key %q", k.Kid)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("EC key %q: %w", k.Kid, err)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("unsupported key type %q", k.Kty)
}
