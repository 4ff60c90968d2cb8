package dag

import (
	"context"
	"fmt"
	"sort"
)

// Issue categories reported by Check. The first four carry the names the
// Cursus resolver uses so reports stay familiar.
const (
	IssueCycles         = "cycles"
	IssueDangling       = "dangling_dependencies"
	IssueIsolated       = "isolated_nodes"
	IssueMissingSteps   = "missing_steps"
	IssueEmpty          = "empty_dag"
	IssueDuplicateNodes = "duplicate_nodes"
	IssueDuplicateEdges = "duplicate_edges"
	IssueSelfLoops      = "self_loops"
	IssueNodeTypeRules  = "node_type_rules"
	IssueInvalidNames   = "invalid_node_names"
)

// Node types a lookup may report (the step interface's node_type).
const (
	NodeSource   = "source"
	NodeInternal = "internal"
	NodeSink     = "sink"
	NodeSingular = "singular"
)

// NodeInfo is what integrity checks need to know about a node's step.
type NodeInfo struct {
	StepType string
	NodeType string // source | internal | sink | singular; "" means internal
}

// Lookup resolves a node name to its step. An error means the step type is
// unknown; its message (which may carry suggestions) is reported verbatim.
type Lookup func(node string) (NodeInfo, error)

// Issue is one integrity finding. Node, Edge or Cycle locate it. It is not
// a finding.Finding because the tools emit it as it is, with a category
// and an edge or cycle where a Finding has a file and key path.
type Issue struct {
	Category string     `json:"category"`
	Message  string     `json:"message"`
	Node     string     `json:"node,omitempty"`
	Edge     *[2]string `json:"edge,omitempty"`
	Cycle    []string   `json:"cycle,omitempty"`
}

// Integrity is the result of Check: Valid iff there are no issues.
type Integrity struct {
	Valid     bool    `json:"is_valid"`
	Issues    []Issue `json:"issues"`
	NodeCount int     `json:"node_count"`
	EdgeCount int     `json:"edge_count"`
}

// Categories returns the distinct issue categories, sorted.
func (r Integrity) Categories() []string {
	seen := map[string]bool{}
	var out []string
	for _, is := range r.Issues {
		if !seen[is.Category] {
			seen[is.Category] = true
			out = append(out, is.Category)
		}
	}
	sort.Strings(out)
	return out
}

// ByCategory groups issue messages by category, in finding order.
func (r Integrity) ByCategory() map[string][]string {
	out := map[string][]string{}
	for _, is := range r.Issues {
		out[is.Category] = append(out[is.Category], is.Message)
	}
	return out
}

// Check runs the structural checks (no step catalog). They are linear in
// the DAG's size, so Check takes no context.
func (d *DAG) Check() Integrity {
	r, _ := d.CheckWith(context.Background(), nil)
	return r
}

// CheckWith runs the structural checks and, when lookup is non-nil, the
// step checks: every node must name a known step type, and node types
// constrain edges (a source has no parents, a sink no children, a singular
// node neither). Findings come in a fixed order so reports are stable.
// The lookups dominate on a large DAG, so CheckWith stops with ctx's error
// when ctx ends.
func (d *DAG) CheckWith(ctx context.Context, lookup Lookup) (Integrity, error) {
	var issues []Issue
	add := func(is Issue) { issues = append(issues, is) }
	g, dangling := d.build()

	if len(g.nodes) == 0 {
		add(Issue{Category: IssueEmpty, Message: "DAG has no nodes"})
	}
	seenNode := map[string]bool{}
	for _, n := range d.Nodes {
		if n == "" {
			add(Issue{Category: IssueInvalidNames, Message: "node name is empty"})
		}
		if seenNode[n] {
			add(Issue{Category: IssueDuplicateNodes, Node: n, Message: fmt.Sprintf("node %q is declared more than once", n)})
		}
		seenNode[n] = true
	}
	seenEdge := map[[2]string]bool{}
	for _, e := range d.Edges {
		e := e
		if seenEdge[e] {
			add(Issue{Category: IssueDuplicateEdges, Edge: &e, Message: fmt.Sprintf("edge %s -> %s is listed more than once", e[0], e[1])})
		}
		seenEdge[e] = true
		if e[0] == e[1] {
			add(Issue{Category: IssueSelfLoops, Node: e[0], Edge: &e, Message: fmt.Sprintf("edge %s -> %s points a node at itself", e[0], e[1])})
		}
	}
	for _, de := range dangling {
		e := de.Edge
		side := "source"
		if de.Missing == e[1] && de.Missing != e[0] {
			side = "destination"
		}
		add(Issue{Category: IssueDangling, Node: de.Missing, Edge: &e,
			Message: fmt.Sprintf("edge %s -> %s references non-existent %s node %q", e[0], e[1], side, de.Missing)})
	}
	// Self-loops are reported above; leave them out of cycle naming so a
	// real multi-node cycle is not hidden behind them.
	if order, indeg := g.kahn(true); len(order) < len(g.nodes) {
		if cyc := g.findCycle(indeg, true); cyc != nil {
			add(Issue{Category: IssueCycles, Cycle: cyc, Message: (&CycleError{Cycle: cyc}).Error()})
		}
	}

	infos := make([]NodeInfo, len(g.nodes))
	known := make([]bool, len(g.nodes))
	if lookup != nil {
		for i, n := range g.nodes {
			if err := ctx.Err(); err != nil {
				return Integrity{}, err
			}
			info, err := lookup(n)
			if err != nil {
				add(Issue{Category: IssueMissingSteps, Node: n, Message: fmt.Sprintf("node %q: %v", n, err)})
				continue
			}
			infos[i], known[i] = info, true
		}
	}
	if len(g.nodes) > 1 {
		for i, n := range g.nodes {
			if len(g.parents[i]) == 0 && len(g.children[i]) == 0 && infos[i].NodeType != NodeSingular {
				add(Issue{Category: IssueIsolated, Node: n, Message: fmt.Sprintf("node %q has no edges", n)})
			}
		}
	}
	for i, n := range g.nodes {
		if !known[i] {
			continue
		}
		in, out := len(g.parents[i]), len(g.children[i])
		var msg string
		switch infos[i].NodeType {
		case NodeSource:
			if in > 0 {
				msg = fmt.Sprintf("node %q is a source step (%s) but has %d incoming edge(s), e.g. from %q", n, infos[i].StepType, in, g.nodes[g.parents[i][0]])
			}
		case NodeSink:
			if out > 0 {
				msg = fmt.Sprintf("node %q is a sink step (%s) but has %d outgoing edge(s), e.g. to %q", n, infos[i].StepType, out, g.nodes[g.children[i][0]])
			}
		case NodeSingular:
			if in+out > 0 {
				msg = fmt.Sprintf("node %q is a singular step (%s) and must have no edges, found %d", n, infos[i].StepType, in+out)
			}
		}
		if msg != "" {
			add(Issue{Category: IssueNodeTypeRules, Node: n, Message: msg})
		}
	}
	if issues == nil {
		issues = []Issue{}
	}
	return Integrity{Valid: len(issues) == 0, Issues: issues, NodeCount: len(g.nodes), EdgeCount: len(seenEdge)}, nil
}
