package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rs/zerolog"
)

const (
	readToken  = "read-token-0123456789abcdef"
	writeToken = "write-token-fedcba9876543210"
)

func writeTokens(t *testing.T) string {
	t.Helper()
	digest := sha256.Sum256([]byte(writeToken))
	path := filepath.Join(t.TempDir(), "tokens")
	content := "# token principal scopes\n" +
		readToken + " alice read\n" +
		"sha256:" + hex.EncodeToString(digest[:]) + " bob write\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStaticTokens(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1",
	})
	resp, env := o.call(t, "tools.help", `{}`, nil)
	if resp.StatusCode != 401 || env["code"] != "unauthenticated" || resp.Header.Get("WWW-Authenticate") != `Bearer realm="cursus"` {
		t.Fatalf("no token: %d %q %v", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), env)
	}
	resp, _ = o.call(t, "tools.help", `{}`, bearer("not-a-token"))
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || h != `Bearer realm="cursus", error="invalid_token"` {
		t.Fatalf("bad token: %d %q", resp.StatusCode, h)
	}
	resp, _ = o.call(t, "tools.help", `{}`, map[string]string{"Authorization": "Basic " + readToken})
	if resp.StatusCode != 401 {
		t.Fatalf("basic scheme accepted: %d", resp.StatusCode)
	}
	if resp, _ := o.call(t, "tools.help", `{}`, bearer(readToken)); resp.StatusCode != 200 {
		t.Fatalf("read token on a read tool: %d", resp.StatusCode)
	}
	// A read-only token on a writing tool the deployment enables: 403.
	resp, env = o.call(t, "testonly.write", `{}`, bearer(readToken))
	if resp.StatusCode != 403 || env["code"] != "forbidden" {
		t.Fatalf("read token on a write tool: %d %v", resp.StatusCode, env)
	}
	if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="write"`) {
		t.Errorf("403 challenge %q", h)
	}
	// The stored sha256 form works, and write implies read.
	if resp, env := o.call(t, "testonly.write", `{}`, bearer(writeToken)); resp.StatusCode != 200 {
		t.Fatalf("write token: %d %v", resp.StatusCode, env)
	}
	if resp, _ := o.call(t, "tools.help", `{}`, bearer(writeToken)); resp.StatusCode != 200 {
		t.Fatalf("write token on a read tool: %d", resp.StatusCode)
	}
	// Probes and metrics stay open.
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if resp, body := o.do(t, http.MethodGet, p, "", nil); resp.StatusCode != 200 {
			t.Errorf("GET %s = %d: %.200s", p, resp.StatusCode, body)
		}
	}
	// MCP: the same 401 at the HTTP layer; a read token gets forbidden as a tool result.
	if resp, _ := o.rpc(t, 1, "tools/list", map[string]any{}, nil); resp.StatusCode != 401 {
		t.Fatalf("MCP without token: %d", resp.StatusCode)
	}
	resp, msg := o.rpc(t, 2, "tools/call", map[string]any{"name": "testonly__write", "arguments": map[string]any{}}, bearer(readToken))
	if resp.StatusCode != 200 || mcpEnvelope(t, msg)["code"] != "forbidden" {
		t.Fatalf("MCP read token on write tool: %d %v", resp.StatusCode, msg)
	}
	if strings.Contains(o.logs.String(), readToken) || strings.Contains(o.logs.String(), "not-a-token") {
		t.Error("a token reached the logs")
	}
}

func TestTokenFileReload(t *testing.T) {
	path := writeTokens(t)
	tf := newTokenFile(path, zerolog.Nop())
	now := time.Now()
	tf.now = func() time.Time { return now }
	if id, ok := tf.lookup(readToken); !ok || id.principal != "alice" || strings.Join(id.scopes, ",") != "read" {
		t.Fatalf("lookup = %v %v", id, ok)
	}
	if err := os.WriteFile(path, []byte("rotated-token-000000 carol read,exec\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	// Within the recheck interval the old set still answers.
	if _, ok := tf.lookup(readToken); !ok {
		t.Fatal("file re-read before the recheck interval")
	}
	now = now.Add(2 * tokenRecheck)
	if _, ok := tf.lookup(readToken); ok {
		t.Fatal("old token still valid after rotation")
	}
	if id, ok := tf.lookup("rotated-token-000000"); !ok || id.principal != "carol" || strings.Join(id.scopes, ",") != "exec,read" {
		t.Fatalf("rotated token: %v %v", id, ok)
	}
	// A broken file keeps the tokens loaded before.
	if err := os.WriteFile(path, []byte("only-one-field\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later = later.Add(time.Hour)
	_ = os.Chtimes(path, later, later)
	now = now.Add(2 * tokenRecheck)
	if _, ok := tf.lookup("rotated-token-000000"); !ok {
		t.Fatal("a broken file locked out the current tokens")
	}
}

func TestLoadTokensErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		"tok alice read\nsecret-value\n":       "line 2: want TOKEN PRINCIPAL",
		"tok alice admin\n":                    `line 1: unknown scope "admin"`,
		"sha256:abc alice\n":                   "line 1: sha256: needs 64 hex digits",
		"# nothing but a comment\n":            "no tokens",
		"tok alice read\n\n  \nsecret x y z\n": "line 4",
	} {
		path := filepath.Join(dir, "t")
		_ = os.WriteFile(path, []byte(content), 0o600)
		err := CheckAuth(AuthConfig{TokensFile: path})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", content, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error repeats the file's content: %v", err)
		}
	}
}

// jwksServer serves the public half of key under kid, counting fetches.
// gate, when set, runs before fetch number n is answered.
type jwksServer struct {
	*httptest.Server
	key     atomic.Pointer[rsa.PrivateKey]
	kid     atomic.Value
	fetches atomic.Int32
	gate    atomic.Pointer[func(n int32)]
	pad     atomic.Int64 // bytes of whitespace inside the JSON object
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	j := &jwksServer{}
	j.rotate(t, "k1")
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := j.fetches.Add(1)
		if gate := j.gate.Load(); gate != nil {
			(*gate)(n)
		}
		k := j.key.Load()
		body, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
			"kty": "RSA", "kid": j.kid.Load(), "use": "sig", "alg": "RS256",
			"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
		}}})
		if pad := j.pad.Load(); pad > 0 {
			// Still one valid JSON document, so only a size cap refuses it.
			body = slices.Concat(body[:len(body)-1], bytes.Repeat([]byte(" "), int(pad)), []byte("}"))
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(j.Close)
	return j
}

func (j *jwksServer) rotate(t *testing.T, kid string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	j.key.Store(k)
	j.kid.Store(kid)
}

func (j *jwksServer) token(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = j.kid.Load()
	s, err := tok.SignedString(j.key.Load())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOIDCJWT(t *testing.T) {
	jwks := newJWKSServer(t)
	const issuer, audience = "https://issuer.example", "cursus-api"
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_OIDC_ISSUER": issuer, "CURSUS_AUTH_OIDC_AUDIENCE": audience,
		"CURSUS_AUTH_OIDC_JWKS_URL": jwks.URL, "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1",
	})
	valid := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": issuer, "aud": audience, "sub": "agent-7", "scope": "read write",
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	}
	if resp, env := o.call(t, "testonly.write", `{}`, bearer(jwks.token(t, valid()))); resp.StatusCode != 200 {
		t.Fatalf("valid JWT: %d %v", resp.StatusCode, env)
	}
	for name, mutate := range map[string]func(jwt.MapClaims){
		"expired":        func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() },
		"no expiry":      func(c jwt.MapClaims) { delete(c, "exp") },
		"wrong audience": func(c jwt.MapClaims) { c["aud"] = "someone-else" },
		"wrong issuer":   func(c jwt.MapClaims) { c["iss"] = "https://evil.example" },
		"no subject":     func(c jwt.MapClaims) { delete(c, "sub") },
	} {
		c := valid()
		mutate(c)
		if resp, _ := o.call(t, "tools.help", `{}`, bearer(jwks.token(t, c))); resp.StatusCode != 401 {
			t.Errorf("%s JWT: status %d, want 401", name, resp.StatusCode)
		}
	}
	// Signed by a key the issuer never published.
	other := newJWKSServer(t)
	if resp, _ := o.call(t, "tools.help", `{}`, bearer(other.token(t, valid()))); resp.StatusCode != 401 {
		t.Errorf("foreign key: %d", resp.StatusCode)
	}
	// Read-only scope on a writing tool.
	c := valid()
	c["scope"] = "read"
	if resp, env := o.call(t, "testonly.write", `{}`, bearer(jwks.token(t, c))); resp.StatusCode != 403 || env["code"] != "forbidden" {
		t.Errorf("read-only JWT on write tool: %d %v", resp.StatusCode, env)
	}
	// Every token above named kid k1, so the JWKS was fetched once and
	// then served from the cache.
	if n := jwks.fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1 (cached)", n)
	}
	// Key rotation: a token with a new kid triggers a refetch.
	jwks.rotate(t, "k2")
	if resp, env := o.call(t, "tools.help", `{}`, bearer(jwks.token(t, valid()))); resp.StatusCode != 200 {
		t.Fatalf("token under rotated key: %d %v", resp.StatusCode, env)
	}
	if n := jwks.fetches.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times after rotation, want 2", n)
	}
}

// TestJWKSRefreshAfterInterval: the key set is refetched in the background
// every jwks_refresh, so a rotated key is known before any token names it.
func TestJWKSRefreshAfterInterval(t *testing.T) {
	jwks := newJWKSServer(t)
	v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: jwks.URL, JWKSRefresh: 50 * time.Millisecond}}, zerolog.Nop())
	t.Cleanup(v.close)
	claims := jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": time.Now().Add(time.Hour).Unix()}
	if _, err := v.verify(context.Background(), jwks.token(t, claims)); err != nil {
		t.Fatal(err)
	}
	jwks.rotate(t, "k2")
	// Read the cached set directly: a token naming k2 would refetch itself.
	cached := (*v.keys.Load()).Storage()
	waitFor(t, func() bool {
		keys, err := cached.KeyReadAll(context.Background())
		return err == nil && len(keys) == 1 && keys[0].Marshal().KID == "k2"
	})
}

// TestJWKSUnknownKidDoesNotBlockKnownKeys: while a refetch for a forged kid
// hangs on a slow issuer, tokens under keys already fetched still verify at
// once.
func TestJWKSUnknownKidDoesNotBlockKnownKeys(t *testing.T) {
	jwks := newJWKSServer(t)
	release := make(chan struct{})
	refetching := make(chan struct{})
	hang := func(n int32) {
		if n == 2 {
			close(refetching)
			<-release
		}
	}
	jwks.gate.Store(&hang)
	v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: jwks.URL}}, zerolog.Nop())
	t.Cleanup(v.close)
	claims := jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": time.Now().Add(time.Hour).Unix()}
	valid := jwks.token(t, claims)
	if _, err := v.verify(context.Background(), valid); err != nil {
		t.Fatal(err)
	}
	forged := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	forged.Header["kid"] = "forged"
	forgedRaw, err := forged.SignedString(jwks.key.Load())
	if err != nil {
		t.Fatal(err)
	}
	forgedDone := make(chan error, 1)
	go func() {
		_, err := v.verify(context.Background(), forgedRaw)
		forgedDone <- err
	}()
	<-refetching
	validDone := make(chan error, 1)
	go func() {
		_, err := v.verify(context.Background(), valid)
		validDone <- err
	}()
	select {
	case err := <-validDone:
		if err != nil {
			t.Errorf("valid token during the refetch: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a valid token waited for the forged kid's refetch")
	}
	close(release)
	if err := <-forgedDone; err == nil {
		t.Error("forged kid accepted")
	}
}

// TestJWKSForgedKidFloodIsRateLimited: many tokens naming unknown kids
// cause one refetch, not one each, and are refused without waiting long.
func TestJWKSForgedKidFloodIsRateLimited(t *testing.T) {
	jwks := newJWKSServer(t)
	v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: jwks.URL}}, zerolog.Nop())
	t.Cleanup(v.close)
	// The next refetch slot lies beyond the longest wait, so every token
	// after the first is refused at once.
	v.missRefetch, v.fetchTimeout = time.Hour, 2*time.Second
	claims := jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": time.Now().Add(time.Hour).Unix()}
	if _, err := v.verify(context.Background(), jwks.token(t, claims)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 50 {
		forged := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		forged.Header["kid"] = fmt.Sprintf("forged-%d", i)
		raw, err := forged.SignedString(jwks.key.Load())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if _, err := v.verify(context.Background(), raw); err == nil {
				t.Error("forged kid accepted")
			}
		})
	}
	wg.Wait()
	if n := jwks.fetches.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times for 50 forged kids, want 2 (first fetch + one refetch)", n)
	}
	if d := time.Since(start); d > v.fetchTimeout {
		t.Errorf("forged kids took %v to refuse", d)
	}
}

// TestJWTAlgAllowList: "none" and an HMAC keyed with the issuer's public
// key are refused; a token without a kid is checked against the key set.
func TestJWTAlgAllowList(t *testing.T) {
	jwks := newJWKSServer(t)
	v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: jwks.URL}}, zerolog.Nop())
	t.Cleanup(v.close)
	claims := jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": time.Now().Add(time.Hour).Unix()}

	none := jwt.NewWithClaims(jwt.SigningMethodNone, claims)
	none.Header["kid"] = "k1"
	unsigned, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.verify(context.Background(), unsigned); err == nil {
		t.Error(`alg "none" accepted`)
	}

	pubDER, err := x509.MarshalPKIXPublicKey(&jwks.key.Load().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range [][]byte{pubDER, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})} {
		hs := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
		hs.Header["kid"] = "k1"
		signed, err := hs.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.verify(context.Background(), signed); err == nil {
			t.Error("HS256 keyed with the public key accepted")
		}
	}

	noKid := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	signed, err := noKid.SignedString(jwks.key.Load())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.verify(context.Background(), signed); err != nil {
		t.Errorf("token without kid under the published key: %v", err)
	}
}

// TestJWKSECKeys verifies ES256/384/512 tokens against EC keys in the JWKS,
// and refuses a key published for encryption or off the curve.
func TestJWKSECKeys(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		crv    string
		curve  elliptic.Curve
		method jwt.SigningMethod
	}{{"P-256", elliptic.P256(), jwt.SigningMethodES256}, {"P-384", elliptic.P384(), jwt.SigningMethodES384}, {"P-521", elliptic.P521(), jwt.SigningMethodES512}} {
		priv, err := ecdsa.GenerateKey(tc.curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := priv.PublicKey.Bytes() // 0x04 || X || Y
		if err != nil {
			t.Fatal(err)
		}
		size := (len(raw) - 1) / 2
		x, y := raw[1:1+size], append([]byte{}, raw[1+size:]...)
		tok := jwt.NewWithClaims(tc.method, jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = "ec"
		signed, err := tok.SignedString(priv)
		if err != nil {
			t.Fatal(err)
		}
		verify := func(use string, y []byte) error {
			set, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "EC", "kid": "ec", "use": use, "crv": tc.crv, "x": enc(x), "y": enc(y)}}})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(set) }))
			defer ts.Close()
			v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: ts.URL}}, zerolog.Nop())
			defer v.close()
			_, err := v.verify(context.Background(), signed)
			return err
		}
		if err := verify("sig", y); err != nil {
			t.Errorf("%s: %v", tc.crv, err)
		}
		if err := verify("enc", y); err == nil {
			t.Errorf(`%s: key published with "use": "enc" accepted`, tc.crv)
		}
		y[len(y)-1] ^= 1
		if err := verify("sig", y); err == nil {
			t.Errorf("%s: key off the curve accepted", tc.crv)
		}
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStaticTokensSendNoOneToOAuth: with static tokens only there is no
// authorization server, so no RFC 9728 document (it would have to name
// one, and a client given none tries dynamic client registration here),
// no resource_metadata in any challenge, and the 401 says what to send and
// whom to ask.
func TestStaticTokensSendNoOneToOAuth(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1",
		"CURSUS_MCP_BASE_URL": "https://cursus.example",
	})
	for _, p := range []string{protectedResourcePath, protectedResourcePath + "/mcp"} {
		if resp, body := o.do(t, http.MethodGet, p, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404: %.200s", p, resp.StatusCode, body)
		}
	}
	resp, env := o.call(t, "tools.help", `{}`, nil)
	msg, _ := env["error"].(string)
	if resp.StatusCode != 401 || !strings.Contains(msg, "Authorization: Bearer <token>") || !strings.Contains(msg, "operator") {
		t.Errorf("401 body %v", env)
	}
	resp, _ = o.rpc(t, 1, "tools/list", map[string]any{}, nil)
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || strings.Contains(h, "resource_metadata") {
		t.Errorf("MCP 401 challenge %d %q", resp.StatusCode, h)
	}
	resp, _ = o.call(t, "testonly.write", `{}`, bearer(readToken))
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || strings.Contains(h, "resource_metadata") || !strings.Contains(h, `error="insufficient_scope"`) {
		t.Errorf("403 challenge %d %q", resp.StatusCode, h)
	}
	// A client that tries registration anyway (SDKs fall back to this
	// origin) reads an RFC 7591 error that says what to do.
	resp, body := o.do(t, http.MethodPost, "/register", `{"redirect_uris":["http://127.0.0.1:9/cb"]}`, nil)
	var reg map[string]string
	if err := json.Unmarshal(body, &reg); resp.StatusCode != 400 || err != nil || reg["error"] != "invalid_client_metadata" ||
		!strings.Contains(reg["error_description"], "Authorization: Bearer <token>") || !strings.Contains(reg["error_description"], "operator") {
		t.Errorf("POST /register = %d %s", resp.StatusCode, body)
	}
}

// TestAuthMetadataUsesTheBaseURL: with auth.resource_url unset and
// mcp.base_url set, the RFC 9728 document and every challenge name the
// base URL, whatever Host the client sends.
func TestAuthMetadataUsesTheBaseURL(t *testing.T) {
	jwks := newJWKSServer(t)
	const issuer, base = "https://issuer.example", "https://cursus.example/tenant-a"
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_OIDC_ISSUER": issuer, "CURSUS_AUTH_OIDC_AUDIENCE": "cursus-api",
		"CURSUS_AUTH_OIDC_JWKS_URL": jwks.URL, "CURSUS_MCP_BASE_URL": base + "/",
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1",
	})
	evil := map[string]string{"Host": "evil.example", "X-Forwarded-Proto": "https"}
	wantMeta := fmt.Sprintf("resource_metadata=%q", base+protectedResourcePath)
	for _, p := range []string{protectedResourcePath, protectedResourcePath + "/mcp"} {
		resp, body := o.do(t, http.MethodGet, p, "", evil)
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); resp.StatusCode != 200 || err != nil || doc["resource"] != base+"/mcp" {
			t.Errorf("GET %s = %d: %s", p, resp.StatusCode, body)
		}
		if servers, _ := doc["authorization_servers"].([]any); len(servers) != 1 || servers[0] != issuer {
			t.Errorf("GET %s: authorization_servers %v", p, doc["authorization_servers"])
		}
	}
	headers := map[string]string{"Host": "evil.example"}
	resp, env := o.call(t, "tools.help", `{}`, headers)
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(h, wantMeta) || strings.Contains(h, "evil") {
		t.Errorf("401 challenge %d %q", resp.StatusCode, h)
	}
	if msg, _ := env["error"].(string); !strings.Contains(msg, "Authorization: Bearer <token>") || !strings.Contains(msg, issuer) {
		t.Errorf("401 body %v", env)
	}
	headers["Authorization"] = "Bearer " + readToken
	resp, _ = o.call(t, "testonly.write", `{}`, headers)
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(h, wantMeta) || strings.Contains(h, "evil") {
		t.Errorf("403 challenge %d %q", resp.StatusCode, h)
	}
}

// TestJWKSBodyIsCapped: a key set padded to 5 MiB is refused (reading it
// whole would let a hostile issuer exhaust memory); the same set unpadded
// verifies.
func TestJWKSBodyIsCapped(t *testing.T) {
	claims := jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": time.Now().Add(time.Hour).Unix()}
	for _, tc := range []struct {
		pad    int64
		verify bool
	}{{0, true}, {5 << 20, false}} {
		jwks := newJWKSServer(t)
		jwks.pad.Store(tc.pad)
		logs := &syncBuffer{}
		v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: jwks.URL}}, zerolog.New(logs))
		_, err := v.verify(context.Background(), jwks.token(t, claims))
		v.close()
		if (err == nil) != tc.verify {
			t.Errorf("pad %d: verify error %v, want success %v", tc.pad, err, tc.verify)
		}
		if !tc.verify && !strings.Contains(logs.String(), "larger than 1048576 bytes") {
			t.Errorf("pad %d: the log does not say the body was too large:\n%s", tc.pad, logs.String())
		}
	}
}
