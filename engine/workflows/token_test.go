package workflows

import (
	"errors"
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
	body, sig, _ := strings.Cut(token, ".")
	flipped := []byte(body)
	flipped[len(flipped)/2] ^= 1
	if _, err := s.Open(string(flipped) + "." + sig); !errors.Is(err, ErrTampered) {
		t.Fatalf("changed body: %v", err)
	}
	other, _ := NewSigner([]byte("another-key-0123"), time.Hour, clock)
	if _, err := other.Open(token); !errors.Is(err, ErrTampered) {
		t.Fatalf("another key: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Open(token); !errors.Is(err, ErrExpired) {
		t.Fatalf("after the TTL: %v", err)
	}
	if _, err := NewSigner([]byte("short"), 0, nil); err == nil {
		t.Fatal("a 5-byte key was accepted")
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
