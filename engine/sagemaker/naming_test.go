package sagemaker

import (
	"strings"
	"testing"
)

func TestSanitizePipelineName(t *testing.T) {
	cases := map[string]string{
		"My Pipeline!! v3":      "MyPipelinev3",
		"--x!!y__-1.0-pipeline": "p-xy-1-0-pipeline",
		"a.b_c":                 "a-b-c",
		"!!!":                   "pipeline",
		"":                      "",
		"x---":                  "x",
		"héllo":                 "hllo",
	}
	for in, want := range cases {
		if got := SanitizePipelineName(in); got != want {
			t.Errorf("SanitizePipelineName(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("a", 300)
	if got := SanitizePipelineName(long); len(got) != MaxPipelineNameLength || !ValidPipelineName(got) {
		t.Errorf("long name: len %d valid %v", len(got), ValidPipelineName(got))
	}
	// A cut that ends on "-" must not leave a trailing dash.
	edge := strings.Repeat("a", 254) + "-b"
	if got := SanitizePipelineName(edge); strings.HasSuffix(got, "-") || !ValidPipelineName(got) {
		t.Errorf("cut at dash: %q", got[len(got)-3:])
	}
}

func TestGeneratePipelineName(t *testing.T) {
	if got := GeneratePipelineName("lukexie-AtoZ-xgboost-NA", "1.3.1"); got != "lukexie-AtoZ-xgboost-NA-1-3-1-pipeline" {
		t.Errorf("got %q", got)
	}
	if got := GeneratePipelineName("xgboost-training", "1.0"); got != "xgboost-training-1-0-pipeline" {
		t.Errorf("got %q", got)
	}
}

func TestValidNames(t *testing.T) {
	for _, n := range []string{"a", "a-b", "A1-2"} {
		if !ValidPipelineName(n) {
			t.Errorf("%q should be valid", n)
		}
	}
	for _, n := range []string{"", "-a", "a-", "a_b", "a b", strings.Repeat("a", 256)} {
		if ValidPipelineName(n) {
			t.Errorf("%q should be invalid", n)
		}
	}
	if !ValidStepName("TabularPreprocessing-Training") || ValidStepName(strings.Repeat("s", 65)) || ValidStepName("a.b") {
		t.Error("step name rule wrong")
	}
}

func TestDAGPipelineName(t *testing.T) {
	if got := DAGPipelineName("jdoe-example-xgboost-NA", "xgboost_complete_e2e", "1.0.0"); got != "jdoe-example-xgboost-NA-xgboost-complete-e2e-1-0-0-pipeline" {
		t.Errorf("got %s", got)
	}
	if got := DAGPipelineName("xgboost-training", "", "1.0"); got != GeneratePipelineName("xgboost-training", "1.0") {
		t.Errorf("no DAG: got %s", got)
	}
}

func TestBoundName(t *testing.T) {
	long := strings.Repeat("abcdefghij", 13) // 130
	got := BoundName(long, MaxExperimentNameLength)
	if len(got) != MaxExperimentNameLength || !strings.HasPrefix(got, long[:100]) || !ValidPipelineName(got) {
		t.Fatalf("BoundName = %q (%d)", got, len(got))
	}
	if BoundName(long, MaxExperimentNameLength) != got {
		t.Fatal("not deterministic")
	}
	if other := BoundName(long+"x", MaxExperimentNameLength); other == got {
		t.Fatal("two long names bound to the same name")
	}
	if BoundName("short", 10) != "short" {
		t.Fatal("a short name changed")
	}
	if g := GeneratePipelineName(strings.Repeat("a", 118), "1.0"); len(g) > MaxExperimentNameLength {
		t.Fatalf("generated name %d characters", len(g))
	}
}
