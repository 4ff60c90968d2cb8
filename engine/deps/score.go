// Package deps wires a DAG: it scores how well each upstream output can feed
// each downstream dependency (Score, with the semantic name matcher of
// semantic.go) and assigns producers to dependencies greedily as Cursus's
// assembler does (ResolveWith). It knows nothing about
// HTTP, MCP or tool envelopes.
package deps

import (
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// Threshold: a producer output can feed a dependency only when its score is
// strictly greater than this.
const Threshold = 0.5

// Component weights of the compatibility score.
const (
	scoreTypeExact      = 0.4
	scoreTypeCompatible = 0.2
	scoreDataExact      = 0.2
	scoreDataCompatible = 0.1
	scoreSemanticWeight = 0.25
	scoreExactBonus     = 0.05
	scoreSource         = 0.1
	scoreKeywordWeight  = 0.05
)

// Defaults a spec may leave unset: a dependency or output without a type
// is a processing output, without a data type an S3 URI.
const (
	defaultType     = steps.TypeProcessingOutput
	defaultDataType = "S3Uri"
)

// compatibleTypes: dependency type → output types it accepts (beyond equal).
var compatibleTypes = map[string][]string{
	steps.TypeModelArtifacts:   {steps.TypeModelArtifacts},
	steps.TypeTrainingData:     {steps.TypeProcessingOutput, steps.TypeTrainingData},
	steps.TypeProcessingOutput: {steps.TypeProcessingOutput, steps.TypeTrainingData},
	steps.TypeHyperparameters:  {steps.TypeHyperparameters, steps.TypeCustomProperty},
	steps.TypePayloadSamples:   {steps.TypePayloadSamples, steps.TypeProcessingOutput},
	steps.TypeCustomProperty:   {steps.TypeCustomProperty},
}

// compatibleDataTypes: dependency data type → output data types it accepts.
var compatibleDataTypes = map[string][]string{
	"S3Uri":   {"S3Uri", "String"},
	"String":  {"String", "S3Uri"},
	"Integer": {"Integer", "Float"},
	"Float":   {"Float", "Integer"},
	"Boolean": {"Boolean"},
}

// Breakdown is a compatibility score with every component, so a wiring
// decision (or the lack of one) can be explained.
type Breakdown struct {
	Dependency string `json:"dependency"`
	Output     string `json:"output"`
	Provider   string `json:"provider_step_type"`
	// TypeMatch is exact, compatible or incompatible; incompatible types
	// short-circuit to a total of 0 and leave the other components 0.
	TypeMatch string  `json:"type_match"`
	Type      float64 `json:"type_score"`
	DataType  float64 `json:"data_type_score"`
	// Similarity is the best semantic similarity of the dependency name to
	// the output name or one of its aliases (SimilarityWith names which);
	// Semantic is 0.25 × Similarity.
	Similarity     float64 `json:"semantic_similarity"`
	SimilarityWith string  `json:"semantic_matched_name"`
	Semantic       float64 `json:"semantic_score"`
	ExactBonus     float64 `json:"exact_match_bonus"`
	// Source is +0.1 when the provider is listed in compatible_sources,
	// -0.1 when a list exists without it, 0 when there is no list.
	Source          float64  `json:"source_score"`
	Keywords        float64  `json:"keyword_score"`
	KeywordsMatched []string `json:"keywords_matched"`
	Raw             float64  `json:"raw_score"` // before the cap at 1.0
	Total           float64  `json:"total"`
	Viable          bool     `json:"viable"` // Total > Threshold
}

// Score is the compatibility of output outName of a providerStepType step
// with dependency depName, in [0, 1]. The components are accumulated in
// Cursus's order (type, data type, semantic name similarity, exact-name
// bonus, compatible sources, keywords) so the float total is bit-identical
// to Cursus's.
func Score(dep steps.Dependency, depName string, out steps.Output, outName string, providerStepType string) Breakdown {
	b := Breakdown{Dependency: depName, Output: outName, Provider: providerStepType, KeywordsMatched: []string{}}
	depType, outType := orDefault(dep.Type, defaultType), orDefault(out.Type, defaultType)
	switch {
	case depType == outType:
		b.TypeMatch, b.Type = "exact", scoreTypeExact
	case slices.Contains(compatibleTypes[depType], outType):
		b.TypeMatch, b.Type = "compatible", scoreTypeCompatible
	default:
		b.TypeMatch = "incompatible"
		return b
	}
	s := 0.0
	s += b.Type

	depData, outData := orDefault(dep.DataType, defaultDataType), orDefault(out.DataType, defaultDataType)
	if depData == outData {
		b.DataType = scoreDataExact
	} else if accepted, ok := compatibleDataTypes[depData]; ok && slices.Contains(accepted, outData) {
		b.DataType = scoreDataCompatible
	}
	if b.DataType != 0 {
		s += b.DataType
	}

	b.Similarity, b.SimilarityWith = Similarity(depName, outName), outName
	for _, alias := range out.Aliases {
		if v := Similarity(depName, alias); v > b.Similarity { // first maximum kept
			b.Similarity, b.SimilarityWith = v, alias
		}
	}
	b.Semantic = b.Similarity * scoreSemanticWeight
	s += b.Semantic

	if depName == outName || slices.Contains(out.Aliases, depName) {
		b.ExactBonus = scoreExactBonus
		s += b.ExactBonus
	}

	if len(dep.CompatibleSources) > 0 {
		if providerInSources(providerStepType, dep.CompatibleSources) {
			b.Source = scoreSource
			s += scoreSource
		} else {
			b.Source = -scoreSource
			s -= scoreSource
		}
	}

	if len(dep.SemanticKeywords) > 0 {
		lowerOut := strings.ToLower(outName)
		n := 0
		for _, k := range dep.SemanticKeywords {
			if strings.Contains(lowerOut, strings.ToLower(k)) {
				n++
				b.KeywordsMatched = append(b.KeywordsMatched, k)
			}
		}
		b.Keywords = float64(n) / float64(len(dep.SemanticKeywords)) * scoreKeywordWeight
		s += b.Keywords
	}
	b.Raw = s
	b.Total = min(s, 1.0)
	b.Viable = b.Total > Threshold
	return b
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// normalizeProvider reduces a provider name to its step type: the part
// before the first "_" (a node name carries its job type there).
func normalizeProvider(p string) string {
	base, _, _ := strings.Cut(p, "_")
	return base
}

// providerInSources reports whether provider is named by a compatible
// sources list, accepting legacy aliases, a trailing "Step" on either side
// and a job-type suffix on an entry (lists also carry generic tokens such as
// ProcessingStep, which is why this is a ±0.1 nudge and not a gate).
func providerInSources(provider string, sources []string) bool {
	p := normalizeProvider(provider)
	pBase := strings.TrimSuffix(p, "Step")
	for _, t := range sources {
		t = steps.SourceStepType(t)
		if t == p || t == p+"Step" || strings.TrimSuffix(t, "Step") == pBase {
			return true
		}
		if current, ok := steps.LegacyAlias(t); ok && current == p {
			return true
		}
	}
	return false
}
