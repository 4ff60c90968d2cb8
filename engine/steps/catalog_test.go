package steps

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func loadBuiltins(t *testing.T) *Catalog {
	t.Helper()
	c, problems, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("built-in problems: %v", problems)
	}
	return c
}

func TestBuiltinsLoadAndValidate(t *testing.T) {
	c := loadBuiltins(t)
	if c.Len() < 25 {
		t.Fatalf("want at least 25 built-in steps, got %d", c.Len())
	}
	smTypes := map[string]bool{}
	for _, n := range c.Names() {
		iface, _ := c.Get(n)
		if !strings.HasPrefix(iface.Source, BuiltinPrefix) {
			t.Errorf("%s: source %q", n, iface.Source)
		}
		for _, f := range Validate(iface) {
			t.Errorf("%s: %v", n, f) // built-ins carry no warnings either
		}
		if iface.Config.Extends == "" {
			t.Errorf("%s: no config.extends", n)
		}
		smTypes[iface.Registry.SageMakerStepType] = true
		if _, ok := LookupInternal(n); ok {
			t.Errorf("%s: built-in uses an Amazon-internal name", n)
		}
	}
	for _, want := range []string{SMProcessing, SMTraining, SMCreateModel, SMTransform, SMTuning, SMRegisterModel} {
		if !smTypes[want] {
			t.Errorf("no built-in of SageMaker type %s", want)
		}
	}
	for _, want := range []string{"DummyDataLoading", "TabularPreprocessing", "StratifiedSampling", "MissingValueImputation",
		"RiskTableMapping", "FeatureSelection", "CurrencyConversion", "XGBoostTraining", "LightGBMTraining", "PyTorchTraining",
		"XGBoostModelEval", "LightGBMModelEval", "PyTorchModelEval", "XGBoostModelInference", "PyTorchModelInference",
		"ModelMetricsComputation", "ModelCalibration", "PercentileModelCalibration", "XGBoostModel", "PyTorchModel",
		"BatchTransform", "Package", "Payload", "Registration"} {
		if _, ok := c.Get(want); !ok {
			t.Errorf("missing built-in %s", want)
		}
	}
	if d, _ := c.Get("DummyDataLoading"); d.NodeType != NodeSource || d.Spec.Outputs.Len() == 0 {
		t.Errorf("DummyDataLoading must be a source with outputs")
	}
	if r, _ := c.Get("Registration"); r.NodeType != NodeSink || r.Registry.SageMakerStepType != SMRegisterModel {
		t.Errorf("Registration must be a RegisterModel sink")
	}
	// Every variant of every built-in merges and validates too (Validate
	// covers them); spot-check that the file stems follow the convention, so
	// a step's file is found by its name.
	for _, n := range c.Names() {
		iface, _ := c.Get(n)
		stem := strings.TrimSuffix(path.Base(strings.TrimPrefix(iface.Source, "builtin:")), FileSuffix)
		if stem != ConventionStem(n) && CanonicalKey(stem) != CanonicalKey(n) {
			t.Errorf("%s is in %s, whose stem does not name it", n, iface.Source)
		}
	}
}

// lowerBound is the smallest compatibility score engine-core-spec §3.1 can
// give a dependency/output pair whose names match exactly (or by alias):
// type 0.4 (or 0.2 when compatible), data type 0.2, semantic 0.25, exact
// bonus 0.05, compatible sources ±0.1. Anything above 0.5 wires.
func lowerBound(dep Dependency, depName string, out Output, outName, provider string) float64 {
	compat := map[string][]string{
		TypeModelArtifacts: {TypeModelArtifacts}, TypeTrainingData: {TypeProcessingOutput, TypeTrainingData},
		TypeProcessingOutput: {TypeProcessingOutput, TypeTrainingData}, TypeHyperparameters: {TypeHyperparameters, TypeCustomProperty},
		TypePayloadSamples: {TypePayloadSamples, TypeProcessingOutput}, TypeCustomProperty: {TypeCustomProperty},
	}
	dt, ot := or(dep.Type, TypeProcessingOutput), or(out.Type, TypeProcessingOutput)
	s := 0.0
	switch {
	case dt == ot:
		s = 0.4
	case contains(compat[dt], ot):
		s = 0.2
	default:
		return 0
	}
	if or(dep.DataType, "S3Uri") == or(out.DataType, "S3Uri") {
		s += 0.2
	}
	if depName == outName || contains(out.Aliases, depName) {
		s += 0.25 + 0.05 // identical names: semantic similarity 1.0 plus the exact bonus
	}
	if len(dep.CompatibleSources) > 0 {
		if contains(dep.CompatibleSources, provider) {
			s += 0.1
		} else {
			s -= 0.1
		}
	}
	return s
}

func or(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// The typical pipelines wire every required dependency by name or alias.
func TestTypicalPipelinesWire(t *testing.T) {
	c := loadBuiltins(t)
	type edge struct{ from, to string }
	pipelines := map[string][]edge{
		"xgboost_e2e": {
			{"DummyDataLoading_training", "TabularPreprocessing_training"},
			{"DummyDataLoading_calibration", "TabularPreprocessing_calibration"},
			{"TabularPreprocessing_training", "XGBoostTraining"},
			{"XGBoostTraining", "XGBoostModelEval_calibration"},
			{"TabularPreprocessing_calibration", "XGBoostModelEval_calibration"},
			{"XGBoostModelEval_calibration", "ModelCalibration_calibration"},
			{"XGBoostTraining", "Package"},
			{"ModelCalibration_calibration", "Package"},
			{"XGBoostTraining", "Payload"},
			{"Package", "Registration"},
			{"Payload", "Registration"},
		},
		"batch_transform": {
			{"DummyDataLoading_training", "TabularPreprocessing_training"},
			{"TabularPreprocessing_training", "XGBoostTraining"},
			{"XGBoostTraining", "XGBoostModel"},
			{"DummyDataLoading_calibration", "TabularPreprocessing_calibration"},
			{"XGBoostModel", "BatchTransform_calibration"},
			{"TabularPreprocessing_calibration", "BatchTransform_calibration"},
			{"BatchTransform_calibration", "ModelMetricsComputation_calibration"},
		},
		"preprocessing_chain": {
			{"DummyDataLoading_training", "CurrencyConversion_training"},
			{"CurrencyConversion_training", "TabularPreprocessing_training"},
			{"TabularPreprocessing_training", "MissingValueImputation_training"},
			{"MissingValueImputation_training", "RiskTableMapping_training"},
			{"RiskTableMapping_training", "FeatureSelection_training"},
			{"FeatureSelection_training", "StratifiedSampling_training"},
			{"StratifiedSampling_training", "LightGBMTraining"},
			{"LightGBMTraining", "LightGBMModelEval_calibration"},
			{"DummyDataLoading_calibration", "TabularPreprocessing_calibration"},
			{"TabularPreprocessing_calibration", "MissingValueImputation_calibration"},
			{"MissingValueImputation_training", "MissingValueImputation_calibration"},
			{"MissingValueImputation_calibration", "LightGBMModelEval_calibration"},
			{"LightGBMModelEval_calibration", "PercentileModelCalibration_calibration"},
			{"LightGBMModelEval_calibration", "ModelMetricsComputation_calibration"},
		},
		"pytorch": {
			{"DummyDataLoading_training", "TabularPreprocessing_training"},
			{"TabularPreprocessing_training", "PyTorchTraining"},
			{"PyTorchTraining", "PyTorchModelInference_testing"},
			{"DummyDataLoading_testing", "TabularPreprocessing_testing"},
			{"TabularPreprocessing_testing", "PyTorchModelInference_testing"},
			{"PyTorchTraining", "PyTorchModel"},
			{"TabularPreprocessing_training", "XGBoostTuning"},
		},
	}
	iface := func(node string) *Interface {
		r, err := c.Resolve(node)
		if err != nil {
			t.Fatalf("resolve %s: %v", node, err)
		}
		i, _, err := c.ForJobType(r.StepType, r.JobType)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	for name, edges := range pipelines {
		parents := map[string][]string{}
		for _, e := range edges {
			parents[e.to] = append(parents[e.to], e.from)
		}
		for node, ps := range parents {
			cons := iface(node)
			for _, depName := range cons.Spec.Dependencies.Keys() {
				dep, _ := cons.Spec.Dependencies.Get(depName)
				if !dep.IsRequired() {
					continue
				}
				best, from := 0.0, ""
				for _, p := range ps {
					prod := iface(p)
					for _, outName := range prod.Spec.Outputs.Keys() {
						out, _ := prod.Spec.Outputs.Get(outName)
						if s := lowerBound(dep, depName, out, outName, prod.StepType); s > best {
							best, from = s, p+"."+outName
						}
					}
				}
				if best <= 0.5 {
					t.Errorf("%s: %s.%s has no producer scoring above 0.5 (best %.2f)", name, node, depName, best)
				} else {
					t.Logf("%s: %s.%s <- %s (>= %.2f)", name, node, depName, from, best)
				}
			}
		}
	}
}

func TestResolve(t *testing.T) {
	c := loadBuiltins(t)
	cases := []struct {
		in, step, job, via, psn, key string
	}{
		{"XGBoostTraining", "XGBoostTraining", "", "step_type", "XGBoostTraining", "XGBoostTraining"},
		{"TabularPreprocessing_training", "TabularPreprocessing", "training", "node", "TabularPreprocessing-Training", "TabularPreprocessing_training"},
		{"TabularPreprocessing-Training", "TabularPreprocessing", "training", "pipeline_step_name", "TabularPreprocessing-Training", "TabularPreprocessing_training"},
		{"tabular_preprocessing_calibration", "TabularPreprocessing", "calibration", "node", "TabularPreprocessing-Calibration", "TabularPreprocessing_calibration"},
		{"xgboost_training", "XGBoostTraining", "", "canonical_key", "XGBoostTraining", "XGBoostTraining"},
		{"XGBoostModel_eval", "XGBoostModel", "eval", "node", "XGBoostModel-Eval", "XGBoostModel_eval"},
		{"XGBoostModelEval_calibration", "XGBoostModelEval", "calibration", "node", "XGBoostModelEval-Calibration", "XGBoostModelEval_calibration"},
		{"BatchTransformStepConfig", "BatchTransform", "", "config_class", "BatchTransform", "BatchTransform"},
		{"XGBoostTrainingConfig", "XGBoostTraining", "", "config_class", "XGBoostTraining", "XGBoostTraining"},
		{"PackageStepBuilder", "Package", "", "builder_name", "Package", "Package"},
		{"MIMSPackaging", "Package", "", "legacy_alias", "Package", "Package"},
		{"XGBoostTraining_pretrain", "XGBoostTraining", "pretrain", "node", "XGBoostTraining-Pretrain", "XGBoostTraining_pretrain"},
		{"model_evaluation_xgb", "XGBoostModelEval", "", "fuzzy", "XGBoostModelEval", "XGBoostModelEval"},
		{"preprocess_tabular_calibration", "TabularPreprocessing", "calibration", "fuzzy", "TabularPreprocessing-Calibration", "TabularPreprocessing_calibration"},
	}
	for _, tc := range cases {
		r, err := c.Resolve(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if r.StepType != tc.step || r.JobType != tc.job || r.Via != tc.via || r.PipelineStepName != tc.psn || r.ConfigKey != tc.key {
			t.Errorf("%s: got %+v", tc.in, r)
		}
	}
	r, _ := c.Resolve("XGBoostModel")
	if r.ConfigClass != "XGBoostModelStepConfig" || r.BuilderName != "XGBoostModelStepBuilder" {
		t.Errorf("overridden config class: %+v", r)
	}
	for _, bad := range []string{"", "../etc/passwd", "XGBoostTraining_../../x", "NoSuchThing", strings.Repeat("a", 5000), "TabularPreprocessing_"} {
		_, err := c.Resolve(bad)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("%q: want NotFoundError, got %v", bad, err)
		}
	}
	_, err := c.Resolve("XGBoostTrainin")
	var nf *NotFoundError
	if !errors.As(err, &nf) || len(nf.Suggestions) == 0 || nf.Suggestions[0] != "XGBoostTraining" {
		t.Errorf("suggestions: %v", err)
	}
	_, err = c.Resolve("CradleDataLoading_training")
	if !errors.As(err, &nf) || nf.Internal == nil || nf.Suggestions[0] != "DummyDataLoading" {
		t.Errorf("internal kind: %v", err)
	}
}

func TestInternalReplacement(t *testing.T) {
	c := loadBuiltins(t)
	for in, want := range map[string]string{
		"CradleDataLoading": "DummyDataLoading", "RedshiftDataLoading": "DummyDataLoading",
		"MimsModelRegistrationProcessing": "Registration", "mims_registration": "Registration",
		"EdxUploading": "", "DataUploading": "", "CradleDataLoading_calibration": "DummyDataLoading",
	} {
		got, ok := InternalReplacement(in)
		if !ok || got != want {
			t.Errorf("%s: got %q %v, want %q", in, got, ok, want)
		}
		if got != "" {
			if _, ok := c.Get(got); !ok {
				t.Errorf("%s: replacement %s is not a built-in", in, got)
			}
		}
	}
	if _, ok := InternalReplacement("XGBoostTraining"); ok {
		t.Error("XGBoostTraining is public")
	}
}

func TestExtraDirectories(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A plain Cursus file: no config section.
	write("demo.step.yaml", demoYAML)
	// Overrides a built-in.
	write("package.step.yaml", strings.ReplaceAll(strings.ReplaceAll(demoYAML, "step_type: Demo", "step_type: Package"), "demo step", "custom packaging"))
	// Broken: a list where a mapping belongs.
	write("broken.step.yaml", "step_type: Broken\ncontract:\n  inputs: [a]\n")
	// Parses, fails a §1.4 rule.
	write("invalid.step.yaml", strings.ReplaceAll(demoYAML, "step_type: Demo", "step_type: Invalid")+"    extra: {type: nonsense}\n")
	write("notes.txt", "ignored")
	c, problems, err := LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("Demo"); !ok {
		t.Fatal("Demo not loaded")
	}
	if p, _ := c.Get("Package"); p.Registry.Description != "custom packaging" || !strings.HasPrefix(p.Source, dir) {
		t.Fatalf("override not applied: %+v", p.Registry)
	}
	if _, ok := c.Get("Broken"); ok {
		t.Fatal("broken file loaded")
	}
	var sawBroken, sawInvalid bool
	for _, p := range problems {
		if strings.HasSuffix(p.File, "broken.step.yaml") && p.Path == "contract.inputs" && p.Rule == "type" {
			sawBroken = true
		}
		if strings.HasSuffix(p.File, "invalid.step.yaml") && p.Path == "spec.outputs.extra.type" && p.Rule == "enum" {
			sawInvalid = true
		}
	}
	if !sawBroken || !sawInvalid {
		t.Fatalf("problems: %v", problems)
	}
	if _, ok := c.Get("Invalid"); ok {
		t.Fatal("invalid file loaded")
	}
	if _, _, err := LoadCatalog(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing directory accepted")
	}
}
