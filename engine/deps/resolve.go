package deps

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// NodeSpec is what the resolver needs about one DAG node: its step type, the
// spec with the node's job-type variant applied, and the name the compiled
// pipeline gives the step (used in property references).
type NodeSpec struct {
	StepType         string
	JobType          string
	PipelineStepName string
	Spec             *steps.Spec
	// SpecID identifies Spec for caching: nodes with the same SpecID share
	// pairwise scores. Empty means step type + job type.
	SpecID string
}

func (n NodeSpec) key() string {
	if n.SpecID != "" {
		return n.SpecID
	}
	return n.StepType + "\x00" + n.JobType
}

// SpecLookup resolves a node name; an error means the node is unknown.
type SpecLookup func(node string) (NodeSpec, error)

// Binding wires one consumer dependency to one producer output.
type Binding struct {
	Dependency string `json:"dependency"`
	Required   bool   `json:"required"`
	FromNode   string `json:"from_node"`
	FromOutput string `json:"from_output"`
	// FromStep is the producer's pipeline step name (<StepType>-<Jobtype>).
	FromStep string  `json:"from_step"`
	Score    float64 `json:"score"`
	// Property is the producer's property path without its leading
	// "properties." (e.g. ModelArtifacts.S3ModelArtifacts); Reference is the
	// runtime reference Steps.<FromStep>.<Property>.
	Property  string    `json:"property"`
	Reference string    `json:"reference"`
	Breakdown Breakdown `json:"breakdown"`
}

// Candidate is a producer output considered for a dependency.
type Candidate struct {
	FromNode   string    `json:"from_node"`
	FromOutput string    `json:"from_output"`
	Score      float64   `json:"score"`
	Breakdown  Breakdown `json:"breakdown"`
}

// Unresolved is a required dependency no producer output could feed, with
// the best-scoring outputs of the node's parents (viable ones that lost to
// another dependency included), so the report says why.
type Unresolved struct {
	Node       string      `json:"node"`
	Dependency string      `json:"dependency"`
	Type       string      `json:"type"`
	Reason     string      `json:"reason"`
	Candidates []Candidate `json:"candidates"`
}

// StepInfo is the resolved identity of one node.
type StepInfo struct {
	StepType         string `json:"step_type"`
	JobType          string `json:"job_type,omitempty"`
	PipelineStepName string `json:"pipeline_step_name"`
}

// Plan is the wiring of a DAG.
type Plan struct {
	Order      []string             `json:"execution_order"`
	Steps      map[string]StepInfo  `json:"steps"`
	Bindings   map[string][]Binding `json:"bindings"`
	Unresolved []Unresolved         `json:"unresolved"`
	// OptionalUnbound lists, per node, optional dependencies left empty.
	OptionalUnbound map[string][]string `json:"optional_unbound"`
	// Warnings are optional bindings from producers outside the
	// dependency's compatible_sources, in node order.
	Warnings []SourceWarning `json:"warnings"`
}

// SourceWarning is an optional dependency bound from a producer its
// compatible_sources do not list. Cursus binds any viable output and so does
// the resolver; the binding is reported because such a producer is often
// not the artifact the step's author had in mind.
type SourceWarning struct {
	Node       string  `json:"node"`
	Dependency string  `json:"dependency"`
	FromNode   string  `json:"from_node"`
	FromOutput string  `json:"from_output"`
	Score      float64 `json:"score"`
	Message    string  `json:"message"`
}

// MaxCandidates bounds the candidates reported per unresolved dependency.
const MaxCandidates = 3

// UnknownNodesError lists nodes the lookup could not resolve.
type UnknownNodesError struct {
	Nodes  []string
	Errors []error
}

func (e *UnknownNodesError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, err := range e.Errors {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("cannot resolve %d node(s): %s", len(e.Nodes), strings.Join(msgs, "; "))
}

// pairScores caches every (dependency, output) breakdown for one consumer
// spec × producer spec pair: identical step pairs recur along chains and
// fans, and scoring is the expensive part (string matching).
type pairScores struct {
	byDep [][]Breakdown // [dep index][output index]
}

type resolver struct {
	cache map[[2]string]*pairScores
}

func (r *resolver) scores(consumer, producer NodeSpec) *pairScores {
	k := [2]string{consumer.key(), producer.key()}
	if ps, ok := r.cache[k]; ok {
		return ps
	}
	ps := &pairScores{}
	for _, dn := range consumer.Spec.Dependencies.Keys() {
		dep, _ := consumer.Spec.Dependencies.Get(dn)
		row := make([]Breakdown, 0, consumer.Spec.Outputs.Len())
		for _, on := range producer.Spec.Outputs.Keys() {
			out, _ := producer.Spec.Outputs.Get(on)
			row = append(row, Score(dep, dn, out, on, producer.StepType))
		}
		ps.byDep = append(ps.byDep, row)
	}
	r.cache[k] = ps
	return ps
}

// ResolveWith wires d: a topological order, then for every node the greedy
// assignment of its dependencies to its parents' outputs that Cursus's
// assembler makes: every (dependency, parent output) pair scoring above
// 0.5, required dependencies first and then by descending score (ties in
// edge order), each dependency bound once and each parent output feeding
// at most one dependency of the node. Cursus's second, builder-side pass
// is not reproduced: it can bind outputs the first deliberately left
// unused.
// It stops with ctx's error when ctx ends.
func ResolveWith(ctx context.Context, d *dag.DAG, lookup SpecLookup) (*Plan, error) {
	order, err := d.TopoSort()
	if err != nil {
		return nil, err
	}
	specs := make(map[string]NodeSpec, len(order))
	unknown := &UnknownNodesError{}
	for _, n := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ns, err := lookup(n)
		if err != nil {
			unknown.Nodes = append(unknown.Nodes, n)
			unknown.Errors = append(unknown.Errors, err)
			continue
		}
		if ns.Spec == nil {
			ns.Spec = &steps.Spec{}
		}
		specs[n] = ns
	}
	if len(unknown.Nodes) > 0 {
		return nil, unknown
	}
	parents := make(map[string][]string, len(order))
	seen := make(map[[2]string]bool, len(d.Edges))
	for _, e := range d.Edges {
		if !seen[e] {
			seen[e] = true
			parents[e[1]] = append(parents[e[1]], e[0])
		}
	}
	plan := &Plan{
		Order:           order,
		Steps:           make(map[string]StepInfo, len(order)),
		Bindings:        make(map[string][]Binding),
		Unresolved:      []Unresolved{},
		OptionalUnbound: make(map[string][]string),
		Warnings:        []SourceWarning{},
	}
	r := &resolver{cache: map[[2]string]*pairScores{}}
	for _, n := range order {
		ns := specs[n]
		plan.Steps[n] = StepInfo{StepType: ns.StepType, JobType: ns.JobType, PipelineStepName: ns.PipelineStepName}
		if err := r.wire(ctx, plan, n, ns, parents[n], specs); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// work is one (dependency, candidate) pair of a consumer's greedy pass.
type work struct {
	dep      int
	required bool
	parent   int // index into the consumer's parents
	out      int
	b        *Breakdown
}

// wire runs the greedy pass for one consumer: every viable (dependency,
// candidate) pair, required dependencies first, then by descending score,
// ties kept in list order (dependencies in the order they first got a
// candidate, candidates in edge order). A dependency binds once and a
// producer output feeds at most one dependency of this consumer.
//
// A node may have thousands of parents, so the scoring loop checks ctx.
func (r *resolver) wire(ctx context.Context, plan *Plan, node string, consumer NodeSpec, parents []string, specs map[string]NodeSpec) error {
	deps := consumer.Spec.Dependencies
	if deps.Len() == 0 {
		return nil
	}
	tables := make([]*pairScores, len(parents))
	for pi, p := range parents {
		if err := ctx.Err(); err != nil {
			return err
		}
		tables[pi] = r.scores(consumer, specs[p])
	}
	perDep := make([][]work, deps.Len())
	var firstSeen []int
	for pi := range parents {
		for di, row := range tables[pi].byDep {
			for oi := range row {
				dep, _ := deps.Get(deps.Keys()[di])
				if !row[oi].Viable {
					continue
				}
				if len(perDep[di]) == 0 {
					firstSeen = append(firstSeen, di)
				}
				perDep[di] = append(perDep[di], work{dep: di, required: dep.IsRequired(), parent: pi, out: oi, b: &row[oi]})
			}
		}
	}
	var list []work
	for _, di := range firstSeen {
		list = append(list, perDep[di]...)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].required != list[j].required {
			return list[i].required
		}
		return list[i].b.Total > list[j].b.Total
	})
	// Slots keep bindings in the consumer's dependency order, not greedy order.
	slots := make([]*Binding, deps.Len())
	used := map[[2]int]bool{}
	for _, w := range list {
		if slots[w.dep] != nil || used[[2]int{w.parent, w.out}] {
			continue
		}
		used[[2]int{w.parent, w.out}] = true
		producer := specs[parents[w.parent]]
		outName := producer.Spec.Outputs.Keys()[w.out]
		out, _ := producer.Spec.Outputs.Get(outName)
		prop := strings.TrimPrefix(out.PropertyPath, "properties.")
		slots[w.dep] = &Binding{
			Dependency: deps.Keys()[w.dep],
			Required:   w.required,
			FromNode:   parents[w.parent],
			FromOutput: outName,
			FromStep:   producer.PipelineStepName,
			Score:      w.b.Total,
			Property:   prop,
			Reference:  "Steps." + producer.PipelineStepName + "." + prop,
			Breakdown:  *w.b,
		}
	}
	var bindings []Binding
	for _, b := range slots {
		if b == nil {
			continue
		}
		bindings = append(bindings, *b)
		if !b.Required && b.Breakdown.Source < 0 {
			plan.Warnings = append(plan.Warnings, SourceWarning{Node: node, Dependency: b.Dependency, FromNode: b.FromNode, FromOutput: b.FromOutput,
				Score: round4(b.Score), Message: fmt.Sprintf("optional %s.%s is fed by %s.%s (score %.4f), a %s, which its compatible_sources do not list",
					node, b.Dependency, b.FromNode, b.FromOutput, b.Score, specs[b.FromNode].StepType)})
		}
	}
	if len(bindings) > 0 {
		plan.Bindings[node] = bindings
	}
	for di, dn := range deps.Keys() {
		if slots[di] != nil {
			continue
		}
		dep, _ := deps.Get(dn)
		if !dep.IsRequired() {
			plan.OptionalUnbound[node] = append(plan.OptionalUnbound[node], dn)
			continue
		}
		u := Unresolved{Node: node, Dependency: dn, Type: orDefault(dep.Type, defaultType), Candidates: []Candidate{}}
		for pi, p := range parents {
			for oi, b := range tables[pi].byDep[di] {
				if b.Total > 0 {
					u.Candidates = append(u.Candidates, Candidate{FromNode: p, FromOutput: producerOutput(specs[p], oi), Score: b.Total, Breakdown: b})
				}
			}
		}
		sort.SliceStable(u.Candidates, func(i, j int) bool { return u.Candidates[i].Score > u.Candidates[j].Score })
		switch {
		case len(parents) == 0:
			u.Reason = "node has no upstream nodes; add an edge from a step that produces " + u.Type
		case len(u.Candidates) == 0:
			u.Reason = "no output of an upstream node has a compatible type (" + u.Type + ")"
		case u.Candidates[0].Breakdown.Viable:
			u.Reason = "every viable upstream output was already bound to another dependency of this node"
		default:
			u.Reason = fmt.Sprintf("no upstream output scored above %.1f", Threshold)
		}
		if len(u.Candidates) > MaxCandidates {
			u.Candidates = u.Candidates[:MaxCandidates]
		}
		plan.Unresolved = append(plan.Unresolved, u)
	}
	return nil
}

func producerOutput(ns NodeSpec, i int) string { return ns.Spec.Outputs.Keys()[i] }
