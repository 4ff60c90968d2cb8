package workflows

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// State is where one run of a workflow is. It travels in the run token,
// so any server that holds the key can continue the run.
type State struct {
	Workflow string            `json:"workflow"`
	Args     map[string]string `json:"args,omitempty"`
	// Stage is the index of the stage to submit next; len(stages) when
	// the run is green.
	Stage int `json:"stage"`
	// Passed holds, per passed stage, the SHA-256 of each content field
	// its gate checked.
	Passed       []map[string]string `json:"passed,omitempty"`
	AttemptsLeft int                 `json:"attempts_left"`
	Blocked      bool                `json:"blocked,omitempty"`
	Expires      int64               `json:"expires"` // unix seconds
	// Nonce makes every token unique, so spending one (Spent) spends no
	// other, even one of the same state sealed in the same second.
	Nonce string `json:"nonce,omitempty"`
}

// Errors of Open.
var (
	ErrTampered = errors.New("run token is malformed or its signature does not match (it was changed, or signed with another key)")
	ErrExpired  = errors.New("run token has expired")
	// ErrUnknownKey is a well-formed token whose key id names no key this
	// server holds: signed with a key since retired, or by another
	// deployment. Its run cannot go on; a new one can start.
	ErrUnknownKey = errors.New("run token was signed with a workflow key this server no longer holds (retired, or another deployment's)")
)

// DefaultTTL is how long a run token stays valid after its last transition.
const DefaultTTL = 24 * time.Hour

// Signer seals run state into tokens and opens them, with HMAC-SHA256.
// A token is <key id>.<state>.<signature>: it is signed with the current
// key, and opened with whichever key its id names, the current one or a
// previous one still accepted while a rotation rolls out.
type Signer struct {
	key  signingKey
	keys map[string]signingKey // by id: the current key and the previous ones
	ttl  time.Duration
	now  func() time.Time
}

type signingKey struct {
	id     string
	secret []byte
}

// keyIDLen is the length of a key id in a token.
const keyIDLen = 8

// newSigningKey derives key's id: a short HMAC of a fixed label under the
// key, so the id names the key without revealing anything about it.
func newSigningKey(secret []byte) (signingKey, error) {
	if len(secret) < 16 {
		return signingKey{}, errors.New("workflow key must be at least 16 bytes")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("cursus workflow key id"))
	return signingKey{id: base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:6]), secret: secret}, nil
}

// NewSigner signs with key and also opens tokens signed with any of
// previous; ttl <= 0 takes DefaultTTL, now nil the clock.
func NewSigner(key []byte, ttl time.Duration, now func() time.Time, previous ...[]byte) (*Signer, error) {
	current, err := newSigningKey(key)
	if err != nil {
		return nil, err
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	s := &Signer{key: current, keys: map[string]signingKey{current.id: current}, ttl: ttl, now: now}
	for i, p := range previous {
		k, err := newSigningKey(p)
		if err != nil {
			return nil, fmt.Errorf("previous key %d: %w", i+1, err)
		}
		if _, dup := s.keys[k.id]; !dup {
			s.keys[k.id] = k
		}
	}
	return s, nil
}

// KeyID is the id of the key new tokens are signed with.
func (s *Signer) KeyID() string { return s.key.id }

// DevelopmentKey is a random key for a server started without one: its
// tokens do not survive a restart and no other replica accepts them.
func DevelopmentKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return key
}

// Seal stamps st with a new expiry and nonce and returns its token.
func (s *Signer) Seal(st State) (string, error) {
	st.Expires = s.now().Add(s.ttl).Unix()
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	st.Nonce = base64.RawURLEncoding.EncodeToString(nonce)
	body, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	signed := s.key.id + "." + base64.RawURLEncoding.EncodeToString(body)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(s.key.secret, signed)), nil
}

// Open checks token's signature and expiry and returns its state. A
// token of the form before key ids (<state>.<signature>) is opened with
// any key held, so runs in flight across that upgrade go on.
func (s *Signer) Open(token string) (State, error) {
	enc := base64.RawURLEncoding
	parts := strings.Split(token, ".")
	var body []byte
	switch len(parts) {
	case 3:
		k, ok := s.keys[parts[0]]
		if !ok {
			if len(parts[0]) == keyIDLen {
				if _, err := enc.DecodeString(parts[0]); err == nil {
					return State{}, ErrUnknownKey
				}
			}
			return State{}, ErrTampered
		}
		sig, err := enc.DecodeString(parts[2])
		if err != nil || !hmac.Equal(sig, mac(k.secret, parts[0]+"."+parts[1])) {
			return State{}, ErrTampered
		}
		if body, err = enc.DecodeString(parts[1]); err != nil {
			return State{}, ErrTampered
		}
	case 2:
		b, err1 := enc.DecodeString(parts[0])
		sig, err2 := enc.DecodeString(parts[1])
		if err1 != nil || err2 != nil || !s.anyKeySigned(b, sig) {
			return State{}, ErrTampered
		}
		body = b
	default:
		return State{}, ErrTampered
	}
	var st State
	if err := json.Unmarshal(body, &st); err != nil {
		return State{}, ErrTampered
	}
	if s.now().Unix() >= st.Expires {
		return State{}, ErrExpired
	}
	return st, nil
}

// anyKeySigned reports whether one of the keys held made sig over body
// (a token from before key ids).
func (s *Signer) anyKeySigned(body, sig []byte) bool {
	for _, k := range s.keys {
		if hmac.Equal(sig, mac(k.secret, string(body))) {
			return true
		}
	}
	return false
}

func mac(secret []byte, signed string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signed))
	return m.Sum(nil)
}
