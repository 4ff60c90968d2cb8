package deps

// This file is a from-scratch Go implementation of the ratio computed by
// CPython's difflib.SequenceMatcher(None, a, b).ratio(). No Go library
// reproduces CPython's exact algorithm: its longest-match tie-breaking
// (earliest i in a, then earliest j in b), its left/right recursion, and the
// "autojunk" rule that drops popular elements of b when len(b) >= 200 all
// change which blocks are found, and dependency scores sit close enough to
// the 0.5 wiring threshold that any difference can flip an edge. isjunk is
// always None here, so the junk-extension passes of CPython never fire.

// sequenceRatio returns 2*M/(len(a)+len(b)) where M is the total size of the
// matching blocks, or 1.0 when both are empty.
func sequenceRatio(a, b []rune) float64 {
	length := len(a) + len(b)
	if length == 0 {
		return 1.0
	}
	m := newSequenceMatcher(a, b)
	return 2.0 * float64(m.matches()) / float64(length)
}

type sequenceMatcher struct {
	a, b []rune
	b2j  map[rune][]int // element of b → its indexes in b, ascending
}

func newSequenceMatcher(a, b []rune) *sequenceMatcher {
	m := &sequenceMatcher{a: a, b: b, b2j: make(map[rune][]int)}
	for j, r := range b {
		m.b2j[r] = append(m.b2j[r], j)
	}
	// Autojunk: in a b of 200+ elements, an element occurring more than
	// 1% of the time (plus one) is "popular" and may not start a match.
	// CPython removes it from b2j but does not mark it junk, so a match
	// can still be extended across it below.
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		for r, idx := range m.b2j {
			if len(idx) > ntest {
				delete(m.b2j, r)
			}
		}
	}
	return m
}

// longestMatch finds the longest block a[i:i+k] == b[j:j+k] inside
// a[alo:ahi], b[blo:bhi]; among equally long blocks the one starting
// earliest in a, then earliest in b, wins.
func (m *sequenceMatcher) longestMatch(alo, ahi, blo, bhi int) (besti, bestj, bestsize int) {
	besti, bestj = alo, blo
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		newj2len := map[int]int{}
		for _, j := range m.b2j[m.a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			newj2len[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = newj2len
	}
	// Extend over elements b2j could not offer (popular ones): with no
	// junk function every element is "non-junk" to CPython here.
	for besti > alo && bestj > blo && m.a[besti-1] == m.b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && m.a[besti+bestsize] == m.b[bestj+bestsize] {
		bestsize++
	}
	return besti, bestj, bestsize
}

// matches sums the sizes of the matching blocks, found as CPython does:
// take the longest match, then recurse on the pieces left and right of it.
func (m *sequenceMatcher) matches() int {
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(m.a), 0, len(m.b)}}
	total := 0
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		i, j, k := m.longestMatch(s.alo, s.ahi, s.blo, s.bhi)
		if k == 0 {
			continue
		}
		total += k
		if s.alo < i && s.blo < j {
			queue = append(queue, span{s.alo, i, s.blo, j})
		}
		if i+k < s.ahi && j+k < s.bhi {
			queue = append(queue, span{i + k, s.ahi, j + k, s.bhi})
		}
	}
	return total
}
