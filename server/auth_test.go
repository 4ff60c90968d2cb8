package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
	metadata := `resource_metadata="` + o.ts.URL + `/.well-known/oauth-protected-resource"`

	resp, env := o.call(t, "tools.help", `{}`, nil)
	if resp.StatusCode != 401 || env["code"] != "unauthenticated" || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer "+metadata) {
		t.Fatalf("no token: %d %q %v", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), env)
	}
	resp, _ = o.call(t, "tools.help", `{}`, bearer("not-a-token"))
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(h, `error="invalid_token"`) || !strings.Contains(h, metadata) {
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
	// Probes, metrics and the metadata stay open.
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		if resp, body := o.do(t, http.MethodGet, p, "", nil); resp.StatusCode != 200 {
			t.Errorf("GET %s = %d: %.200s", p, resp.StatusCode, body)
		}
	}
	_, body := o.do(t, http.MethodGet, "/.well-known/oauth-protected-resource", "", nil)
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil || doc["resource"] != o.ts.URL+"/mcp" {
		t.Errorf("metadata %s", body)
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
type jwksServer struct {
	*httptest.Server
	key     atomic.Pointer[rsa.PrivateKey]
	kid     atomic.Value
	fetches atomic.Int32
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	j := &jwksServer{}
	j.rotate(t, "k1")
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		j.fetches.Add(1)
		k := j.key.Load()
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "RSA", "kid": j.kid.Load(), "use": "sig", "alg": "RS256",
			"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
		}}})
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

func TestJWKSRefreshAfterInterval(t *testing.T) {
	jwks := newJWKSServer(t)
	v := newJWTVerifier(AuthConfig{OIDC: OIDCConfig{Issuer: "https://i", Audience: "a", JWKSURL: jwks.URL, JWKSRefresh: time.Minute}})
	now := time.Now()
	v.now = func() time.Time { return now }
	claims := jwt.MapClaims{"iss": "https://i", "aud": "a", "sub": "s", "exp": now.Add(time.Hour).Unix()}
	for i := 0; i < 3; i++ {
		if _, err := v.verify(context.Background(), jwks.token(t, claims)); err != nil {
			t.Fatal(err)
		}
	}
	if n := jwks.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	now = now.Add(2 * time.Minute)
	if _, err := v.verify(context.Background(), jwks.token(t, claims)); err != nil {
		t.Fatal(err)
	}
	if n := jwks.fetches.Load(); n != 2 {
		t.Fatalf("fetches after the refresh interval = %d, want 2", n)
	}
}
