package sagemaker

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/internal/verbatim"
)

// TestEncodeStepsOneAtATime: Encode, which writes the steps one at a time,
// gives the bytes of encoding the whole definition at once, for no steps,
// one, many, with and without the experiment config, HTML characters,
// runtime references and values that encode themselves.
func TestEncodeStepsOneAtATime(t *testing.T) {
	step := func(i int) Step {
		return Step{Name: strings.Repeat("s", i+1), Type: TypeProcessing,
			Arguments: map[string]any{"b": "<a&b>", "a": Param("X"), "j": JoinPath("s3:/", Param("B"), "k"), "n": []any{1.5, nil, true}},
			DependsOn: []string{"up"}[:i%2], CacheConfig: &CacheConfig{Enabled: i%3 == 0, ExpireAfter: DefaultCacheExpiry}}
	}
	cases := map[string]*Definition{"nil steps": NewDefinition(), "no steps": NewDefinition(), "one": NewDefinition(), "many": NewDefinition(), "no experiment": NewDefinition()}
	cases["no steps"].Steps = []Step{}
	cases["one"].Steps = []Step{step(0)}
	for i := range 40 {
		cases["many"].Steps = append(cases["many"].Steps, step(i))
	}
	cases["many"].Parameters = []Parameter{{Name: "X", Type: "String", DefaultValue: "<x>"}}
	cases["no experiment"].PipelineExperimentConfig = nil
	cases["no experiment"].Steps = []Step{step(1), step(2)}
	for name, d := range cases {
		want, err := verbatim.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
