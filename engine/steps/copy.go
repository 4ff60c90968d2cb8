package steps

import (
	"crypto/sha256"
	"maps"
	"slices"
	"sync"
)

// decoded keeps each interface document decoded once per variant. Wiring
// and compiling ask for a step's job-type variant once per DAG node, and
// decoding the merged YAML was about a third of their time; now the first
// request decodes and later ones copy the decoded value. Entries are keyed
// by a digest of the file's bytes and the variant, so a step directory
// reloaded with new content, or a caller's overlay of the same file, gets
// its own entry and never a stale one. Bounded: when full it starts over.
var decoded = variantCache{max: 1024}

type variantKey struct {
	digest  [sha256.Size]byte
	variant string
}

type variantCache struct {
	mu  sync.Mutex
	max int
	m   map[variantKey]*Interface
}

func (c *variantCache) get(k variantKey) (*Interface, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *variantCache) put(k variantKey, v *Interface) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = map[variantKey]*Interface{}
	}
	c.m[k] = v
}

// deepCopy returns an Interface that shares no mutable memory with i
// (the document and file text, which nothing modifies, excepted).
func (i *Interface) deepCopy() *Interface {
	c := *i
	if i.Compute != nil {
		comp := *i.Compute
		comp.ContainerEntrypoint = slices.Clone(comp.ContainerEntrypoint)
		c.Compute = &comp
	}
	c.Patterns.DirectInputKeys = slices.Clone(i.Patterns.DirectInputKeys)
	c.Patterns.IncludeJobTypeInPath = clonePtr(i.Patterns.IncludeJobTypeInPath)

	ct := &c.Contract
	ct.Inputs = cloneOrdered(i.Contract.Inputs, func(p InputPort) InputPort {
		p.Required = clonePtr(p.Required)
		p.Channels = slices.Clone(p.Channels)
		return p
	})
	ct.Outputs = cloneOrdered(i.Contract.Outputs, func(p OutputPort) OutputPort { return p })
	ct.EnvVars.Required = slices.Clone(i.Contract.EnvVars.Required)
	ct.EnvVars.Optional = cloneOrdered(i.Contract.EnvVars.Optional, func(s string) string { return s })
	ct.JobArguments = slices.Clone(i.Contract.JobArguments)
	ct.Arguments = cloneOrdered(i.Contract.Arguments, func(s string) string { return s })
	ct.FrameworkRequirements = cloneOrdered(i.Contract.FrameworkRequirements, func(s string) string { return s })
	ct.IncludeJobTypeInPath = clonePtr(i.Contract.IncludeJobTypeInPath)
	ct.SkipInputs = slices.Clone(i.Contract.SkipInputs)
	ct.InputSourceOverrides = cloneOrdered(i.Contract.InputSourceOverrides, func(s string) string { return s })
	ct.RuntimeRequires = slices.Clone(i.Contract.RuntimeRequires)
	ct.ComputedEnvPaths = cloneOrdered(i.Contract.ComputedEnvPaths, slices.Clone[[]string])

	c.Spec.Dependencies = cloneOrdered(i.Spec.Dependencies, func(d Dependency) Dependency {
		d.Required = clonePtr(d.Required)
		d.CompatibleSources = slices.Clone(d.CompatibleSources)
		d.SemanticKeywords = slices.Clone(d.SemanticKeywords)
		return d
	})
	c.Spec.Outputs = cloneOrdered(i.Spec.Outputs, func(o Output) Output {
		o.Aliases = slices.Clone(o.Aliases)
		o.SemanticKeywords = slices.Clone(o.SemanticKeywords)
		return o
	})
	c.Variants = cloneOrdered(i.Variants, func(v Variant) Variant {
		v.Spec = cloneAnyMap(v.Spec)
		v.Contract = cloneAnyMap(v.Contract)
		v.Patterns = cloneAnyMap(v.Patterns)
		return v
	})
	c.Config.Fields = cloneOrdered(i.Config.Fields, func(f Field) Field {
		f.Default = cloneAny(f.Default)
		if f.Allowed != nil {
			f.Allowed = cloneAny(f.Allowed).([]any)
		}
		f.Minimum, f.Maximum = clonePtr(f.Minimum), clonePtr(f.Maximum)
		return f
	})
	return &c
}

// cloneOrdered copies o with each value passed through clone.
func cloneOrdered[V any](o Ordered[V], clone func(V) V) Ordered[V] {
	if o.keys == nil && o.values == nil {
		return Ordered[V]{}
	}
	c := Ordered[V]{keys: slices.Clone(o.keys)}
	if o.values != nil {
		c.values = make(map[string]V, len(o.values))
		for k, v := range o.values {
			c.values[k] = clone(v)
		}
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneAnyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return cloneAny(m).(map[string]any)
}

// cloneAny deep-copies a value decoded from YAML (maps, slices, scalars).
func cloneAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := maps.Clone(x)
		for k, e := range c {
			c[k] = cloneAny(e)
		}
		return c
	case map[any]any:
		c := maps.Clone(x)
		for k, e := range c {
			c[k] = cloneAny(e)
		}
		return c
	case []any:
		c := slices.Clone(x)
		for j, e := range c {
			c[j] = cloneAny(e)
		}
		return c
	}
	return v
}

// SharedJobType is WithJobType for callers that only read the result (the
// compiler): the interface it returns is shared with every other such
// caller asking for the same file content, source and job type, and must
// not be modified. It saves the copy WithJobType makes for each call.
func (i *Interface) SharedJobType(jobType string) (*Interface, []string, error) {
	if i.raw == nil {
		return i.WithJobType(jobType)
	}
	k := sharedKey{i.digest, jobType, i.Source}
	sharedVariants.Lock()
	v, ok := sharedVariants.m[k]
	sharedVariants.Unlock()
	if ok {
		return v.iface, slices.Clone(v.warnings), nil
	}
	out, warnings, err := i.WithJobType(jobType)
	if err != nil {
		return nil, warnings, err
	}
	sharedVariants.Lock()
	if sharedVariants.m == nil || len(sharedVariants.m) >= decoded.max {
		sharedVariants.m = map[sharedKey]sharedVariant{}
	}
	sharedVariants.m[k] = sharedVariant{out, slices.Clone(warnings)}
	sharedVariants.Unlock()
	return out, warnings, nil
}

type sharedKey struct {
	digest          [sha256.Size]byte
	jobType, source string
}

type sharedVariant struct {
	iface    *Interface
	warnings []string
}

var sharedVariants struct {
	sync.Mutex
	m map[sharedKey]sharedVariant
}
