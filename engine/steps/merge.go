package steps

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// JobTypes lists the variant keys in file order.
func (i *Interface) JobTypes() []string { return i.Variants.Keys() }

// WithJobType returns a copy of the interface with the variant for jobType
// deep-merged over the base spec, contract and patterns: mappings merge key
// by key, every other value (lists included) replaces the base value. The
// receiver is never modified. An empty jobType gives a plain copy.
//
// Job types are open (delta, pretrain, … are legal), so a job type with no
// variant is not an error: the base is used and a warning says so. Variant
// keys match exactly first; a case-insensitive match is accepted with a
// warning (the reference matches case-sensitively, which silently drops the
// variant for "Training").
func (i *Interface) WithJobType(jobType string) (*Interface, []string, error) {
	root, err := i.document()
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	variant := ""
	if jobType != "" {
		variant, warnings = i.matchVariant(jobType)
	}
	// An interface read from a file is decoded once per variant (see
	// decoded); one built in code is decoded each time.
	key, cacheable := variantKey{i.digest, variant}, i.raw != nil
	var out *Interface
	if c, ok := decoded.get(key); cacheable && ok {
		out = c.deepCopy()
	} else {
		merged := cloneNode(root)
		if variant != "" {
			vnode := mapValue(mapValue(root, "variants"), variant)
			for _, section := range []string{"spec", "contract", "patterns"} {
				over := mapValue(vnode, section)
				if over == nil || isNull(over) {
					continue
				}
				setMapValue(merged, section, mergeNodes(mapValue(merged, section), over))
			}
		}
		out, err = decodeInterface(merged)
		if err != nil {
			return nil, warnings, fmt.Errorf("%s: variant %q: %w", i.Source, variant, err)
		}
		if cacheable {
			decoded.put(key, out.deepCopy())
		}
	}
	out.Source = i.Source
	out.digest = i.digest
	out.JobType = jobType
	out.raw = root
	out.text = i.text
	out.unknown = i.unknown
	out.missing = i.missing
	return out, warnings, nil
}

func (i *Interface) matchVariant(jobType string) (string, []string) {
	if _, ok := i.Variants.Get(jobType); ok {
		return jobType, nil
	}
	var folded []string
	for _, k := range i.Variants.Keys() {
		if strings.EqualFold(k, jobType) {
			folded = append(folded, k)
		}
	}
	if len(folded) == 1 {
		return folded[0], []string{fmt.Sprintf("%s: job type %q matched variant %q ignoring case", i.StepType, jobType, folded[0])}
	}
	if i.Variants.Len() == 0 {
		return "", nil
	}
	keys := append([]string(nil), i.Variants.Keys()...)
	sort.Strings(keys)
	return "", []string{fmt.Sprintf("%s has no variant for job type %q (variants: %s); the base interface is used",
		i.StepType, jobType, strings.Join(keys, ", "))}
}

// document returns the YAML document behind the interface, encoding it when
// the interface was built in code.
func (i *Interface) document() (*yaml.Node, error) {
	if i.raw != nil {
		return i.raw, nil
	}
	var n yaml.Node
	if err := n.Encode(i); err != nil {
		return nil, fmt.Errorf("%s: encode interface: %w", i.StepType, err)
	}
	return &n, nil
}

// Clone returns an independent deep copy.
func (i *Interface) Clone() (*Interface, error) {
	c, _, err := i.WithJobType("")
	if err != nil {
		return nil, err
	}
	c.JobType = i.JobType
	return c, nil
}

// mergeNodes deep-merges over onto base and returns a new node. Mappings
// merge key by key (base order kept, new keys appended); anything else in
// over replaces base.
func mergeNodes(base, over *yaml.Node) *yaml.Node {
	if base == nil || base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode {
		return cloneNode(over)
	}
	out := cloneNode(base)
	for j := 0; j+1 < len(over.Content); j += 2 {
		k, v := over.Content[j], over.Content[j+1]
		if cur := mapValue(out, k.Value); cur != nil {
			setMapValue(out, k.Value, mergeNodes(cur, v))
			continue
		}
		out.Content = append(out.Content, cloneNode(k), cloneNode(v))
	}
	return out
}

func setMapValue(n *yaml.Node, key string, v *yaml.Node) {
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == key {
			n.Content[j+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return cloneNode(n.Alias)
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for j, ch := range n.Content {
		c.Content[j] = cloneNode(ch)
	}
	return &c
}
