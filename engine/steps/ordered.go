package steps

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Ordered is a string-keyed map that remembers the order its keys were
// written in. Step interface files are YAML maps whose order matters:
// dependency resolution walks dependencies and outputs in file order, and
// that order breaks ties, so a plain Go map (random order) would make
// wiring nondeterministic.
type Ordered[V any] struct {
	keys   []string
	values map[string]V
}

// Keys returns the keys in insertion order. The slice must not be modified.
func (o *Ordered[V]) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// Len is the number of entries.
func (o *Ordered[V]) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Get returns the value under key.
func (o *Ordered[V]) Get(key string) (V, bool) {
	var zero V
	if o == nil || o.values == nil {
		return zero, false
	}
	v, ok := o.values[key]
	return v, ok
}

// Set stores value under key, appending the key if it is new.
func (o *Ordered[V]) Set(key string, value V) {
	if o.values == nil {
		o.values = make(map[string]V)
	}
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = value
}

// Clone returns a shallow copy with its own key slice and map.
func (o *Ordered[V]) Clone() Ordered[V] {
	var c Ordered[V]
	for _, k := range o.Keys() {
		c.Set(k, o.values[k])
	}
	return c
}

// UnmarshalYAML reads a YAML mapping, keeping key order. A null node is an
// empty map.
func (o *Ordered[V]) UnmarshalYAML(node *yaml.Node) error {
	*o = Ordered[V]{}
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: expected a mapping", node.Line)
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		var key string
		if err := node.Content[i].Decode(&key); err != nil {
			return err
		}
		var v V
		if err := node.Content[i+1].Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		o.Set(key, v)
	}
	return nil
}

// MarshalJSON writes the entries as a JSON object in insertion order.
func (o Ordered[V]) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// MarshalYAML writes the entries as a YAML mapping in insertion order.
func (o Ordered[V]) MarshalYAML() (any, error) {
	node := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range o.keys {
		var vn yaml.Node
		if err := vn.Encode(o.values[k]); err != nil {
			return nil, err
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &vn)
	}
	return node, nil
}

// IsZero reports an empty map, so `omitempty` works: the YAML encoder
// cannot see the unexported fields and would otherwise drop every entry.
func (o Ordered[V]) IsZero() bool { return len(o.keys) == 0 }
