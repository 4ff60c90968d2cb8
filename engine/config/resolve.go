package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// Node is a DAG node resolved to its step type and job type.
type Node struct {
	Name     string `json:"node"`
	StepType string `json:"step_type"`
	JobType  string `json:"job_type,omitempty"`
}

// catalogResolver is a catalog that resolves node names itself
// (*steps.Catalog does); Schemas use it so that config and catalog agree on
// what every node means.
type catalogResolver interface {
	Resolve(name string) (steps.Resolution, error)
}

func resolveWith(r catalogResolver) func(string) (Node, error) {
	return func(node string) (Node, error) {
		res, err := r.Resolve(node)
		if err != nil {
			var nf *steps.NotFoundError
			if errors.As(err, &nf) {
				return Node{}, &UnknownStepError{StepType: node, Suggestions: nf.Suggestions, msg: err.Error()}
			}
			return Node{}, err
		}
		return Node{Name: node, StepType: res.StepType, JobType: res.JobType}, nil
	}
}

// ResolveNode maps a DAG node name (<StepType> or <StepType>_<job_type>)
// to its step type and job type.
func (s *Schemas) ResolveNode(node string) (Node, error) { return s.resolve(node) }

// resolveByPrefix takes the longest "_"-joined prefix of the node that
// names a step type (compared by canonical key).
func (s *Schemas) resolveByPrefix(node string) (Node, error) {
	byKey := map[string]string{}
	for _, n := range s.names {
		byKey[steps.CanonicalKey(n)] = n
	}
	prefix, suffix, ok := steps.SplitJobType(node, func(p string) bool { _, ok := byKey[steps.CanonicalKey(p)]; return ok })
	if ok {
		return Node{Name: node, StepType: byKey[steps.CanonicalKey(prefix)], JobType: suffix}, nil
	}
	msg := fmt.Sprintf("no step type matches DAG node %q", node)
	if sg := suggest(strings.SplitN(node, "_", 2)[0], s.names); len(sg) > 0 {
		msg += " (did you mean " + strings.Join(sg, ", ") + "?)"
	}
	return Node{}, &UnknownStepError{StepType: node, Suggestions: suggest(strings.SplitN(node, "_", 2)[0], s.names), msg: msg}
}
