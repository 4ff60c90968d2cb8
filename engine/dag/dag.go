// Package dag is the pipeline graph: named nodes, directed edges between
// them, a deterministic topological order, integrity checks, and the Cursus
// DAG JSON formats. It knows nothing about step semantics beyond what a
// caller-supplied lookup tells it.
package dag

import (
	"fmt"
	"strings"
)

// DAG is a pipeline graph. Order matters: node order seeds the topological
// sort and edge order decides tie-breaks downstream, so both are kept as
// given (duplicates included, so Check can report them).
type DAG struct {
	Nodes []string
	Edges [][2]string
}

// New returns a DAG holding copies of nodes and edges.
func New(nodes []string, edges [][2]string) *DAG {
	return &DAG{Nodes: append([]string(nil), nodes...), Edges: append([][2]string(nil), edges...)}
}

// CycleError reports a cycle; Cycle lists its nodes in edge order, starting
// and ending with the same node (A -> B -> A).
type CycleError struct {
	Cycle []string
}

func (e *CycleError) Error() string {
	return "DAG has a cycle: " + strings.Join(e.Cycle, " -> ")
}

// DanglingEdgeError reports an edge whose endpoint is not a declared node.
type DanglingEdgeError struct {
	Edge    [2]string
	Missing string
}

func (e *DanglingEdgeError) Error() string {
	return fmt.Sprintf("edge [%q, %q] references undeclared node %q", e.Edge[0], e.Edge[1], e.Missing)
}

// graph is the de-duplicated adjacency view the algorithms share.
type graph struct {
	nodes    []string       // unique, first-seen order
	index    map[string]int // node → position in nodes
	children [][]int        // per node, in edge order, duplicates removed
	parents  [][]int
}

// build indexes the declared nodes and the edges between them. Edges with an
// undeclared endpoint are returned separately; duplicate edges count once.
func (d *DAG) build() (*graph, []DanglingEdgeError) {
	g := &graph{index: make(map[string]int, len(d.Nodes))}
	for _, n := range d.Nodes {
		if _, ok := g.index[n]; ok {
			continue
		}
		g.index[n] = len(g.nodes)
		g.nodes = append(g.nodes, n)
	}
	g.children = make([][]int, len(g.nodes))
	g.parents = make([][]int, len(g.nodes))
	var dangling []DanglingEdgeError
	seen := make(map[[2]int]bool, len(d.Edges))
	for _, e := range d.Edges {
		s, okS := g.index[e[0]]
		t, okT := g.index[e[1]]
		if !okS {
			dangling = append(dangling, DanglingEdgeError{Edge: e, Missing: e[0]})
		}
		if !okT {
			dangling = append(dangling, DanglingEdgeError{Edge: e, Missing: e[1]})
		}
		if !okS || !okT || seen[[2]int{s, t}] {
			continue
		}
		seen[[2]int{s, t}] = true
		g.children[s] = append(g.children[s], t)
		g.parents[t] = append(g.parents[t], s)
	}
	return g, dangling
}

// kahn runs Kahn's algorithm with a FIFO queue seeded in node order and
// children visited in edge order, so the result depends only on the input
// order. It returns the sorted indexes and, for unsorted nodes, their
// remaining in-degree (non-zero means the node is on or behind a cycle).
func (g *graph) kahn(skipSelfLoops bool) (order []int, indeg []int) {
	indeg = make([]int, len(g.nodes))
	for s, cs := range g.children {
		for _, t := range cs {
			if skipSelfLoops && s == t {
				continue
			}
			indeg[t]++
		}
	}
	queue := make([]int, 0, len(g.nodes))
	for i := range g.nodes {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	order = make([]int, 0, len(g.nodes))
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		order = append(order, n)
		for _, c := range g.children[n] {
			if skipSelfLoops && c == n {
				continue
			}
			indeg[c]--
			if indeg[c] == 0 {
				queue = append(queue, c)
			}
		}
	}
	return order, indeg
}

// findCycle names one cycle among the nodes Kahn could not sort. Every such
// node has an unsorted parent, so walking parents from the first stuck node
// (in node order) must revisit a node; the walk between visits is the cycle.
func (g *graph) findCycle(indeg []int, skipSelfLoops bool) []string {
	start := -1
	for i, d := range indeg {
		if d > 0 {
			start = i
			break
		}
	}
	if start < 0 {
		return nil
	}
	pos := map[int]int{}
	var walk []int
	for n := start; ; {
		if p, ok := pos[n]; ok {
			walk = walk[p:]
			break
		}
		pos[n] = len(walk)
		walk = append(walk, n)
		next := -1
		for _, p := range g.parents[n] {
			if indeg[p] > 0 && !(skipSelfLoops && p == n) {
				next = p
				break
			}
		}
		if next < 0 { // cannot happen for a stuck node; stop rather than loop
			return nil
		}
		n = next
	}
	// walk follows parents, so reverse it to read along the edges, then
	// rotate so the cycle starts at its earliest-declared node.
	for i, j := 0, len(walk)-1; i < j; i, j = i+1, j-1 {
		walk[i], walk[j] = walk[j], walk[i]
	}
	first := 0
	for i, n := range walk {
		if n < walk[first] {
			first = i
		}
	}
	cycle := make([]string, 0, len(walk)+1)
	for i := range walk {
		cycle = append(cycle, g.nodes[walk[(first+i)%len(walk)]])
	}
	return append(cycle, cycle[0])
}

// TopoSort returns the nodes in execution order: Kahn's algorithm, seeded in
// node order, children in edge order. Duplicate nodes and edges count once.
// An edge to an undeclared node is a *DanglingEdgeError; a cycle is a
// *CycleError naming it.
func (d *DAG) TopoSort() ([]string, error) {
	g, dangling := d.build()
	if len(dangling) > 0 {
		return nil, &dangling[0]
	}
	order, indeg := g.kahn(false)
	if len(order) < len(g.nodes) {
		return nil, &CycleError{Cycle: g.findCycle(indeg, false)}
	}
	out := make([]string, len(order))
	for i, n := range order {
		out[i] = g.nodes[n]
	}
	return out, nil
}

// Parents returns the immediate upstream nodes of n in edge order.
func (d *DAG) Parents(n string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range d.Edges {
		if e[1] == n && !seen[e[0]] {
			seen[e[0]] = true
			out = append(out, e[0])
		}
	}
	return out
}

// ParentsByNode returns Parents for every node with one, in a single pass
// over the edges (Parents per node would be quadratic on a large DAG).
func (d *DAG) ParentsByNode() map[string][]string {
	out := map[string][]string{}
	seen := make(map[[2]string]bool, len(d.Edges))
	for _, e := range d.Edges {
		if !seen[e] {
			seen[e] = true
			out[e[1]] = append(out[e[1]], e[0])
		}
	}
	return out
}

// Children returns the immediate downstream nodes of n in edge order.
func (d *DAG) Children(n string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range d.Edges {
		if e[0] == n && !seen[e[1]] {
			seen[e[1]] = true
			out = append(out, e[1])
		}
	}
	return out
}

// Upstream returns every node n transitively depends on, nearest first
// (breadth-first over parents in edge order). Safe on cyclic graphs.
func (d *DAG) Upstream(n string) []string { return d.reach(n, true) }

// Downstream returns every node that transitively depends on n, nearest
// first (breadth-first over children in edge order). Safe on cyclic graphs.
func (d *DAG) Downstream(n string) []string { return d.reach(n, false) }

func (d *DAG) reach(n string, up bool) []string {
	next := map[string][]string{}
	for _, e := range d.Edges {
		if up {
			next[e[1]] = append(next[e[1]], e[0])
		} else {
			next[e[0]] = append(next[e[0]], e[1])
		}
	}
	seen := map[string]bool{n: true}
	var out []string
	queue := []string{n}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, m := range next[cur] {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
				queue = append(queue, m)
			}
		}
	}
	return out
}

// HasNode reports whether n is a declared node.
func (d *DAG) HasNode(n string) bool {
	for _, m := range d.Nodes {
		if m == n {
			return true
		}
	}
	return false
}
