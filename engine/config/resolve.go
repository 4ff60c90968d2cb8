package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Node is a DAG node resolved to its step type and job type.
type Node struct {
	Name     string `json:"node"`
	StepType string `json:"step_type"`
	JobType  string `json:"job_type,omitempty"`
}

// nodeResolver is satisfied by a catalog that resolves node names itself.
type nodeResolver interface {
	resolveNode(node string) (Node, error)
}

// ResolveNode maps a DAG node name (<StepType> or <StepType>_<job_type>)
// to its step type.
func (s *Schemas) ResolveNode(node string) (Node, error) { return s.resolve(node) }

// resolveByPrefix splits the node at "_" and takes the longest prefix that
// names a step type (compared case- and punctuation-insensitively).
func (s *Schemas) resolveByPrefix(node string) (Node, error) {
	parts := strings.Split(node, "_")
	for i := len(parts); i >= 1; i-- {
		prefix := strings.Join(parts[:i], "_")
		for _, name := range s.names {
			if canonicalKey(name) == canonicalKey(prefix) {
				return Node{Name: node, StepType: name, JobType: strings.Join(parts[i:], "_")}, nil
			}
		}
	}
	msg := fmt.Sprintf("no step type matches DAG node %q", node)
	if sg := suggest(parts[0], s.names); len(sg) > 0 {
		msg += " (did you mean " + strings.Join(sg, ", ") + "?)"
	}
	return Node{}, fmt.Errorf("%s", msg)
}

func canonicalKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	snakeProtected = []string{"LightGBMMT", "LightGBM", "XGBoost", "PyTorch", "TensorFlow", "SageMaker", "MLFlow", "AutoML"}
	snakeRe1       = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`)
	snakeRe2       = regexp.MustCompile(`([a-z\d])([A-Z])`)
)

// snakeName is the S3/script token of a step type (XGBoostTraining →
// xgboost_training).
func snakeName(stepType string) string {
	s := stepType
	for _, p := range snakeProtected {
		s = strings.ReplaceAll(s, p, p[:1]+strings.ToLower(p[1:]))
	}
	s = snakeRe1.ReplaceAllString(s, "${1}_${2}")
	s = snakeRe2.ReplaceAllString(s, "${1}_${2}")
	return strings.ToLower(s)
}
