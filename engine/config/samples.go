package config

import (
	"regexp"

	"github.com/cursus-dev/cursus/engine/steps"
)

// sampleByName holds realistic values for fields whose shape a generic
// sample cannot guess.
var sampleByName = map[string]any{
	"author":                   "jdoe",
	"bucket":                   "example-bucket",
	"role":                     "arn:aws:iam::123456789012:role/SageMakerExecutionRole",
	"region":                   "NA",
	"service_name":             "example",
	"pipeline_version":         "1.0.0",
	"job_type":                 "training",
	"label_name":               "label",
	"label_field":              "label",
	"id_name":                  "id",
	"id_field":                 "id",
	"objective_metric_name":    "validation:auc",
	"model_package_group_name": "example-models",
	// Only keys every framework's schema knows, so a sample serves any
	// training step.
	"hyperparameters": map[string]any{
		"id_name": "id", "label_name": "label", "full_field_list": []any{"id", "label", "feature_1"},
		"tab_field_list": []any{"feature_1"}, "cat_field_list": []any{}, "multiclass_categories": []any{int64(0), int64(1)},
	},
	"search_space": map[string]any{
		"continuous": []any{map[string]any{"name": "eta", "min": 0.01, "max": 0.3}},
	},
}

var sampleStrings = []string{"sample", "sample_value", "training", "s3://example-bucket/sample", "ml.m5.large", "1.0.0", "sample.py", "SAMPLE", "Sample"}

// SampleValue returns a value that satisfies f's type and constraints as
// far as a generic guess can; ok is false when none could be found.
func SampleValue(f *Field) (any, bool) {
	if v, ok := sampleByName[f.Name]; ok {
		if n, probs := checkValue(f, cloneValue(v)); len(probs) == 0 {
			return n, true
		}
	}
	if f.Default != nil {
		return cloneValue(f.Default), true
	}
	if len(f.Allowed) > 0 {
		if f.Type == "array" {
			return []any{f.Allowed[0]}, true
		}
		return f.Allowed[0], true
	}
	var v any
	switch f.Type {
	case "string":
		v = sampleString(f.re)
	case "integer":
		v = int64(sampleNumber(f, 1))
	case "number":
		v = sampleNumber(f, 1)
	case "boolean":
		v = false
	case "array":
		switch f.Items {
		case "string":
			v = []any{sampleString(f.re)}
		case "integer":
			v = []any{int64(sampleNumber(f, 1))}
		case "number":
			v = []any{sampleNumber(f, 1)}
		default:
			v = []any{}
		}
	case "object":
		v = map[string]any{}
	}
	n, probs := checkValue(f, v)
	return n, len(probs) == 0
}

func sampleString(re *regexp.Regexp) string {
	if re == nil {
		return "sample"
	}
	for _, s := range sampleStrings {
		if re.MatchString(s) {
			return s
		}
	}
	return "sample"
}

func sampleNumber(f *Field, want float64) float64 {
	if f.Minimum != nil && want < *f.Minimum {
		want = *f.Minimum
	}
	if f.Maximum != nil && want > *f.Maximum {
		want = *f.Maximum
	}
	return want
}

// SampleValues fills every required field of a requirements report with a
// sample: shared essentials go to base, the rest per node. Tests (here and
// in the compiler) use it to get a valid config for any DAG. Fields no
// sample satisfies are listed in missing as "node.field" (or "field").
func SampleValues(rep *RequirementsReport) (base map[string]any, perNode map[string]map[string]any, missing []string) {
	base = map[string]any{}
	perNode = map[string]map[string]any{}
	fill := func(dst map[string]any, fields []*Field, prefix string) {
		for _, f := range fields {
			if f.Tier != steps.TierEssential || f.Default != nil {
				continue
			}
			if v, ok := SampleValue(f); ok {
				dst[f.Name] = v
			} else {
				missing = append(missing, prefix+f.Name)
			}
		}
	}
	fill(base, rep.Shared.Essential, "")
	for _, n := range rep.Nodes {
		vals := map[string]any{}
		fill(vals, n.Fields.Essential, n.Node+".")
		// A tuning step tunes a key its framework documents (the generic
		// sample's eta is XGBoost's); per node, this wins over a shared one.
		if n.sc != nil && n.sc.Hyperparameters != nil && n.sc.HasLayer(LayerTuning) {
			if ss, ok := n.sc.Hyperparameters.sampleSearchSpace(); ok {
				vals["search_space"] = ss
			}
		}
		perNode[n.Node] = vals
	}
	return base, perNode, missing
}
