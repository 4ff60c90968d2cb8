package deps

import "context"

// SetMatch is the best producer for one dependency when a set of steps is
// resolved without a DAG.
type SetMatch struct {
	Dependency string    `json:"dependency"`
	Required   bool      `json:"required"`
	FromNode   string    `json:"from_node,omitempty"`
	FromOutput string    `json:"from_output,omitempty"`
	Score      float64   `json:"score"`
	Breakdown  Breakdown `json:"breakdown"`
	Resolved   bool      `json:"resolved"`
}

// SetStep is one step of a set resolution.
type SetStep struct {
	Node     string     `json:"node"`
	StepType string     `json:"step_type"`
	Outputs  []string   `json:"outputs"`
	Matches  []SetMatch `json:"matches"`
}

// ResolveSet matches every dependency of every step against the outputs of
// all the other steps, as if each could feed each: the best score above the
// threshold wins (first maximum in step then output order), and one output
// may feed many dependencies. It answers "could these steps be wired?"
// without a DAG; a DAG's actual wiring is Resolve's job. It stops with
// ctx's error when ctx ends.
func ResolveSet(ctx context.Context, nodes []string, lookup SpecLookup) ([]SetStep, error) {
	specs := make([]NodeSpec, len(nodes))
	unknown := &UnknownNodesError{}
	for i, n := range nodes {
		ns, err := lookup(n)
		if err != nil {
			unknown.Nodes = append(unknown.Nodes, n)
			unknown.Errors = append(unknown.Errors, err)
			continue
		}
		specs[i] = ns
	}
	if len(unknown.Nodes) > 0 {
		return nil, unknown
	}
	r := &resolver{cache: map[[2]string]*pairScores{}}
	out := make([]SetStep, len(nodes))
	for i, n := range nodes {
		st := SetStep{Node: n, StepType: specs[i].StepType, Outputs: append([]string{}, specs[i].Spec.Outputs.Keys()...), Matches: []SetMatch{}}
		depsOf := specs[i].Spec.Dependencies
		for di, dn := range depsOf.Keys() {
			dep, _ := depsOf.Get(dn)
			m := SetMatch{Dependency: dn, Required: dep.IsRequired()}
			for j := range nodes {
				if j == i {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				row := r.scores(specs[i], specs[j]).byDep[di]
				for oi, b := range row {
					if b.Total > m.Score {
						m.Score, m.Breakdown = b.Total, b
						m.FromNode, m.FromOutput = nodes[j], specs[j].Spec.Outputs.Keys()[oi]
					}
				}
			}
			m.Resolved = m.Score > Threshold
			st.Matches = append(st.Matches, m)
		}
		out[i] = st
	}
	return out, nil
}
