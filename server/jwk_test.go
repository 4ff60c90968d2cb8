package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"testing"
)

// TestJWKECKey reads an EC key from its JWK coordinates, and refuses
// coordinates of the wrong length or off the curve.
func TestJWKECKey(t *testing.T) {
	for _, tc := range []struct {
		crv   string
		curve elliptic.Curve
	}{{"P-256", elliptic.P256()}, {"P-384", elliptic.P384()}, {"P-521", elliptic.P521()}} {
		priv, err := ecdsa.GenerateKey(tc.curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := priv.PublicKey.Bytes() // 0x04 || X || Y
		if err != nil {
			t.Fatal(err)
		}
		size := (len(raw) - 1) / 2
		enc := base64.RawURLEncoding.EncodeToString
		k := jwk{Kty: "EC", Kid: "k1", Crv: tc.crv, X: enc(raw[1 : 1+size]), Y: enc(raw[1+size:])}
		pub, err := k.publicKey()
		if err != nil {
			t.Fatalf("%s: %v", tc.crv, err)
		}
		if !priv.PublicKey.Equal(pub) {
			t.Fatalf("%s: parsed key differs", tc.crv)
		}
		short := k
		short.X = enc(raw[2 : 1+size])
		if _, err := short.publicKey(); err == nil {
			t.Fatalf("%s: short coordinate accepted", tc.crv)
		}
		off := k
		bad := append([]byte{}, raw[1+size:]...)
		bad[len(bad)-1] ^= 1
		off.Y = enc(bad)
		if _, err := off.publicKey(); err == nil {
			t.Fatalf("%s: point off the curve accepted", tc.crv)
		}
	}
}
