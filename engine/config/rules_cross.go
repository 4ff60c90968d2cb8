package config

import (
	"fmt"
	"maps"
	"slices"
)

// crossCheck is a rule that looks at several fields of one config. Each is
// attached to the base layer whose fields it reads and runs only when that
// layer is in the step's chain and no value it reads is broken.
type crossCheck struct {
	layer string
	run   func(v map[string]any) []Problem
}

var crossRules = []crossCheck{
	{LayerTuning, checkTuningJobs},
	{LayerTuning, checkSearchSpace},
	{LayerRegistration, checkSingleMIME},
}

func crossChecks(sc *Schema, values map[string]any) []Problem {
	var probs []Problem
	for _, c := range crossRules {
		if sc.HasLayer(c.layer) {
			probs = append(probs, c.run(values)...)
		}
	}
	return probs
}

func setString(v map[string]any, k string) bool {
	s, ok := v[k].(string)
	return ok && s != ""
}

func checkTuningJobs(v map[string]any) []Problem {
	p, ok1 := v["max_parallel_jobs"].(int64)
	m, ok2 := v["max_jobs"].(int64)
	if ok1 && ok2 && p > m {
		return []Problem{{Field: "max_parallel_jobs", Kind: KindRule,
			Message: fmt.Sprintf("max_parallel_jobs (%d) cannot exceed max_jobs (%d)", p, m)}}
	}
	return nil
}

// search_space: {continuous|integer: [{name, min, max}], categorical:
// [{name, values}]} with at least one range in all.
func checkSearchSpace(v map[string]any) []Problem {
	ss, ok := v["search_space"].(map[string]any)
	if !ok {
		return nil
	}
	var probs []Problem
	bad := func(field, msg string) { probs = append(probs, Problem{Field: field, Kind: KindRule, Message: msg}) }
	ranges := 0
	for _, kind := range slices.Sorted(maps.Keys(ss)) {
		field := "search_space." + kind
		if kind != "continuous" && kind != "integer" && kind != "categorical" {
			bad(field, fmt.Sprintf("unknown range kind %q; use continuous, integer or categorical", kind))
			continue
		}
		list, ok := ss[kind].([]any)
		if !ok {
			bad(field, "must be an array of ranges")
			continue
		}
		for i, el := range list {
			at := fmt.Sprintf("%s[%d]", field, i)
			r, ok := el.(map[string]any)
			if !ok {
				bad(at, "must be an object")
				continue
			}
			ranges++
			if !setString(r, "name") {
				bad(at+".name", "a range needs a name")
			}
			if kind == "categorical" {
				if vals, ok := r["values"].([]any); !ok || len(vals) == 0 {
					bad(at+".values", "a categorical range needs a non-empty values array")
				}
				continue
			}
			lo, okLo := toFloat(r["min"])
			hi, okHi := toFloat(r["max"])
			switch {
			case !okLo || !okHi:
				bad(at, "a "+kind+" range needs numeric min and max")
			case lo > hi:
				bad(at, fmt.Sprintf("min %v exceeds max %v", r["min"], r["max"]))
			}
		}
	}
	if ranges == 0 && len(probs) == 0 {
		bad("search_space", "needs at least one range (continuous, integer or categorical)")
	}
	return probs
}

// SageMaker model packages declare exactly one input and one output MIME
// type in the Cursus registration flow.
func checkSingleMIME(v map[string]any) []Problem {
	var probs []Problem
	for _, k := range []string{"content_types", "response_types"} {
		if arr, ok := v[k].([]any); ok && len(arr) != 1 {
			probs = append(probs, Problem{Field: k, Kind: KindRule,
				Message: fmt.Sprintf("%s must list exactly one MIME type, got %d", k, len(arr))})
		}
	}
	return probs
}
