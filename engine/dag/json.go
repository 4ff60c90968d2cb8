package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// WriterVersion is the format version Marshal writes. Readers accept any
// version whose major part is 1, and files without a version (shared DAGs).
const WriterVersion = "1.0.0"

// Document is a DAG JSON file: the graph plus what travels with it.
type Document struct {
	Version     string         // "" when the file had none
	CreatedAt   string         // written only when set: the writer never reads the clock
	Description string         // the shared-DAG "dag.description"
	Metadata    map[string]any // free-form; numbers are json.Number to keep them exact
	DAG         *DAG
}

// Statistics summarise a DAG in the writer format.
type Statistics struct {
	NodeCount     int      `json:"node_count"`
	EdgeCount     int      `json:"edge_count"`
	HasCycles     bool     `json:"has_cycles"`
	EntryNodes    []string `json:"entry_nodes"`
	ExitNodes     []string `json:"exit_nodes"`
	MaxDepth      int      `json:"max_depth"`
	IsolatedNodes []string `json:"isolated_nodes"`
}

// Stats computes the writer statistics. Undeclared edge endpoints and
// duplicates are ignored; max_depth is the longest path in edges, 0 when the
// graph has a cycle.
func (d *DAG) Stats() Statistics {
	g, _ := d.build()
	s := Statistics{NodeCount: len(g.nodes), EntryNodes: []string{}, ExitNodes: []string{}, IsolatedNodes: []string{}}
	for i, n := range g.nodes {
		s.EdgeCount += len(g.children[i])
		in, out := len(g.parents[i]), len(g.children[i])
		if in == 0 {
			s.EntryNodes = append(s.EntryNodes, n)
		}
		if out == 0 {
			s.ExitNodes = append(s.ExitNodes, n)
		}
		if in == 0 && out == 0 {
			s.IsolatedNodes = append(s.IsolatedNodes, n)
		}
	}
	order, _ := g.kahn(false)
	if len(order) < len(g.nodes) {
		s.HasCycles = true
		return s
	}
	depth := make([]int, len(g.nodes))
	for _, n := range order {
		for _, c := range g.children[n] {
			if depth[n]+1 > depth[c] {
				depth[c] = depth[n] + 1
			}
		}
		if depth[n] > s.MaxDepth {
			s.MaxDepth = depth[n]
		}
	}
	return s
}

// writerDoc fixes the key order of the writer format.
type writerDoc struct {
	Version    string         `json:"version"`
	CreatedAt  string         `json:"created_at,omitempty"`
	Metadata   map[string]any `json:"metadata"`
	DAG        writerGraph    `json:"dag"`
	Statistics Statistics     `json:"statistics"`
}

type writerGraph struct {
	Description string      `json:"description,omitempty"`
	Nodes       []string    `json:"nodes"`
	Edges       [][2]string `json:"edges"`
}

// Marshal validates d (non-empty, no dangling edge, acyclic) and writes it in
// the writer format with the given metadata. The output is a function of the
// inputs only: no timestamp is added.
func Marshal(d *DAG, metadata map[string]any) ([]byte, error) {
	if d == nil || len(d.Nodes) == 0 {
		return nil, errors.New("cannot write an empty DAG (no nodes)")
	}
	if _, err := d.TopoSort(); err != nil {
		return nil, err
	}
	return MarshalDocument(Document{Metadata: metadata, DAG: d})
}

// MarshalDocument writes doc in the writer format (2-space indent, keys in
// the documented order, metadata keys sorted) without validating the graph,
// so a cyclic draft can still be shown. Version is always WriterVersion.
func MarshalDocument(doc Document) ([]byte, error) {
	d := doc.DAG
	if d == nil {
		d = &DAG{}
	}
	w := writerDoc{
		Version:    WriterVersion,
		CreatedAt:  doc.CreatedAt,
		Metadata:   doc.Metadata,
		DAG:        writerGraph{Description: doc.Description, Nodes: d.Nodes, Edges: d.Edges},
		Statistics: d.Stats(),
	}
	if w.Metadata == nil {
		w.Metadata = map[string]any{}
	}
	if w.DAG.Nodes == nil {
		w.DAG.Nodes = []string{}
	}
	if w.DAG.Edges == nil {
		w.DAG.Edges = [][2]string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("encode DAG: %w", err)
	}
	return buf.Bytes(), nil
}

// Parse reads a DAG from JSON in the wrapped form ({"dag": {"nodes", "edges"}},
// the writer and shared-DAG formats) or the flat form ({"nodes", "edges"}).
func Parse(data []byte) (*DAG, error) {
	doc, err := ParseDocument(data)
	if err != nil {
		return nil, err
	}
	return doc.DAG, nil
}

// ParseDocument is Parse keeping version, created_at, description and
// metadata. Statistics in the input are ignored (they are recomputed).
func ParseDocument(data []byte) (*Document, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	doc := &Document{}
	if raw, ok := top["version"]; ok {
		v, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("version: expected a string, got %s", jsonKind(raw))
		}
		if major, _, _ := strings.Cut(v, "."); major != "1" {
			return nil, fmt.Errorf("version: unsupported DAG format version %q (major version must be 1)", v)
		}
		doc.Version = v
	}
	if raw, ok := top["created_at"]; ok && raw != nil {
		s, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("created_at: expected a string, got %s", jsonKind(raw))
		}
		doc.CreatedAt = s
	}
	if raw, ok := top["metadata"]; ok && raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("metadata: expected an object, got %s", jsonKind(raw))
		}
		doc.Metadata = m
	}
	graph, prefix := top, ""
	if raw, ok := top["dag"]; ok {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("dag: expected an object with nodes and edges, got %s", jsonKind(raw))
		}
		graph, prefix = m, "dag."
	} else if _, ok := top["nodes"]; !ok {
		return nil, errors.New(`expected {"dag": {"nodes": [...], "edges": [...]}} or {"nodes": [...], "edges": [...]}; found neither "dag" nor "nodes"`)
	}
	if raw, ok := graph["description"]; ok && raw != nil {
		s, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("%sdescription: expected a string, got %s", prefix, jsonKind(raw))
		}
		doc.Description = s
	}
	d, err := graphFrom(graph, prefix)
	if err != nil {
		return nil, err
	}
	doc.DAG = d
	return doc, nil
}

func graphFrom(m map[string]any, prefix string) (*DAG, error) {
	rawNodes, ok := m["nodes"]
	if !ok || rawNodes == nil {
		return nil, fmt.Errorf("%snodes: required list of node names is missing", prefix)
	}
	list, ok := rawNodes.([]any)
	if !ok {
		return nil, fmt.Errorf("%snodes: expected a list of strings, got %s", prefix, jsonKind(rawNodes))
	}
	d := &DAG{Nodes: make([]string, 0, len(list)), Edges: [][2]string{}}
	for i, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%snodes[%d]: expected a string, got %s", prefix, i, jsonKind(v))
		}
		d.Nodes = append(d.Nodes, s)
	}
	rawEdges := m["edges"]
	if rawEdges == nil {
		return d, nil
	}
	elist, ok := rawEdges.([]any)
	if !ok {
		return nil, fmt.Errorf("%sedges: expected a list of [source, destination] pairs, got %s", prefix, jsonKind(rawEdges))
	}
	for i, v := range elist {
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("%sedges[%d]: expected a [source, destination] pair, got %s", prefix, i, jsonKind(v))
		}
		s, ok1 := pair[0].(string)
		t, ok2 := pair[1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%sedges[%d]: both endpoints must be strings", prefix, i)
		}
		d.Edges = append(d.Edges, [2]string{s, t})
	}
	return d, nil
}

func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: unexpected data after the top-level value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object at the top level, got %s", jsonKind(v))
	}
	return m, nil
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return fmt.Sprintf("a list of %d item(s)", len(x))
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
