package sagemakertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The credentials the fake knows: a SageMaker request signed with any
// other secret is refused.
const (
	AccessKeyID     = "AKIDEXAMPLE"
	SecretAccessKey = "secret"
)

// Signature is what a verified SigV4 Authorization header says.
type Signature struct {
	AccessKeyID, Region, Service string
	SignedHeaders                []string
}

// VerifySigV4 checks r's SigV4 signature over body: it signs a copy of the
// request again with the SDK's signer, the fake's credentials and the
// request's own X-Amz-Date and credential scope, and compares the
// Authorization headers. A request whose method, path, query, signed
// headers or body changed after signing, or that was signed with another
// secret, fails.
func VerifySigV4(r *http.Request, body []byte) (Signature, error) {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return Signature{}, errors.New("no AWS4-HMAC-SHA256 Authorization header")
	}
	var credential, signedHeaders string
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signedHeaders = v
		}
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 || scope[4] != "aws4_request" || signedHeaders == "" {
		return Signature{}, fmt.Errorf("malformed Authorization header %q", auth)
	}
	sig := Signature{AccessKeyID: scope[0], Region: scope[2], Service: scope[3], SignedHeaders: strings.Split(signedHeaders, ";")}
	if sig.AccessKeyID != AccessKeyID {
		return Signature{}, fmt.Errorf("unknown access key %q", sig.AccessKeyID)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return Signature{}, fmt.Errorf("X-Amz-Date: %w", err)
	}
	if day := at.Format("20060102"); day != scope[1] {
		return Signature{}, fmt.Errorf("credential scope date %s is not the request's %s", scope[1], day)
	}
	again := &http.Request{Method: r.Method, Host: r.Host, Header: http.Header{}, ContentLength: r.ContentLength,
		URL: &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}}
	for _, h := range sig.SignedHeaders {
		if h != "host" && h != "content-length" {
			again.Header[textproto.CanonicalMIMEHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), sig.Service, sig.Region, at); err != nil {
		return Signature{}, err
	}
	if again.Header.Get("Authorization") != auth {
		return Signature{}, errors.New("the signature does not match the request")
	}
	return sig, nil
}
