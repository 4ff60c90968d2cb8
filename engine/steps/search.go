package steps

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// SearchHit is one ranked search result and why it matched.
type SearchHit struct {
	StepType          string   `json:"step_name"`
	Score             float64  `json:"score"`
	MatchReason       string   `json:"match_reason"` // the strongest reason
	Reasons           []string `json:"reasons"`
	SageMakerStepType string   `json:"sagemaker_step_type"`
	Description       string   `json:"description"`
}

// Field weights: a name hit outranks a description hit outranks a port
// keyword, and so on. Each further matching field adds searchBonus, so a
// step that matches in several places ranks above one that matches in one.
const (
	scoreExact       = 1.0
	scorePrefix      = 0.9
	scoreNameContain = 0.8
	scoreDescription = 0.6
	scoreKeyword     = 0.5
	scoreSMType      = 0.5
	scoreFramework   = 0.4
	searchBonus      = 0.02
)

// MaxQueryLen bounds search queries; longer ones are cut (a step name or a
// few keywords never come close).
const MaxQueryLen = 200

type fieldHit struct {
	score  float64
	reason string
}

// Search ranks step types against a free-text query: case-insensitive, on
// the name (and its snake-case form), description, SageMaker step type,
// framework (compute kind, SDK class, framework name) and the ports'
// names, aliases and semantic keywords. Multi-word queries score each word
// and average. Ties break on how many other steps consume the step (a
// framework's trainer before its model wrapper), then on name, so results
// are deterministic.
func (c *Catalog) Search(query string) []SearchHit {
	query = strings.TrimSpace(strings.ToLower(query))
	if len(query) > MaxQueryLen {
		query = query[:MaxQueryLen]
	}
	if CanonicalKey(query) == "" {
		return nil
	}
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var hits []SearchHit
	for _, name := range c.names {
		iface := c.ifaces[name]
		var hit SearchHit
		if fh := matchStep(iface, query); len(fh) > 0 {
			hit = buildHit(fh, 1)
		} else if len(words) > 1 {
			// Every word on its own; the mean keeps a two-word match above a
			// one-word match.
			var all []fieldHit
			total := 0.0
			for _, w := range words {
				fh := matchStep(iface, w)
				if len(fh) == 0 {
					continue
				}
				all = append(all, fh...)
				total += bestOf(fh).score
			}
			if len(all) == 0 {
				continue
			}
			hit = buildHit(all, total/float64(len(words))/bestOf(all).score)
		} else {
			continue
		}
		hit.StepType = name
		hit.SageMakerStepType = iface.Registry.SageMakerStepType
		hit.Description = iface.Registry.Description
		if n := c.sources[name]; n > 0 {
			hit.Reasons = append(hit.Reasons, fmt.Sprintf("consumed by %d other step types (tie-break)", n))
		}
		hits = append(hits, hit)
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		if ca, cb := c.sources[hits[a].StepType], c.sources[hits[b].StepType]; ca != cb {
			return ca > cb
		}
		return hits[a].StepType < hits[b].StepType
	})
	return hits
}

func bestOf(fh []fieldHit) fieldHit {
	best := fh[0]
	for _, h := range fh[1:] {
		if h.score > best.score {
			best = h
		}
	}
	return best
}

// buildHit turns field hits into a score: the best field, plus a small bonus
// per other field, scaled (multi-word queries), rounded to 3 decimals.
func buildHit(fh []fieldHit, scale float64) SearchHit {
	sort.SliceStable(fh, func(a, b int) bool { return fh[a].score > fh[b].score })
	s := fh[0].score
	if s < scoreExact {
		s = math.Min(s+searchBonus*float64(len(fh)-1), scoreExact-0.01)
	}
	s = math.Round(s*scale*1000) / 1000
	reasons := make([]string, 0, len(fh))
	seen := map[string]bool{}
	for _, h := range fh {
		if !seen[h.reason] {
			seen[h.reason] = true
			reasons = append(reasons, h.reason)
		}
	}
	return SearchHit{Score: s, MatchReason: fh[0].reason, Reasons: reasons}
}

// matchStep lists every field of iface the (lowercase) query matches.
func matchStep(iface *Interface, q string) []fieldHit {
	var out []fieldHit
	qkey := CanonicalKey(q)
	nameKey := CanonicalKey(iface.StepType)
	switch {
	case nameKey == qkey:
		out = append(out, fieldHit{scoreExact, "name equals the query"})
	case strings.HasPrefix(nameKey, qkey):
		out = append(out, fieldHit{scorePrefix, fmt.Sprintf("name starts with %q", q)})
	case strings.Contains(nameKey, qkey):
		out = append(out, fieldHit{scoreNameContain, fmt.Sprintf("name contains %q", q)})
	}
	if strings.Contains(strings.ToLower(iface.Registry.Description), q) {
		out = append(out, fieldHit{scoreDescription, fmt.Sprintf("description mentions %q", q)})
	}
	if sm := strings.ToLower(iface.Registry.SageMakerStepType); sm != "" && strings.Contains(sm, qkey) {
		out = append(out, fieldHit{scoreSMType, "SageMaker step type " + iface.Registry.SageMakerStepType})
	}
	if c := iface.Compute; c != nil {
		for _, f := range []struct{ key, val string }{
			{"compute.kind", c.Kind}, {"compute.sdk_class", c.SDKClass}, {"compute.framework_name", c.FrameworkName},
		} {
			if f.val != "" && strings.Contains(strings.ToLower(f.val), qkey) {
				out = append(out, fieldHit{scoreFramework, fmt.Sprintf("framework (%s %s)", f.key, f.val)})
				break
			}
		}
	}
	if port := matchPorts(iface, q); port != "" {
		out = append(out, fieldHit{scoreKeyword, port})
	}
	return out
}

// matchPorts finds the first port whose name, alias or keyword contains q.
func matchPorts(iface *Interface, q string) string {
	has := func(vals ...string) bool {
		for _, v := range vals {
			if strings.Contains(strings.ToLower(v), q) {
				return true
			}
		}
		return false
	}
	for _, n := range iface.Spec.Dependencies.Keys() {
		d, _ := iface.Spec.Dependencies.Get(n)
		if has(n) || has(d.SemanticKeywords...) {
			return fmt.Sprintf("input %s (name or keywords) matches %q", n, q)
		}
	}
	for _, n := range iface.Spec.Outputs.Keys() {
		o, _ := iface.Spec.Outputs.Get(n)
		if has(n) || has(o.Aliases...) || has(o.SemanticKeywords...) {
			return fmt.Sprintf("output %s (name, aliases or keywords) matches %q", n, q)
		}
	}
	return ""
}

// SupportsJobType reports whether a step takes jobType: it has that
// variant, or its config declares a job_type field that allows it.
func (c *Catalog) SupportsJobType(stepType, jobType string) bool {
	iface, ok := c.ifaces[stepType]
	if !ok {
		return false
	}
	if _, ok := iface.Variants.Get(jobType); ok {
		return true
	}
	f, ok := iface.Config.Fields.Get("job_type")
	if !ok {
		return false
	}
	if len(f.Allowed) == 0 {
		return true
	}
	for _, a := range f.Allowed {
		if fmt.Sprint(a) == jobType {
			return true
		}
	}
	return false
}
