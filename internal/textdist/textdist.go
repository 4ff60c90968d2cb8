// Package textdist measures how far apart two names are, for "did you
// mean" suggestions.
package textdist

// Distance is the Levenshtein distance between a and b. Inputs longer
// than 256 bytes are not compared (the cost is quadratic); the distance is
// then the longer length, which ranks them last as suggestions.
func Distance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
