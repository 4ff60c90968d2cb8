package config

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

func TestSchemaChainAndRefinement(t *testing.T) {
	s := fixtureSchemas(t)
	sc, err := s.ForStep("XGBoostModelEval")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sc.Chain, ","); got != "base,processing" {
		t.Errorf("chain = %s", got)
	}
	f, _ := sc.Field("use_large_processing_instance")
	if f.Default != true || f.Source != LayerStep || f.Origin != LayerProcessing || f.Type != "boolean" {
		t.Errorf("refined field = %+v", f)
	}
	// Base fields come first, in declaration order.
	if sc.Fields[0].Name != "author" {
		t.Errorf("first field %s", sc.Fields[0].Name)
	}
	ep, _ := sc.Field("processing_entry_point")
	if ep.Default != "xgboost_model_eval.py" {
		t.Errorf("entry point default = %v", ep.Default)
	}
	// A step without a config section gets the base of its SageMaker type.
	m, err := s.ForStep("XGBoostModel")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Chain, ","); got != "base,model" || m.ConfigClass != "XGBoostModelStepConfig" {
		t.Errorf("model chain %s class %s", got, m.ConfigClass)
	}
	if _, err := s.ForStep("XGBoostTrainin"); err == nil || !strings.Contains(err.Error(), "XGBoostTraining") {
		t.Errorf("unknown step error should suggest: %v", err)
	}
}

func TestFiveMistakesAllReported(t *testing.T) {
	s := fixtureSchemas(t)
	base := validBase()
	delete(base, "author")        // missing
	base["region"] = "XX"         // enum
	base["bucket"] = "Bad_Bucket" // pattern
	specific := map[string]any{
		"job_type":                  "training",
		"label_name":                "y",
		"processing_instance_count": 50,    // range
		"enable_caching":            "yes", // type
		"procesing_volume_size":     100,   // unknown
	}
	_, probs := s.Build("TabularPreprocessing", base, specific)
	want := map[string]string{
		"author":                    KindMissing,
		"region":                    KindEnum,
		"bucket":                    KindPattern,
		"processing_instance_count": KindRange,
		"enable_caching":            KindType,
		"procesing_volume_size":     KindUnknown,
	}
	got := kinds(probs)
	if len(probs) != len(want) {
		t.Errorf("got %d problems, want %d: %v", len(probs), len(want), probs)
	}
	for f, k := range want {
		if got[f] != k {
			t.Errorf("%s: kind %q, want %q (all: %v)", f, got[f], k, probs)
		}
	}
	for _, p := range probs {
		if p.Field == "procesing_volume_size" && !strings.Contains(p.Message, "processing_volume_size") {
			t.Errorf("unknown key should suggest the real field: %s", p.Message)
		}
	}
}

func TestRegion(t *testing.T) {
	s := fixtureSchemas(t)
	for region, aws := range map[string]string{"NA": "us-east-1", "EU": "eu-west-1", "FE": "us-west-2", "ap-southeast-2": "ap-southeast-2"} {
		b := validBase()
		b["region"] = region
		cfg, probs := s.Build("XGBoostModel", b, nil)
		if len(probs) > 0 {
			t.Errorf("%s: %v", region, probs)
			continue
		}
		if cfg.Derived["aws_region"] != aws {
			t.Errorf("%s: aws_region = %v, want %s", region, cfg.Derived["aws_region"], aws)
		}
	}
	b := validBase()
	b["region"] = "Mars"
	_, probs := s.Build("XGBoostModel", b, nil)
	if len(probs) != 1 || probs[0].Kind != KindEnum {
		t.Fatalf("probs = %v", probs)
	}
	for _, v := range []string{"NA", "EU", "FE", "us-east-1", "eu-west-1"} {
		if !strings.Contains(probs[0].Message, v) {
			t.Errorf("message should list %s: %s", v, probs[0].Message)
		}
	}
}

func TestDerivedFields(t *testing.T) {
	s := fixtureSchemas(t)
	cfg, probs := s.Build("TabularPreprocessing", validBase(), map[string]any{"job_type": "training", "label_name": "y"})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	want := map[string]any{
		"pipeline_name":           "jane-fraud-xgboost-NA",
		"pipeline_description":    "fraud xgboost Model NA",
		"pipeline_s3_loc":         "s3://my-bucket/MODS/jane-fraud-xgboost-NA_1.0.0",
		"effective_instance_type": "ml.m5.2xlarge",
		"effective_source_dir":    nil, // no source_dir: the compiler uses the script's own directory
		"script_path":             "tabular_preprocessing.py",
		"processed_s3":            "s3://my-bucket/MODS/jane-fraud-xgboost-NA_1.0.0/tabular_preprocessing/training",
	}
	for k, v := range want {
		if cfg.Derived[k] != v {
			t.Errorf("%s = %v, want %v", k, cfg.Derived[k], v)
		}
	}
	if cfg.Key != "TabularPreprocessing_training" || cfg.JobType != "training" {
		t.Errorf("key %s job %s", cfg.Key, cfg.JobType)
	}
	// Override, large instance, S3 source dir.
	cfg, probs = s.Build("TabularPreprocessing", validBase(), map[string]any{
		"job_type": "training", "label_name": "y", "use_large_processing_instance": true,
		"processing_source_dir": "s3://code/scripts/", "pipeline_name_override": "custom-name",
	})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.Derived["effective_instance_type"] != "ml.m5.4xlarge" || cfg.Derived["script_path"] != "s3://code/scripts/tabular_preprocessing.py" ||
		cfg.Derived["pipeline_name"] != "custom-name" || cfg.Derived["pipeline_s3_loc"] != "s3://my-bucket/MODS/custom-name_1.0.0" {
		t.Errorf("derived = %v", cfg.Derived)
	}
	// Setting a derived field is refused with a hint.
	_, probs = s.Build("TabularPreprocessing", validBase(), map[string]any{"job_type": "training", "label_name": "y", "pipeline_name": "x"})
	if len(probs) != 1 || probs[0].Kind != KindUnknown || !strings.Contains(probs[0].Message, "pipeline_name_override") {
		t.Errorf("probs = %v", probs)
	}
}

// Cursus' from_base_config lets base defaults beat step defaults; here a
// step's own default wins unless the user set the base value.
func TestStepDefaultBeatsBaseDefault(t *testing.T) {
	s := fixtureSchemas(t)
	parent, probs := s.Build("XGBoostModel", validBase(), nil)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if parent.Values["framework_version"] != "2.1.0" {
		t.Fatalf("base default framework_version = %v", parent.Values["framework_version"])
	}
	hp := map[string]any{"hyperparameters": map[string]any{"num_round": 100}}
	cfg, probs := s.Derive("XGBoostTraining", parent, hp)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.Values["framework_version"] != "1.7-1" {
		t.Errorf("step default lost: framework_version = %v", cfg.Values["framework_version"])
	}
	ev, probs := s.Derive("XGBoostModelEval", parent, map[string]any{"id_name": "id", "label_name": "y"})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if ev.Values["use_large_processing_instance"] != true {
		t.Errorf("processing base default beat the step default")
	}
	// A value the user set on the base does win.
	b := validBase()
	b["framework_version"] = "1.5-1"
	parent, _ = s.Build("XGBoostModel", b, nil)
	cfg, probs = s.Derive("XGBoostTraining", parent, hp)
	if len(probs) > 0 || cfg.Values["framework_version"] != "1.5-1" {
		t.Errorf("explicit base value lost: %v %v", cfg.Values["framework_version"], probs)
	}
	// …and the step's allowed values still apply to it.
	b["framework_version"] = "2.1.0"
	parent, _ = s.Build("XGBoostModel", b, nil)
	_, probs = s.Derive("XGBoostTraining", parent, hp)
	if kinds(probs)["framework_version"] != KindEnum {
		t.Errorf("probs = %v", probs)
	}
}

func TestTypesAndNormalisation(t *testing.T) {
	s := fixtureSchemas(t)
	cfg, probs := s.Build("TabularPreprocessing", validBase(), map[string]any{
		"job_type": "training", "label_name": "y",
		"processing_instance_count":   float64(2), // JSON numbers arrive as float64
		"train_ratio":                 1,
		"processing_script_arguments": []any{"--a", "b"},
		"tags":                        map[string]any{"team": "risk", "n": float64(3)},
		"image_uri":                   nil, // null on an optional field = unset
	})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.Values["processing_instance_count"] != int64(2) || cfg.Values["train_ratio"] != float64(1) {
		t.Errorf("values = %#v %#v", cfg.Values["processing_instance_count"], cfg.Values["train_ratio"])
	}
	if tags := cfg.Values["tags"].(map[string]any); tags["n"] != float64(3) {
		t.Errorf("nested numbers are kept: %#v", tags["n"])
	}
	if _, ok := cfg.Values["image_uri"]; ok {
		t.Error("null image_uri should stay unset")
	}
	_, probs = s.Build("TabularPreprocessing", validBase(), map[string]any{
		"job_type": "Training!", "label_name": nil,
		"processing_instance_count":   2.5,
		"processing_script_arguments": []any{"--a", 3},
		"tags":                        []any{},
		"output_format":               "xlsx",
		"enable_caching":              nil,
	})
	want := map[string]string{
		"job_type": KindPattern, "label_name": KindMissing, "processing_instance_count": KindType,
		"processing_script_arguments[1]": KindType, "tags": KindType, "output_format": KindEnum, "enable_caching": KindType,
	}
	got := kinds(probs)
	for f, k := range want {
		if got[f] != k {
			t.Errorf("%s: kind %q want %q (%v)", f, got[f], k, probs)
		}
	}
	if len(probs) != len(want) {
		t.Errorf("problems: %v", probs)
	}
}

func TestHostileValues(t *testing.T) {
	s := fixtureSchemas(t)
	deep := any("x")
	for i := 0; i < 200; i++ {
		deep = map[string]any{"a": deep}
	}
	wide := make([]any, MaxElements+1)
	for i := range wide {
		wide[i] = i
	}
	_, probs := s.Build("TabularPreprocessing", validBase(), map[string]any{
		"job_type": "training", "label_name": strings.Repeat("x", MaxStringLen+1),
		"tags":                        deep,
		"processing_script_arguments": wide,
	})
	got := kinds(probs)
	if got["label_name"] != KindRange {
		t.Errorf("enormous string: %v", probs)
	}
	var deepSeen, wideSeen bool
	for _, p := range probs {
		if strings.HasPrefix(p.Field, "tags") && strings.Contains(p.Message, "deeper") {
			deepSeen = true
		}
		if p.Field == "processing_script_arguments" && p.Kind == KindRange {
			wideSeen = true
		}
		if len(p.Message) > 1000 {
			t.Errorf("message not shortened: %d bytes", len(p.Message))
		}
	}
	if !deepSeen || !wideSeen {
		t.Errorf("deep %v wide %v: %v", deepSeen, wideSeen, probs)
	}
}

func TestCrossFieldRules(t *testing.T) {
	s := fixtureSchemas(t)
	hp := map[string]any{"eta": 0.1}
	_, probs := s.Build("Tuning", validBase(), map[string]any{
		"hyperparameters": hp, "objective_metric_name": "validation:auc",
		"max_jobs": 4, "max_parallel_jobs": 8,
		"search_space": map[string]any{
			"continuous":  []any{map[string]any{"name": "eta", "min": 0.5, "max": 0.1}},
			"categorical": []any{map[string]any{"name": "booster"}},
			"bogus":       []any{},
		},
	})
	got := kinds(probs)
	for f, k := range map[string]string{
		"max_parallel_jobs": KindRule, "search_space.continuous[0]": KindRule,
		"search_space.categorical[0].values": KindRule, "search_space.bogus": KindRule,
	} {
		if got[f] != k {
			t.Errorf("%s: %q (%v)", f, got[f], probs)
		}
	}
	cfg, probs := s.Build("Tuning", validBase(), map[string]any{
		"hyperparameters": hp, "objective_metric_name": "validation:auc",
		"search_space": map[string]any{"integer": []any{map[string]any{"name": "max_depth", "min": 3, "max": 9}}},
	})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.Values["training_entry_point"] != "xgboost_training.py" || cfg.Derived["model_output_s3"] != "s3://my-bucket/MODS/jane-fraud-xgboost-NA_1.0.0/tuning/model" {
		t.Errorf("tuning config = %v / %v", cfg.Values["training_entry_point"], cfg.Derived)
	}
	_, probs = s.Build("Registration", validBase(), map[string]any{
		"model_package_group_name": "fraud-models", "content_types": []any{"text/csv", "application/json"},
		"inference_instance_types": []any{"m5.large"},
	})
	got = kinds(probs)
	if got["content_types"] != KindRule || got["inference_instance_types[0]"] != KindPattern {
		t.Errorf("registration probs = %v", probs)
	}
	// No source directory is needed: the compiler takes the entry
	// script's own directory (issue 21 item 4).
	_, probs = s.Build("TabularPreprocessing", validBase(), map[string]any{"job_type": "training", "label_name": "y", "source_dir": ""})
	if _, ok := kinds(probs)["processing_source_dir"]; ok {
		t.Errorf("an entry point without a source directory is refused: %v", probs)
	}
}

func TestBrokenStepSectionsBecomeProblems(t *testing.T) {
	cat := loadFixtureCatalog(t)
	bad := &steps.Interface{StepType: "Broken", Registry: steps.Registry{SageMakerStepType: "Processing"}}
	add := func(name string, f steps.Field) { bad.Config.Fields.Set(name, f) }
	add("no_type", steps.Field{Tier: "system"})
	add("bad_pattern", steps.Field{Type: "string", Tier: "system", Pattern: "("})
	add("bad_default", steps.Field{Type: "integer", Tier: "system", Default: "x"})
	add("bad_rule", steps.Field{Type: "string", Tier: "derived", Rule: "s3_join(nope, \"x\")"})
	add("cycle_a", steps.Field{Type: "string", Tier: "derived", Rule: "first_set(cycle_b)"})
	add("cycle_b", steps.Field{Type: "string", Tier: "derived", Rule: "first_set(cycle_a)"})
	add("retyped", steps.Field{Type: "integer"})
	bad.Config.Fields.Set("bucket", steps.Field{Type: "integer"})
	add("good", steps.Field{Type: "string", Tier: "system", Default: "ok"})
	cat["Broken"] = bad
	s, err := LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range s.Problems() {
		if p.StepType != "Broken" {
			t.Errorf("unexpected problem %v", p)
		}
		seen[p.Field] = true
	}
	for _, f := range []string{"no_type", "bad_pattern", "bad_default", "bad_rule", "cycle_a", "cycle_b", "bucket"} {
		if !seen[f] {
			t.Errorf("no problem for %s: %v", f, s.Problems())
		}
	}
	sc, err := s.ForStep("Broken")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sc.Field("good"); !ok {
		t.Error("good field dropped")
	}
	if f, _ := sc.Field("bucket"); f.Type != "string" {
		t.Error("bucket retyped")
	}
}
