package deps

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// lcg reproduces a tiny generator also run in Python to make the difflib
// vectors below: x = (x*1103515245 + 12345) mod 2^31, pick alpha[(x>>16) % n].
func lcg(seed uint64, n int, alpha []rune) ([]rune, uint64) {
	x := seed
	out := make([]rune, 0, n)
	for i := 0; i < n; i++ {
		x = (x*1103515245 + 12345) % (1 << 31)
		out = append(out, alpha[(x>>16)%uint64(len(alpha))])
	}
	return out, x
}

// TestSequenceRatioMatchesCPython compares with ratios printed by CPython
// 3.11's difflib.SequenceMatcher(None, a, b).ratio() for generated strings.
// Cases 6, 19 and 20 differ when autojunk is disabled (0.34857…, 0.805,
// 0.39166…), so they pin the popular-element rule for len(b) >= 200; case 12
// (every element popular) pins the extension over popular elements.
func TestSequenceRatioMatchesCPython(t *testing.T) {
	var printable []rune
	for c := rune(33); c < 127; c++ {
		printable = append(printable, c)
	}
	cases := []struct {
		seed     uint64
		la, lb   int
		alphabet string
		mutate   int // 0: b is fresh; k: b is a (extended) with every k-th char replaced
		want     float64
	}{
		{1, 5, 7, "ab", 0, 0.6666666666666666},
		{2, 10, 12, "abc", 0, 0.6363636363636364},
		{3, 30, 25, "abcd ", 0, 0.43636363636363634},
		{4, 60, 80, "ab", 0, 0.4},
		{5, 150, 199, "ab c", 0, 0.3209169054441261},
		{6, 150, 200, "ab c", 0, 0.0},
		{12, 220, 210, "a", 0, 0.9767441860465116},
		{11, 0, 5, "ab", 0, 0.0},
		{14, 1, 1, "ab", 0, 1.0},
		{15, 250, 250, "PR", 0, 0.032},
		{16, 300, 260, "PR", 0, 0.02857142857142857},
		{17, 180, 199, "PR", 7, 0.8126649076517151},
		{18, 180, 200, "PR", 7, 0.8105263157894737},
		{19, 400, 400, "PR", 5, 0.72},
		{20, 240, 240, "abcdefghijklmnopqrstuvwxyz ", 3, 0.0125},
		{21, 120, 500, "PR", 0, 0.041935483870967745},
		{22, 500, 120, "PR", 4, 0.2903225806451613},
	}
	for _, c := range cases {
		alpha := []rune(c.alphabet)
		if c.alphabet == "PR" {
			alpha = printable
		}
		a, x := lcg(c.seed, c.la, alpha)
		var b []rune
		if c.mutate == 0 {
			b, _ = lcg(x, c.lb, alpha)
		} else {
			if c.lb <= c.la {
				b = append([]rune(nil), a[:c.lb]...)
			} else {
				tail, _ := lcg(x, c.lb-c.la, alpha)
				b = append(append([]rune(nil), a...), tail...)
			}
			repl, _ := lcg(c.seed+100, len(b), printable)
			for i := range b {
				if i%c.mutate == 0 {
					b[i] = repl[i]
				}
			}
		}
		if got := sequenceRatio(string(a), string(b)); got != c.want {
			t.Errorf("seed %d: ratio = %v, want %v (bit-exact)", c.seed, got, c.want)
		}
	}
	if got := sequenceRatio("", ""); got != 1.0 {
		t.Errorf("empty/empty = %v, want 1", got)
	}
}

// Appendix A semantic vectors: normalised forms, components and totals.
func TestSimilarityAppendixA(t *testing.T) {
	cases := []struct {
		a, b                   string
		n1, n2                 string
		str, tok, sem, sub, ov float64
	}{
		{"input_path", "processed_data", "input path", "processed data", .333333, 0, .4, 0, 0.200000},
		{"model_input", "model_output", "model input", "model output", .782609, .333333, .45, 1.0, 0.630616},
		{"DATA_SECONDARY", "METADATA", "data secondary", "metadata", .363636, 0, 0, .5, 0.209091},
		{"DATA_SECONDARY", "DATA", "data secondary", "data", .444444, .5, .5, .285714, 0.440476},
		{"hyperparameters_s3_uri", "config", "hyperparameters s3 uri", "configuration", .228571, 0, .266667, 0, 0.135238},
		{"calibration_model", "calibration_output", "calibration model", "calibration output", .742857, .333333, .45, 1.0, 0.618690},
		{"GeneratedPayloadSamples", "payload_sample", "generatedpayloadsamples", "payload sample", .702703, 0, 0, .304348, 0.271680},
		{"eval_data", "evaluation_output", "evaluation data", "evaluation output", .75, .333333, .25, 1.0, 0.570833},
	}
	const tol = 1e-6
	for _, c := range cases {
		e := Explain(c.a, c.b)
		if e.Normalized != [2]string{c.n1, c.n2} {
			t.Errorf("%s|%s: normalized %q", c.a, c.b, e.Normalized)
		}
		// Components are printed to 6 places in the appendix.
		for _, p := range []struct {
			name      string
			got, want float64
		}{{"string", e.String, c.str}, {"token", e.Token, c.tok}, {"semantic", e.Semantic, c.sem}, {"substring", e.Substring, c.sub}, {"overall", e.Overall, c.ov}} {
			if math.Abs(p.got-p.want) > tol {
				t.Errorf("%s|%s: %s = %.7f, want %.6f", c.a, c.b, p.name, p.got, p.want)
			}
		}
		if s := Similarity(c.a, c.b); s != e.Overall {
			t.Errorf("Similarity and Explain disagree: %v vs %v", s, e.Overall)
		}
	}
}

func TestSimilarityEdges(t *testing.T) {
	if s := Similarity("processed_data", "Processed-Data"); s != 1 {
		t.Errorf("equal after normalisation = %v", s)
	}
	if s := Similarity("", "x"); s != 0 {
		t.Errorf("empty = %v", s)
	}
	if s := Similarity("the", "an"); s != 0 {
		t.Errorf("stop-words only = %v, want 0", s)
	}
	if n := Normalize("Eval.Config-of_the PKG!"); n != "evaluation configuration package" {
		t.Errorf("Normalize = %q", n)
	}
	if s1, s2 := Similarity("model_output", "model_artifacts"), Similarity("model_artifacts", "model_output"); s1 <= 0 || s2 <= 0 {
		t.Errorf("related names score 0: %v %v", s1, s2)
	}
}

type fixtureSpec struct {
	Dependencies steps.Ordered[steps.Dependency] `yaml:"dependencies"`
	Outputs      steps.Ordered[steps.Output]     `yaml:"outputs"`
}

func loadFixtures(t testing.TB) map[string]*steps.Spec {
	t.Helper()
	data, err := os.ReadFile("testdata/specs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var raw steps.Ordered[fixtureSpec]
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]*steps.Spec{}
	for _, k := range raw.Keys() {
		f, _ := raw.Get(k)
		out[k] = &steps.Spec{Dependencies: f.Dependencies, Outputs: f.Outputs}
	}
	return out
}

func scoreOf(t *testing.T, specs map[string]*steps.Spec, consumer, dep, provider, out string) Breakdown {
	t.Helper()
	c, p := specs[consumer], specs[provider]
	d, ok1 := c.Dependencies.Get(dep)
	o, ok2 := p.Outputs.Get(out)
	if !ok1 || !ok2 {
		t.Fatalf("fixture lacks %s.%s or %s.%s", consumer, dep, provider, out)
	}
	return Score(d, dep, o, out, provider)
}

// Appendix A compatibility vectors (printed to 4 places there).
func TestScoreAppendixA(t *testing.T) {
	specs := loadFixtures(t)
	cases := []struct {
		consumer, dep, provider, out string
		want                         float64
	}{
		{"XGBoostTraining", "input_path", "TabularPreprocessing", "processed_data", 0.8125},
		{"XGBoostTraining", "model_artifacts_input", "TabularPreprocessing", "processed_data", 0.6453},
		{"TabularPreprocessing", "DATA_SECONDARY", "CradleDataLoading", "DATA", 0.8365},
		{"TabularPreprocessing", "DATA_SECONDARY", "CradleDataLoading", "METADATA", 0.7648},
		{"TabularPreprocessing", "DATA_SECONDARY", "CradleDataLoading", "SIGNATURE", 0.7196},
		{"TabularPreprocessing", "SIGNATURE", "CradleDataLoading", "DATA", 0.7316},
		{"TabularPreprocessing", "SIGNATURE", "CradleDataLoading", "METADATA", 0.7260},
		{"XGBoostModelEval", "processed_data", "XGBoostTraining", "evaluation_output", 0.6383},
		{"Package", "calibration_model", "ModelCalibration", "metrics_output", 0.8448},
		{"Package", "calibration_model", "ModelCalibration", "calibrated_data", 0.7569},
		{"Package", "calibration_model", "XGBoostTraining", "evaluation_output", 0.5566},
		{"Registration", "GeneratedPayloadSamples", "Payload", "payload_sample", 0.8100},
		{"XGBoostTraining", "hyperparameters_s3_uri", "TabularPreprocessing", "processed_data", 0},
	}
	for _, c := range cases {
		b := scoreOf(t, specs, c.consumer, c.dep, c.provider, c.out)
		if math.Abs(b.Total-c.want) > 5e-5 {
			t.Errorf("%s.%s <- %s.%s = %.6f, want %.4f (%+v)", c.consumer, c.dep, c.provider, c.out, b.Total, c.want, b)
		}
	}
	// The documented breakdown of 0.7648.
	b := scoreOf(t, specs, "TabularPreprocessing", "DATA_SECONDARY", "CradleDataLoading", "METADATA")
	if b.Type != 0.4 || b.DataType != 0.2 || math.Abs(b.Similarity-0.209091) > 1e-6 || b.ExactBonus != 0 ||
		b.Source != 0.1 || b.Keywords != 0.05*0.25 || strings.Join(b.KeywordsMatched, ",") != "data" || !b.Viable {
		t.Errorf("breakdown = %+v", b)
	}
	if sum := b.Type + b.DataType + b.Semantic + b.ExactBonus + b.Source + b.Keywords; math.Abs(sum-b.Total) > 1e-12 {
		t.Errorf("components sum to %v, total %v", sum, b.Total)
	}
	mis := scoreOf(t, specs, "XGBoostTraining", "hyperparameters_s3_uri", "TabularPreprocessing", "processed_data")
	if mis.TypeMatch != "incompatible" || mis.Viable {
		t.Errorf("type mismatch breakdown = %+v", mis)
	}
}

func TestScoreCapAndSources(t *testing.T) {
	dep := steps.Dependency{Type: "model_artifacts", CompatibleSources: []string{"PytorchTraining"}, SemanticKeywords: []string{"model"}}
	out := steps.Output{Type: "model_artifacts", Aliases: []string{"model"}}
	b := Score(dep, "model", out, "model", "PyTorchTraining")
	if b.Raw <= 1 || b.Total != 1 || b.Source != 0.1 {
		t.Errorf("legacy alias source / cap: %+v", b)
	}
	if !providerInSources("MissingValueImputation", []string{"MissingValueImputation_Training"}) ||
		!providerInSources("TabularPreprocessing_training", []string{"TabularPreprocessing-Training"}) ||
		providerInSources("RiskTableMapping", []string{"MissingValueImputation_Training"}) {
		t.Error("a job-type suffix on a compatible source is not reduced to its step type")
	}
	if !providerInSources("Payload", []string{"PayloadStep"}) || !providerInSources("PackageStep", []string{"Package"}) ||
		providerInSources("Payload", []string{"ProcessingStep"}) || !providerInSources("Package_training", []string{"Package"}) {
		t.Error("providerInSources rules wrong")
	}
	dt := Score(steps.Dependency{DataType: "Integer"}, "n", steps.Output{DataType: "Float"}, "n", "X")
	if dt.DataType != 0.1 {
		t.Errorf("Integer <- Float data score = %v", dt.DataType)
	}
	if u := Score(steps.Dependency{DataType: "Custom"}, "n", steps.Output{DataType: "S3Uri"}, "n", "X"); u.DataType != 0 {
		t.Errorf("unknown data type compat = %v", u.DataType)
	}
}

// fixtureLookup resolves "<StepType>[_<job>]" against the fixture specs.
func fixtureLookup(specs map[string]*steps.Spec) SpecLookup {
	return func(node string) (NodeSpec, error) {
		st, job, _ := strings.Cut(node, "_")
		spec, ok := specs[st]
		if !ok {
			return NodeSpec{}, &unknownFixture{node}
		}
		return NodeSpec{StepType: st, JobType: job, PipelineStepName: steps.PipelineStepName(st, job), Spec: spec}, nil
	}
}

type unknownFixture struct{ node string }

func (e *unknownFixture) Error() string { return "unknown step for node " + e.node }

// The wiring of engine-core-spec §3.5 (xgboost complete_e2e), Path A.
func TestResolveWorkedWiring(t *testing.T) {
	specs := loadFixtures(t)
	d := dag.New([]string{"CradleDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining",
		"CradleDataLoading_calibration", "TabularPreprocessing_calibration", "XGBoostModelEval_calibration",
		"ModelCalibration_calibration", "Package", "Payload", "Registration"},
		[][2]string{
			{"CradleDataLoading_training", "TabularPreprocessing_training"},
			{"TabularPreprocessing_training", "XGBoostTraining"},
			{"XGBoostTraining", "XGBoostModelEval_calibration"},
			{"CradleDataLoading_calibration", "TabularPreprocessing_calibration"},
			{"TabularPreprocessing_calibration", "XGBoostModelEval_calibration"},
			{"XGBoostModelEval_calibration", "ModelCalibration_calibration"},
			{"ModelCalibration_calibration", "Package"},
			{"XGBoostTraining", "Package"},
			{"XGBoostTraining", "Payload"},
			{"Package", "Registration"},
			{"Payload", "Registration"},
		})
	plan, err := ResolveWith(context.Background(), d, fixtureLookup(specs))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		from  string
		score float64
	}
	expect := map[string]map[string]want{
		"TabularPreprocessing_training": {
			"DATA":           {"CradleDataLoading_training.DATA", 1.0},
			"DATA_SECONDARY": {"CradleDataLoading_training.METADATA", 0.7648}, // dual-uniqueness quirk
			"SIGNATURE":      {"CradleDataLoading_training.SIGNATURE", 1.0},
		},
		"XGBoostTraining":              {"input_path": {"TabularPreprocessing_training.processed_data", 0.8125}},
		"XGBoostModelEval_calibration": {"model_input": {"XGBoostTraining.model_output", 1.0}, "processed_data": {"TabularPreprocessing_calibration.processed_data", 1.0}},
		"ModelCalibration_calibration": {"evaluation_data": {"XGBoostModelEval_calibration.eval_output", 1.0}},
		"Package":                      {"model_input": {"XGBoostTraining.model_output", 1.0}, "calibration_model": {"ModelCalibration_calibration.calibration_output", 1.0}},
		// As the reference: the optional custom_payload_input takes any viable
		// output, even one outside its compatible sources (reported below).
		"Payload":      {"model_input": {"XGBoostTraining.model_output", 1.0}, "custom_payload_input": {"XGBoostTraining.evaluation_output", 0.5374}},
		"Registration": {"PackagedModel": {"Package.packaged_model", 1.0}, "GeneratedPayloadSamples": {"Payload.payload_sample", 0.81}},
	}
	for node, wantDeps := range expect {
		got := map[string]Binding{}
		for _, b := range plan.Bindings[node] {
			got[b.Dependency] = b
		}
		if len(got) != len(wantDeps) {
			t.Errorf("%s: bindings %v, want %d", node, plan.Bindings[node], len(wantDeps))
		}
		for dep, w := range wantDeps {
			b, ok := got[dep]
			if !ok {
				t.Errorf("%s.%s unbound", node, dep)
				continue
			}
			if b.FromNode+"."+b.FromOutput != w.from || math.Abs(b.Score-w.score) > 5e-5 {
				t.Errorf("%s.%s <- %s.%s (%.4f), want %s (%.4f)", node, dep, b.FromNode, b.FromOutput, b.Score, w.from, w.score)
			}
		}
	}
	if len(plan.Unresolved) != 0 {
		t.Errorf("unresolved: %+v", plan.Unresolved)
	}
	// Only Payload.custom_payload_input is fed from outside its compatible sources.
	if len(plan.Warnings) != 1 {
		t.Fatalf("warnings = %+v, want Payload.custom_payload_input's", plan.Warnings)
	}
	if w := plan.Warnings[0]; w.Node != "Payload" || w.Dependency != "custom_payload_input" || w.FromNode != "XGBoostTraining" ||
		w.FromOutput != "evaluation_output" || w.Score != 0.5374 || !strings.Contains(w.Message, "0.5374") {
		t.Errorf("warning = %+v", w)
	}
	x := plan.Bindings["XGBoostTraining"][0]
	if x.Reference != "Steps.TabularPreprocessing-Training.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri" ||
		x.Property != "ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri" || x.FromStep != "TabularPreprocessing-Training" {
		t.Errorf("reference = %+v", x)
	}
	// model_artifacts_input lost processed_data to input_path (each output feeds one dependency).
	if got := plan.OptionalUnbound["XGBoostTraining"]; strings.Join(got, ",") != "hyperparameters_s3_uri,model_artifacts_input" {
		t.Errorf("optional unbound = %v", got)
	}
	if plan.Steps["ModelCalibration_calibration"].PipelineStepName != "ModelCalibration-Calibration" {
		t.Errorf("steps = %+v", plan.Steps)
	}
	if plan.Order[0] != "CradleDataLoading_training" || len(plan.Order) != 10 {
		t.Errorf("order = %v", plan.Order)
	}
}

func TestResolveReportsUnresolved(t *testing.T) {
	specs := loadFixtures(t)
	// Registration fed only by Payload: PackagedModel (model_artifacts) has
	// no compatible output; XGBoostModelEval with no parents at all.
	d := dag.New([]string{"Payload", "Registration", "XGBoostModelEval"}, [][2]string{{"Payload", "Registration"}})
	plan, err := ResolveWith(context.Background(), d, fixtureLookup(specs))
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Unresolved{}
	for _, u := range plan.Unresolved {
		byKey[u.Node+"."+u.Dependency] = u
	}
	// Payload.model_input has no parent either.
	for _, k := range []string{"Payload.model_input", "Registration.PackagedModel", "XGBoostModelEval.model_input", "XGBoostModelEval.processed_data"} {
		if _, ok := byKey[k]; !ok {
			t.Errorf("%s not reported unresolved (got %+v)", k, plan.Unresolved)
		}
	}
	reg := byKey["Registration.PackagedModel"]
	if len(reg.Candidates) != 0 || !strings.Contains(reg.Reason, "compatible type") {
		t.Errorf("Registration.PackagedModel = %+v", reg)
	}
	if !strings.Contains(byKey["XGBoostModelEval.model_input"].Reason, "no upstream nodes") {
		t.Errorf("reason = %q", byKey["XGBoostModelEval.model_input"].Reason)
	}

	// A viable candidate that lost to another dependency is still shown,
	// with the reason and its breakdown.
	var consumer steps.Spec
	consumer.Dependencies.Set("eval_data", steps.Dependency{})
	consumer.Dependencies.Set("evaluation_data", steps.Dependency{})
	var producer steps.Spec
	producer.Outputs.Set("eval_data", steps.Output{PropertyPath: "properties.X"})
	local := map[string]*steps.Spec{"Consumer": &consumer, "Producer": &producer}
	plan2, err := ResolveWith(context.Background(), dag.New([]string{"Producer", "Consumer"}, [][2]string{{"Producer", "Consumer"}}), fixtureLookup(local))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan2.Bindings["Consumer"]) != 1 || plan2.Bindings["Consumer"][0].Dependency != "eval_data" {
		t.Fatalf("bindings = %+v", plan2.Bindings)
	}
	if len(plan2.Unresolved) != 1 {
		t.Fatalf("unresolved = %+v", plan2.Unresolved)
	}
	lost := plan2.Unresolved[0]
	if lost.Dependency != "evaluation_data" || len(lost.Candidates) != 1 || !lost.Candidates[0].Breakdown.Viable ||
		!strings.Contains(lost.Reason, "already bound") {
		t.Errorf("lost dependency = %+v", lost)
	}
}

func TestResolveErrors(t *testing.T) {
	specs := loadFixtures(t)
	_, err := ResolveWith(context.Background(), dag.New([]string{"Package", "Nope_x"}, [][2]string{{"Package", "Nope_x"}}), fixtureLookup(specs))
	var ue *UnknownNodesError
	if !errors.As(err, &ue) || ue.Nodes[0] != "Nope_x" {
		t.Errorf("unknown node: %v", err)
	}
	_, err = ResolveWith(context.Background(), dag.New([]string{"Package", "Payload"}, [][2]string{{"Package", "Payload"}, {"Payload", "Package"}}), fixtureLookup(specs))
	var ce *dag.CycleError
	if !errors.As(err, &ce) {
		t.Errorf("cycle: %v", err)
	}
}

func TestResolveTieBreakDeterministic(t *testing.T) {
	// Two identical producers feeding one consumer: the first edge wins,
	// every run.
	specs := loadFixtures(t)
	d := dag.New([]string{"XGBoostTraining_a", "XGBoostTraining_b", "Package"},
		[][2]string{{"XGBoostTraining_b", "Package"}, {"XGBoostTraining_a", "Package"}})
	for i := 0; i < 10; i++ {
		plan, err := ResolveWith(context.Background(), d, fixtureLookup(specs))
		if err != nil {
			t.Fatal(err)
		}
		if got := plan.Bindings["Package"][0].FromNode; got != "XGBoostTraining_b" {
			t.Fatalf("run %d: model_input from %s, want the first edge's producer", i, got)
		}
	}
}
