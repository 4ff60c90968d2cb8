package deps

import (
	"strings"
	"sync"
	"unicode"

	"github.com/pmezard/go-difflib/difflib"
)

// Tables of the Cursus semantic name matcher: abbreviations expanded,
// synonyms and stop words, as Cursus's SemanticMatcher has them.
var (
	abbreviations = map[string]string{
		"config":      "configuration",
		"params":      "parameters",
		"hyperparams": "hyperparameters",
		"preprocess":  "preprocessing",
		"eval":        "evaluation",
		"reg":         "registration",
		"pkg":         "package",
		"packaged":    "package",
	}
	stopWords = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "but": true,
		"in": true, "on": true, "at": true, "to": true, "for": true, "of": true, "with": true, "by": true}
	synonymGroups = [][]string{
		{"model", "artifact", "trained", "output"},
		{"data", "dataset", "input", "processed", "training"},
		{"config", "configuration", "params", "parameters", "hyperparameters", "settings"},
		{"payload", "sample", "test", "inference", "example"},
		{"output", "result", "artifact", "generated", "produced"},
		{"training", "train", "fit", "learn"},
		{"preprocessing", "preprocess", "processed", "clean", "transform"},
	}
	// synonymOf maps a word to the bitset of groups containing it.
	synonymOf = func() map[string]uint {
		m := map[string]uint{}
		for g, words := range synonymGroups {
			for _, w := range words {
				m[w] |= 1 << g
			}
		}
		return m
	}()
)

// Weights of the similarity components.
const (
	weightString    = 0.3
	weightToken     = 0.25
	weightSemantic  = 0.25
	weightSubstring = 0.2
)

// Normalize is the matcher's name normalisation: lowercase, `_ - .` become
// spaces, everything but [a-z0-9] and whitespace is dropped, abbreviations
// are expanded, stop words removed, words joined by single spaces. camelCase
// is deliberately not split (the reference does not).
func Normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case unicode.IsSpace(r), r >= 0x1c && r <= 0x1f: // Python's str.isspace also covers U+001C..U+001F
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	out := words[:0]
	for _, w := range words {
		if e, ok := abbreviations[w]; ok {
			w = e
		}
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// Explanation is the similarity of two names with every component.
type Explanation struct {
	Overall    float64   `json:"overall_score"`
	Normalized [2]string `json:"normalized_names"`
	String     float64   `json:"string_similarity"`
	Token      float64   `json:"token_similarity"`
	Semantic   float64   `json:"semantic_similarity"`
	Substring  float64   `json:"substring_similarity"`
}

// Similarity is the matcher's score of two names in [0, 1].
func Similarity(a, b string) float64 { return Explain(a, b).Overall }

// Explain computes the similarity and its components. Equal normalised names
// score 1.0. A name that is empty, or normalises to nothing (only stop words
// or punctuation), scores 0: the reference would call two such names equal,
// which no user means.
//
// Results are remembered (see explained): wiring scores the same few
// dependency and output names against each other for every DAG node.
func Explain(a, b string) Explanation {
	if len(a)+len(b) > maxExplainedName {
		return explain(a, b)
	}
	k := [2]string{a, b}
	explained.Lock()
	e, ok := explained.m[k]
	explained.Unlock()
	if ok {
		return e
	}
	e = explain(a, b)
	explained.Lock()
	if explained.m == nil || len(explained.m) >= maxExplained {
		explained.m = make(map[[2]string]Explanation)
	}
	explained.m[k] = e
	explained.Unlock()
	return e
}

// explained remembers Explain's answers. The scorer (difflib's sequence
// matcher above all) was half of wiring and a third of compiling the
// shared DAGs while the catalogs name only a few hundred ports, so the
// library stays and each pair is scored once. Bounded in entries (it
// starts over when full) and in name length.
var explained struct {
	sync.Mutex
	m map[[2]string]Explanation
}

const (
	maxExplained     = 1 << 14
	maxExplainedName = 256
)

func explain(a, b string) Explanation {
	n1, n2 := Normalize(a), Normalize(b)
	e := Explanation{Normalized: [2]string{n1, n2}}
	if n1 == "" || n2 == "" {
		return e
	}
	if n1 == n2 {
		return Explanation{Overall: 1, Normalized: e.Normalized, String: 1, Token: 1, Semantic: semanticSim(n1, n2), Substring: 1}
	}
	e.String = sequenceRatio(n1, n2)
	e.Token = tokenSim(n1, n2)
	e.Semantic = semanticSim(n1, n2)
	e.Substring = substringSim(n1, n2)
	// Same operation order as the reference (a left-to-right sum of
	// products) so the float64 result is bit-identical.
	e.Overall = e.String*weightString + e.Token*weightToken + e.Semantic*weightSemantic + e.Substring*weightSubstring
	return e
}

// uniqueWords splits on spaces keeping first-seen order, duplicates dropped.
func uniqueWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(s) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func tokenSim(n1, n2 string) float64 {
	t1, t2 := uniqueWords(n1), uniqueWords(n2)
	if len(t1) == 0 || len(t2) == 0 {
		return 0
	}
	in2 := map[string]bool{}
	for _, w := range t2 {
		in2[w] = true
	}
	inter := 0
	for _, w := range t1 {
		if in2[w] {
			inter++
		}
	}
	union := len(t1) + len(t2) - inter
	return float64(inter) / float64(union)
}

// semanticSim averages, over all word pairs, 1 for equal words and 0.8 for
// synonyms. The reference sums in Python set order (hash-seed dependent);
// summing in first-seen order is deterministic and agrees to the last bit
// or two.
func semanticSim(n1, n2 string) float64 {
	t1, t2 := uniqueWords(n1), uniqueWords(n2)
	if len(t1) == 0 || len(t2) == 0 {
		return 0
	}
	total := 0.0
	for _, w1 := range t1 {
		for _, w2 := range t2 {
			switch {
			case w1 == w2:
				total += 1.0
			case synonymOf[w1]&synonymOf[w2] != 0:
				total += 0.8
			}
		}
	}
	return total / float64(len(t1)*len(t2))
}

func substringSim(n1, n2 string) float64 {
	if strings.Contains(n2, n1) || strings.Contains(n1, n2) {
		return lengthRatio(n1, n2)
	}
	best := 0.0
	for _, w1 := range strings.Fields(n1) {
		for _, w2 := range strings.Fields(n2) {
			if len(w1) >= 3 && len(w2) >= 3 && (strings.Contains(w2, w1) || strings.Contains(w1, w2)) {
				if s := lengthRatio(w1, w2); s > best {
					best = s
				}
			}
		}
	}
	return best
}

// sequenceRatio is CPython's difflib.SequenceMatcher(None, a, b).ratio()
// over the characters of a and b, autojunk included: go-difflib follows
// CPython's block search and tie-breaking, so scores near the 0.5 wiring
// threshold come out bit-identical to the reference.
func sequenceRatio(a, b string) float64 {
	return difflib.NewMatcher(strings.Split(a, ""), strings.Split(b, "")).Ratio()
}

// lengthRatio is shorter/longer. Normalised names are ASCII, so byte length
// equals Python's character length.
func lengthRatio(x, y string) float64 {
	s, l := len(x), len(y)
	if s > l {
		s, l = l, s
	}
	if l == 0 {
		return 0
	}
	return float64(s) / float64(l)
}
