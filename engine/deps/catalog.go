package deps

import (
	"context"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// Resolve wires d against the step catalog (see ResolveWith).
func Resolve(ctx context.Context, d *dag.DAG, cat *steps.Catalog) (*Plan, error) {
	return ResolveWith(ctx, d, CatalogLookup(cat))
}

// CatalogLookup resolves node names through the catalog. Merging a job-type
// variant is costly, so each (step type, job type) is merged once per
// lookup and shared by every node that uses it.
func CatalogLookup(cat *steps.Catalog) SpecLookup {
	merged := map[[2]string]*steps.Spec{}
	return func(node string) (NodeSpec, error) {
		res, err := cat.Resolve(node)
		if err != nil {
			return NodeSpec{}, err
		}
		// Job types are open (TabularPreprocessing_n17): nodes whose job
		// type has no variant share the base spec and its cached scores.
		variant := ""
		if base, ok := cat.Get(res.StepType); ok {
			for _, v := range base.JobTypes() {
				if strings.EqualFold(v, res.JobType) {
					variant = v
				}
			}
		}
		k := [2]string{res.StepType, variant}
		spec, ok := merged[k]
		if !ok {
			iface, _, err := cat.ForJobType(res.StepType, variant)
			if err != nil {
				return NodeSpec{}, err
			}
			spec = &iface.Spec
			merged[k] = spec
		}
		return NodeSpec{StepType: res.StepType, JobType: res.JobType, PipelineStepName: res.PipelineStepName, Spec: spec,
			SpecID: res.StepType + "\x00" + variant}, nil
	}
}

// NodeLookup adapts the catalog for dag integrity checks: unknown nodes are
// errors (with suggestions), node types come from the interfaces.
func NodeLookup(cat *steps.Catalog) dag.Lookup {
	return func(node string) (dag.NodeInfo, error) {
		res, err := cat.Resolve(node)
		if err != nil {
			return dag.NodeInfo{}, err
		}
		iface, _ := cat.Get(res.StepType)
		info := dag.NodeInfo{StepType: res.StepType}
		if iface != nil {
			info.NodeType = iface.NodeType
		}
		return info, nil
	}
}
