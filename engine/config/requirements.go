package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// FieldGroups holds fields by tier.
type FieldGroups struct {
	Essential []*Field `json:"essential"`
	System    []*Field `json:"system"`
	Derived   []*Field `json:"derived"`
}

func (g *FieldGroups) add(f *Field) {
	switch f.Tier {
	case steps.TierEssential:
		g.Essential = append(g.Essential, f)
	case steps.TierSystem:
		g.System = append(g.System, f)
	default:
		g.Derived = append(g.Derived, f)
	}
}

// Required lists the names of essential fields without a default.
func (g FieldGroups) Required() []string {
	var out []string
	for _, f := range g.Essential {
		if f.Default == nil {
			out = append(out, f.Name)
		}
	}
	return out
}

// NodeRequirements is what one DAG node needs beyond the shared fields.
type NodeRequirements struct {
	Node        string `json:"node"`
	StepType    string `json:"step_type"`
	JobType     string `json:"job_type,omitempty"`
	ConfigKey   string `json:"config_key"`
	ConfigClass string `json:"config_class"`
	// Prefilled values the engine supplies itself (job_type from the node
	// name's suffix); they are not asked for again.
	Prefilled map[string]any `json:"prefilled,omitempty"`
	Fields    FieldGroups    `json:"fields"`

	// sc lets SampleValues fit samples to the step's framework.
	sc *Schema
}

// UnresolvedNode is a DAG node with no step type.
type UnresolvedNode struct {
	Node        string   `json:"node"`
	Message     string   `json:"message"`
	Suggestions []string `json:"suggestions,omitempty"`
}

// RequirementsReport lists what a DAG's configs need: fields every node
// has with the same definition once under Shared, the rest per node.
type RequirementsReport struct {
	Shared     FieldGroups        `json:"shared"`
	Nodes      []NodeRequirements `json:"nodes"`
	Unresolved []UnresolvedNode   `json:"unresolved,omitempty"`
}

// Requirements computes the config requirements of every node of d. It
// compares every field of every node, so it stops with ctx's error when
// ctx ends.
func Requirements(ctx context.Context, d *dag.DAG, s *Schemas) (*RequirementsReport, error) {
	if d == nil || len(d.Nodes) == 0 {
		return nil, errors.New("the DAG has no nodes")
	}
	rep := &RequirementsReport{}
	type resolved struct {
		node Node
		sc   *Schema
	}
	var nodes []resolved
	seen := map[string]bool{}
	for _, name := range d.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		n, err := s.ResolveNode(name)
		var sc *Schema
		if err == nil {
			sc, err = s.ForStep(n.StepType)
		}
		if err != nil {
			u := UnresolvedNode{Node: name, Message: err.Error()}
			var ue *UnknownStepError
			if errors.As(err, &ue) {
				u.Suggestions = ue.Suggestions
			}
			rep.Unresolved = append(rep.Unresolved, u)
			continue
		}
		nodes = append(nodes, resolved{n, sc})
	}
	// A field is shared when every resolved node has it with the same
	// definition.
	shared := map[string]bool{}
	// job_type stays per node when a node name carries it.
	suffixed := false
	for _, r := range nodes {
		suffixed = suffixed || r.node.JobType != ""
	}
	if len(nodes) > 0 {
		for _, f := range nodes[0].sc.Fields {
			sig := fieldSignature(f)
			same := true
			for _, r := range nodes[1:] {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				g, ok := r.sc.Field(f.Name)
				if !ok || fieldSignature(g) != sig {
					same = false
					break
				}
			}
			if same && !(f.Name == "job_type" && suffixed) {
				shared[f.Name] = true
				rep.Shared.add(f)
			}
		}
	}
	// model_class defaults to the family the DAG trains on every node that
	// trains none, as BuildDAG builds it.
	family := s.dagFamily(d)
	for _, r := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nr := NodeRequirements{Node: r.node.Name, StepType: r.node.StepType, JobType: r.node.JobType,
			ConfigKey: r.node.Name, ConfigClass: r.sc.ConfigClass, sc: r.sc}
		for _, f := range r.sc.Fields {
			if shared[f.Name] {
				continue
			}
			if f.Name == "job_type" && r.node.JobType != "" {
				nr.Prefilled = map[string]any{"job_type": r.node.JobType}
				continue
			}
			if f.Name == modelClassField && family != "" && r.sc.family == "" {
				inherited := *f
				inherited.Default = family
				f = &inherited
			}
			nr.Fields.add(f)
		}
		rep.Nodes = append(rep.Nodes, nr)
	}
	return rep, nil
}

// fieldSignature compares definitions, ignoring which layer gave them.
func fieldSignature(f *Field) string {
	b, err := json.Marshal(f.Field)
	if err != nil {
		return f.Name + fmt.Sprintf("%p", f)
	}
	return string(b)
}

// dagFamily is the model family the DAG's training and tuning nodes
// train when they agree on one; "" otherwise.
func (s *Schemas) dagFamily(d *dag.DAG) string {
	family := ""
	for _, name := range d.Nodes {
		n, err := s.ResolveNode(name)
		if err != nil {
			continue
		}
		sc, err := s.ForStep(n.StepType)
		if err != nil || sc.family == "" {
			continue
		}
		if family != "" && !strings.EqualFold(family, sc.family) {
			return ""
		}
		family = strings.ToLower(sc.family)
	}
	return family
}

// BuildDAG builds the config of every node of d. base values apply to every
// node that has the field; perNode[node] values to that node only (they
// win). A node named <StepType>_<suffix> gets job_type = suffix unless the
// caller set it (a different value is a problem: the node name and the
// config key must agree). Every problem of every node is returned, each
// with its node; base keys no node knows are problems too. Every node's
// config is built and validated, so BuildDAG stops with ctx's error when
// ctx ends.
func (s *Schemas) BuildDAG(ctx context.Context, d *dag.DAG, base map[string]any, perNode map[string]map[string]any) ([]Config, []Problem, error) {
	if d == nil || len(d.Nodes) == 0 {
		return nil, []Problem{{Field: "nodes", Kind: KindMissing, Message: "the DAG has no nodes"}}, nil
	}
	var configs []Config
	var probs []Problem
	inDAG := map[string]bool{}
	known := map[string]bool{}
	derivedSomewhere := map[string]string{}
	family := s.dagFamily(d)
	for _, name := range d.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if inDAG[name] {
			probs = append(probs, Problem{Node: name, Kind: KindRule, Message: "node listed twice in the DAG"})
			continue
		}
		inDAG[name] = true
		n, err := s.ResolveNode(name)
		var sc *Schema
		if err == nil {
			sc, err = s.ForStep(n.StepType)
		}
		if err != nil {
			probs = append(probs, Problem{Node: name, Kind: KindUnknown, Message: err.Error()})
			continue
		}
		for _, f := range sc.Fields {
			if f.Tier == steps.TierDerived {
				derivedSomewhere[f.Name] = f.Rule
			} else {
				known[f.Name] = true
			}
		}
		spec := map[string]any{}
		for k, v := range perNode[name] {
			spec[k] = v
		}
		if _, has := sc.Field("job_type"); has && n.JobType != "" {
			jt, set := spec["job_type"]
			if !set {
				jt, set = base["job_type"]
			}
			if !set || jt == nil {
				spec["job_type"] = n.JobType
			} else if jt != n.JobType {
				probs = append(probs, Problem{Node: name, Field: "job_type", Kind: KindRule,
					Message: fmt.Sprintf("job_type %s contradicts the node name, which implies %q", short(jt), n.JobType)})
				continue
			}
		}
		nodeBase, inherited := frameworkBase(sc, family, base, spec)
		cfg, ps := s.Build(n.StepType, nodeBase, spec)
		if inherited {
			delete(cfg.Explicit, modelClassField)
		} else if w := frameworkConflict(sc, family, cfg); w != "" {
			cfg.Warnings = append(cfg.Warnings, w)
		}
		for i := range ps {
			ps[i].Node = name
		}
		probs = append(probs, ps...)
		cfg.Key = name
		configs = append(configs, cfg)
	}
	for _, k := range slices.Sorted(maps.Keys(perNode)) {
		if !inDAG[k] {
			probs = append(probs, Problem{Node: k, Kind: KindUnknown,
				Message: fmt.Sprintf("%q is not a node of the DAG (nodes: %s)", k, strings.Join(d.Nodes, ", "))})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(base)) {
		if known[k] {
			continue
		}
		msg := fmt.Sprintf("%s is not a field of any node's step type", k)
		if rule, ok := derivedSomewhere[k]; ok {
			msg = fmt.Sprintf("%s is derived (%s) and cannot be set", k, rule)
		} else if sg := suggest(k, slices.Sorted(maps.Keys(known))); len(sg) > 0 {
			msg += " (did you mean " + strings.Join(sg, ", ") + "?)"
		}
		probs = append(probs, Problem{Field: k, Kind: KindUnknown, Message: msg})
	}
	sort.SliceStable(configs, func(i, j int) bool { return configs[i].Key < configs[j].Key })
	return configs, probs, nil
}
