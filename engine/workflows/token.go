package workflows

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
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
}

// Errors of Open.
var (
	ErrTampered = errors.New("run token is malformed or its signature does not match (it was changed, or signed with another key)")
	ErrExpired  = errors.New("run token has expired")
)

// DefaultTTL is how long a run token stays valid after its last transition.
const DefaultTTL = 24 * time.Hour

// Signer seals run state into tokens and opens them, with HMAC-SHA256.
type Signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewSigner signs with key; ttl <= 0 takes DefaultTTL, now nil the clock.
func NewSigner(key []byte, ttl time.Duration, now func() time.Time) (*Signer, error) {
	if len(key) < 16 {
		return nil, errors.New("workflow key must be at least 16 bytes")
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{key: key, ttl: ttl, now: now}, nil
}

// DevelopmentKey is a random key for a server started without one: its
// tokens do not survive a restart and no other replica accepts them.
func DevelopmentKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return key
}

// Seal stamps st with a new expiry and returns its token.
func (s *Signer) Seal(st State) (string, error) {
	st.Expires = s.now().Add(s.ttl).Unix()
	body, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(s.mac(body)), nil
}

// Open checks token's signature and expiry and returns its state.
func (s *Signer) Open(token string) (State, error) {
	enc := base64.RawURLEncoding
	bodyPart, sigPart, ok := strings.Cut(token, ".")
	if !ok {
		return State{}, ErrTampered
	}
	body, err1 := enc.DecodeString(bodyPart)
	sig, err2 := enc.DecodeString(sigPart)
	if err1 != nil || err2 != nil || !hmac.Equal(sig, s.mac(body)) {
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

func (s *Signer) mac(body []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(body)
	return m.Sum(nil)
}
