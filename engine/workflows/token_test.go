package workflows

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSignerRefusesTamperedExpiredAndForeignTokens(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	s, err := NewSigner([]byte("0123456789abcdef"), time.Hour, clock)
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.Seal(State{Workflow: ConfigurePipeline, Stage: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Open(token)
	if err != nil || st.Stage != 1 || st.Workflow != ConfigurePipeline {
		t.Fatalf("open: %+v %v", st, err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != s.KeyID() {
		t.Fatalf("token %q does not start with the key id %q", token, s.KeyID())
	}
	flipped := []byte(parts[1])
	flipped[len(flipped)/2] ^= 1
	if _, err := s.Open(parts[0] + "." + string(flipped) + "." + parts[2]); !errors.Is(err, ErrTampered) {
		t.Fatalf("changed body: %v", err)
	}
	other, _ := NewSigner([]byte("another-key-0123"), time.Hour, clock)
	if _, err := other.Open(token); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("another key: %v", err)
	}
	// Another key's id on this token does not make it that key's.
	if _, err := other.Open(other.KeyID() + "." + parts[1] + "." + parts[2]); !errors.Is(err, ErrTampered) {
		t.Fatalf("relabelled with the other key's id: %v", err)
	}
	for _, bad := range []string{"", "x", "a.b.c.d", "!!!!!!!!." + parts[1] + "." + parts[2]} {
		if _, err := s.Open(bad); !errors.Is(err, ErrTampered) {
			t.Errorf("Open(%q): %v, want ErrTampered", bad, err)
		}
	}
	now = now.Add(time.Hour)
	if _, err := s.Open(token); !errors.Is(err, ErrExpired) {
		t.Fatalf("after the TTL: %v", err)
	}
	if _, err := NewSigner([]byte("short"), 0, nil); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
}

// TestSignerRotation: a rollout adds a new key (old one kept as previous),
// then retires the old one. Tokens the old key signed open throughout the
// first step; once it is retired they fail with ErrUnknownKey, not
// ErrTampered; every token sealed after the first step opens after the
// second.
func TestSignerRotation(t *testing.T) {
	oldKey, newKey := []byte("old-key-0123456789"), []byte("new-key-0123456789")
	before, _ := NewSigner(oldKey, time.Hour, nil)
	during, err := NewSigner(newKey, time.Hour, nil, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := NewSigner(newKey, time.Hour, nil)
	if before.KeyID() == during.KeyID() || during.KeyID() != after.KeyID() {
		t.Fatalf("key ids: before %s during %s after %s", before.KeyID(), during.KeyID(), after.KeyID())
	}
	oldToken, _ := before.Seal(State{Workflow: ConfigurePipeline, Stage: 1})
	st, err := during.Open(oldToken)
	if err != nil || st.Stage != 1 {
		t.Fatalf("old token during the rotation: %+v %v", st, err)
	}
	// An old-key replica still running during the rollout opens what a
	// new-key replica seals only once it holds the new key too; the
	// rollout's first step gives every replica both keys.
	newToken, _ := during.Seal(st)
	if !strings.HasPrefix(newToken, after.KeyID()+".") {
		t.Fatalf("sealed during the rotation with %q, want the new key id %s", newToken, after.KeyID())
	}
	if _, err := after.Open(newToken); err != nil {
		t.Fatalf("token sealed during the rotation, after it: %v", err)
	}
	if _, err := after.Open(oldToken); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old token after the old key is retired: %v, want ErrUnknownKey", err)
	}
	if _, err := NewSigner(newKey, 0, nil, []byte("short")); err == nil || !strings.Contains(err.Error(), "previous key 1") {
		t.Fatalf("a short previous key: %v", err)
	}
}

// TestSignerOpensTokensFromBeforeKeyIDs: a <state>.<signature> token made
// by the earlier format still opens with the key that signed it.
func TestSignerOpensTokensFromBeforeKeyIDs(t *testing.T) {
	key := []byte("0123456789abcdef")
	s, _ := NewSigner([]byte("a-newer-key-0123456"), time.Hour, nil, key)
	body, _ := json.Marshal(State{Workflow: ConfigurePipeline, Stage: 2, Expires: time.Now().Add(time.Hour).Unix()})
	m := hmac.New(sha256.New, key)
	m.Write(body)
	legacy := base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	if st, err := s.Open(legacy); err != nil || st.Stage != 2 {
		t.Fatalf("legacy token: %+v %v", st, err)
	}
	stranger, _ := NewSigner([]byte("a-stranger-key-0123"), time.Hour, nil)
	if _, err := stranger.Open(legacy); !errors.Is(err, ErrTampered) {
		t.Fatalf("legacy token, key not held: %v", err)
	}
}

// TestSubmitRefusesOutOfOrderAndMissingContent needs no loader: both are
// refused before any gate runs.
func TestSubmitRefusesOutOfOrderAndMissingContent(t *testing.T) {
	st, err := Start(ConfigurePipeline, nil)
	if err != nil {
		t.Fatal(err)
	}
	var noLoad Loader // a refusal loads nothing: calling nil would panic
	var re *RunError
	if _, err := Submit(t.Context(), st, "DagCheck", Content{DAG: map[string]any{}}, noLoad); !errors.As(err, &re) || re.Reason != ReasonOutOfOrder || re.Expected != "Constrain" {
		t.Fatalf("later stage first: %v", err)
	}
	if _, err := Submit(t.Context(), st, "Constrain", Content{}, noLoad); !errors.As(err, &re) || re.Reason != ReasonMissingContent {
		t.Fatalf("no dag: %v", err)
	}
	if _, err := Start(InitProject, map[string]string{"name": "x"}); !errors.As(err, &re) || re.Reason != ReasonMissingArgument {
		t.Fatalf("missing framework: %v", err)
	}
}

// A loader's ContentError reaches the gate's findings problem by problem,
// after the error itself, and its remedy replaces the generic one.
func TestContentErrorFindingsNameEachProblem(t *testing.T) {
	st, err := Start(ConfigurePipeline, nil)
	if err != nil {
		t.Fatal(err)
	}
	problems := []string{"A.bucket: bucket is required [missing]", "B.role: role is required [missing]"}
	load := func(context.Context, Content) (*Subject, error) {
		return nil, fmt.Errorf("loading: %w", &ContentError{Err: errors.New("config is invalid: 2 problem(s)"), Problems: problems, Remedy: "Fill each field."})
	}
	tr, err := Submit(t.Context(), st, "Constrain", Content{DAG: map[string]any{"nodes": []any{}}}, load)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"loading: config is invalid: 2 problem(s)"}, problems...)
	if !slices.Equal(tr.Findings, want) || tr.Remedy != "Fill each field." || tr.Status == StatusPassed {
		t.Fatalf("status %s, findings %q, remedy %q; want findings %q and the loader's remedy", tr.Status, tr.Findings, tr.Remedy, want)
	}
}
