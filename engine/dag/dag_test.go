package dag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func edges(pairs ...string) [][2]string {
	var out [][2]string
	for _, p := range pairs {
		s, t, _ := strings.Cut(p, ">")
		out = append(out, [2]string{s, t})
	}
	return out
}

func TestTopoSortDeterministicKahn(t *testing.T) {
	// Seeded in node order (C before A), children in edge order (E before D).
	d := New([]string{"C", "A", "B", "D", "E"}, edges("A>B", "C>E", "C>D", "B>D"))
	got, err := d.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"C", "A", "E", "B", "D"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	for i := 0; i < 20; i++ {
		again, _ := d.TopoSort()
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("run %d: order changed to %v", i, again)
		}
	}
}

func TestTopoSortDuplicatesCountOnce(t *testing.T) {
	d := New([]string{"A", "B", "A"}, edges("A>B", "A>B"))
	got, err := d.TopoSort()
	if err != nil || !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestTopoSortNamesCycle(t *testing.T) {
	d := New([]string{"S", "A", "B", "C", "Z"}, edges("S>A", "A>B", "B>C", "C>A", "C>Z"))
	_, err := d.TopoSort()
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *CycleError", err)
	}
	if want := []string{"A", "B", "C", "A"}; !reflect.DeepEqual(ce.Cycle, want) {
		t.Fatalf("cycle = %v, want %v", ce.Cycle, want)
	}
	if !strings.Contains(err.Error(), "A -> B -> C -> A") {
		t.Fatalf("message %q does not name the cycle", err)
	}
}

func TestTopoSortSelfLoopIsCycle(t *testing.T) {
	_, err := New([]string{"A"}, edges("A>A")).TopoSort()
	var ce *CycleError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Cycle, []string{"A", "A"}) {
		t.Fatalf("err = %v", err)
	}
}

func TestTopoSortDanglingEdge(t *testing.T) {
	_, err := New([]string{"A"}, edges("A>B")).TopoSort()
	var de *DanglingEdgeError
	if !errors.As(err, &de) || de.Missing != "B" || de.Edge != [2]string{"A", "B"} {
		t.Fatalf("err = %v", err)
	}
}

func TestQueries(t *testing.T) {
	d := New([]string{"A", "B", "C", "D", "E"}, edges("A>B", "B>C", "A>C", "C>D", "A>B"))
	if got := d.Parents("C"); !reflect.DeepEqual(got, []string{"B", "A"}) {
		t.Errorf("Parents(C) = %v", got)
	}
	if got := d.Children("A"); !reflect.DeepEqual(got, []string{"B", "C"}) {
		t.Errorf("Children(A) = %v", got)
	}
	if got := d.Upstream("D"); !reflect.DeepEqual(got, []string{"C", "B", "A"}) {
		t.Errorf("Upstream(D) = %v", got)
	}
	if got := d.Downstream("A"); !reflect.DeepEqual(got, []string{"B", "C", "D"}) {
		t.Errorf("Downstream(A) = %v", got)
	}
	if got := d.Downstream("E"); len(got) != 0 {
		t.Errorf("Downstream(E) = %v", got)
	}
	cyc := New([]string{"A", "B"}, edges("A>B", "B>A"))
	if got := cyc.Upstream("A"); !reflect.DeepEqual(got, []string{"B"}) {
		t.Errorf("Upstream on a cycle = %v", got)
	}
	if !d.HasNode("E") || d.HasNode("X") {
		t.Error("HasNode wrong")
	}
}

func categories(r Integrity) []string { return r.Categories() }

func TestCheckStructural(t *testing.T) {
	cases := []struct {
		name string
		d    *DAG
		want []string
	}{
		{"valid", New([]string{"A", "B"}, edges("A>B")), nil},
		{"single node is fine", New([]string{"A"}, nil), nil},
		{"empty", New(nil, nil), []string{IssueEmpty}},
		{"duplicate node", New([]string{"A", "B", "A"}, edges("A>B")), []string{IssueDuplicateNodes}},
		{"duplicate edge", New([]string{"A", "B"}, edges("A>B", "A>B")), []string{IssueDuplicateEdges}},
		{"self loop", New([]string{"A", "B"}, edges("A>B", "B>B")), []string{IssueSelfLoops}},
		{"dangling", New([]string{"A", "B"}, edges("A>B", "B>C")), []string{IssueDangling}},
		{"isolated", New([]string{"A", "B", "C"}, edges("A>B")), []string{IssueIsolated}},
		{"cycle", New([]string{"A", "B", "C"}, edges("A>B", "B>C", "C>B")), []string{IssueCycles}},
		{"empty name", New([]string{"", "B"}, edges(">B")), []string{IssueInvalidNames}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.d.Check()
			got := categories(r)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("categories = %v, want %v (issues %+v)", got, tc.want, r.Issues)
			}
			if r.Valid != (len(tc.want) == 0) {
				t.Fatalf("Valid = %v", r.Valid)
			}
		})
	}
}

func TestCheckReportsEdgeAndCycle(t *testing.T) {
	r := New([]string{"A", "B"}, edges("A>B", "B>Typo")).Check()
	if len(r.Issues) != 1 || r.Issues[0].Edge == nil || *r.Issues[0].Edge != [2]string{"B", "Typo"} {
		t.Fatalf("issues = %+v", r.Issues)
	}
	if !strings.Contains(r.Issues[0].Message, `destination node "Typo"`) {
		t.Fatalf("message = %q", r.Issues[0].Message)
	}
	r = New([]string{"A", "B", "C"}, edges("A>B", "B>C", "C>A", "C>C")).Check()
	var cyc []string
	for _, is := range r.Issues {
		if is.Category == IssueCycles {
			cyc = is.Cycle
		}
	}
	if !reflect.DeepEqual(cyc, []string{"A", "B", "C", "A"}) {
		t.Fatalf("cycle = %v (issues %+v)", cyc, r.Issues)
	}
}

func TestCheckWithLookup(t *testing.T) {
	steps := map[string]NodeInfo{
		"Load":  {StepType: "DummyDataLoading", NodeType: NodeSource},
		"Prep":  {StepType: "TabularPreprocessing"},
		"Reg":   {StepType: "Registration", NodeType: NodeSink},
		"Alone": {StepType: "Singleton", NodeType: NodeSingular},
	}
	lookup := func(n string) (NodeInfo, error) {
		if info, ok := steps[n]; ok {
			return info, nil
		}
		return NodeInfo{}, fmt.Errorf("unknown step type; did you mean %q?", "Prep")
	}
	ok, _ := New([]string{"Load", "Prep", "Reg", "Alone"}, edges("Load>Prep", "Prep>Reg")).CheckWith(context.Background(), lookup)
	if !ok.Valid {
		t.Fatalf("want valid (singular node may be isolated), got %+v", ok.Issues)
	}
	bad, _ := New([]string{"Load", "Prep", "Reg", "Prpe"}, edges("Prep>Load", "Reg>Prep", "Prep>Prpe")).CheckWith(context.Background(), lookup)
	if got := bad.Categories(); !slices.Equal(got, []string{IssueMissingSteps, IssueNodeTypeRules}) {
		t.Fatalf("categories = %v (%+v)", got, bad.Issues)
	}
	msgs := bad.ByCategory()
	if len(msgs[IssueNodeTypeRules]) != 2 || !strings.Contains(msgs[IssueMissingSteps][0], "did you mean") {
		t.Fatalf("messages = %v", msgs)
	}
	single, _ := New([]string{"Alone", "Prep"}, edges("Alone>Prep")).CheckWith(context.Background(), lookup)
	if got := single.Categories(); !slices.Equal(got, []string{IssueNodeTypeRules}) {
		t.Fatalf("singular with an edge: %v", got)
	}
}

func TestStats(t *testing.T) {
	s := New([]string{"A", "B", "C", "D", "X"}, edges("A>B", "B>C", "A>C", "C>D")).Stats()
	want := Statistics{NodeCount: 5, EdgeCount: 4, EntryNodes: []string{"A", "X"}, ExitNodes: []string{"D", "X"},
		MaxDepth: 3, IsolatedNodes: []string{"X"}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("stats = %+v, want %+v", s, want)
	}
	c := New([]string{"A", "B"}, edges("A>B", "B>A")).Stats()
	if !c.HasCycles || c.MaxDepth != 0 {
		t.Fatalf("cyclic stats = %+v", c)
	}
}

func TestMarshalRoundTripByteForByte(t *testing.T) {
	d := New([]string{"DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"},
		edges("DummyDataLoading_training>TabularPreprocessing_training", "TabularPreprocessing_training>XGBoostTraining"))
	meta := map[string]any{"name": "demo <&>", "z": []any{1, 2.5, "x"}, "a": map[string]any{"k": 12345678901234567}}
	first, err := Marshal(d, meta)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseDocument(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := MarshalDocument(*doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", first, second)
	}
	for _, want := range []string{`"version": "1.0.0"`, `"demo <&>"`, `12345678901234567`, `"max_depth": 2`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, first)
		}
	}
	if bytes.Contains(first, []byte("created_at")) {
		t.Error("writer added a timestamp nobody supplied")
	}
	// Key order is the documented one.
	idx := func(k string) int { return bytes.Index(first, []byte(`"`+k+`"`)) }
	if !(idx("version") < idx("metadata") && idx("metadata") < idx("dag") && idx("dag") < idx("statistics")) {
		t.Errorf("key order wrong:\n%s", first)
	}
	withTime, _ := MarshalDocument(Document{DAG: d, CreatedAt: "2024-01-02T03:04:05Z"})
	if !bytes.Contains(withTime, []byte(`"created_at": "2024-01-02T03:04:05Z"`)) {
		t.Errorf("caller-supplied created_at missing:\n%s", withTime)
	}
}

func TestMarshalValidates(t *testing.T) {
	if _, err := Marshal(New(nil, nil), nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty: %v", err)
	}
	var ce *CycleError
	if _, err := Marshal(New([]string{"A", "B"}, edges("A>B", "B>A")), nil); !errors.As(err, &ce) {
		t.Errorf("cycle: %v", err)
	}
	var de *DanglingEdgeError
	if _, err := Marshal(New([]string{"A"}, edges("A>B")), nil); !errors.As(err, &de) {
		t.Errorf("dangling: %v", err)
	}
}

func TestParseForms(t *testing.T) {
	want := New([]string{"A", "B"}, edges("A>B"))
	for name, in := range map[string]string{
		"flat":     `{"nodes":["A","B"],"edges":[["A","B"]]}`,
		"wrapped":  `{"dag":{"nodes":["A","B"],"edges":[["A","B"]]}}`,
		"shared":   `{"dag":{"description":"d","nodes":["A","B"],"edges":[["A","B"]]},"metadata":{"name":"x"}}`,
		"writer":   `{"version":"1.2.0","created_at":"t","metadata":{},"dag":{"nodes":["A","B"],"edges":[["A","B"]]},"statistics":{"node_count":9}}`,
		"no edges": `{"nodes":["A","B"],"edges":null}`,
	} {
		got, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w := want
		if name == "no edges" {
			w = New([]string{"A", "B"}, [][2]string{})
		}
		if !reflect.DeepEqual(got.Nodes, w.Nodes) || len(got.Edges) != len(w.Edges) {
			t.Errorf("%s: got %+v", name, got)
		}
	}
	doc, err := ParseDocument([]byte(`{"dag":{"description":"d","nodes":["A"],"edges":[]},"metadata":{"name":"x"}}`))
	if err != nil || doc.Description != "d" || doc.Metadata["name"] != "x" {
		t.Fatalf("doc = %+v, %v", doc, err)
	}
}

func TestParseErrorsNamePath(t *testing.T) {
	cases := map[string]string{
		`not json`:                                "invalid JSON",
		`[1,2]`:                                   "top level",
		`{}`:                                      `neither "dag" nor "nodes"`,
		`{"dag":[]}`:                              "dag: expected an object",
		`{"dag":{"edges":[]}}`:                    "dag.nodes: required",
		`{"nodes":"A"}`:                           "nodes: expected a list",
		`{"nodes":["A",3]}`:                       "nodes[1]: expected a string, got a number",
		`{"nodes":["A"],"edges":[["A"]]}`:         "edges[0]: expected a [source, destination] pair",
		`{"nodes":["A"],"edges":[["A",1]]}`:       "edges[0]: both endpoints must be strings",
		`{"dag":{"nodes":["A"],"edges":{}}}`:      "dag.edges: expected a list",
		`{"version":"2.0","dag":{"nodes":[]}}`:    "major version must be 1",
		`{"version":1,"dag":{"nodes":[]}}`:        "version: expected a string",
		`{"metadata":[],"dag":{"nodes":[]}}`:      "metadata: expected an object",
		`{"nodes":[]} {"nodes":[]}`:               "unexpected data",
		`{"dag":{"description":5,"nodes":["A"]}}`: "dag.description: expected a string",
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestMermaid(t *testing.T) {
	d := New([]string{"DummyDataLoading_training", "end", `evil"]-->x`, "XGBoostTraining"},
		edges("DummyDataLoading_training>XGBoostTraining", "XGBoostTraining>end", `end>evil"]-->x`))
	got, err := d.Mermaid(context.Background(), MermaidOptions{
		EdgeLabel: func(s, t string) string {
			if t == "XGBoostTraining" {
				return "DATA → input_path"
			}
			return ""
		},
		NodeClass: func(n string) string {
			if n == "DummyDataLoading_training" {
				return "source"
			}
			return ""
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `flowchart TD
    DummyDataLoading_training["DummyDataLoading_training"]:::source
    n1["end"]
    n2["evil#quot;]--#gt;x"]
    XGBoostTraining["XGBoostTraining"]
    DummyDataLoading_training -->|"DATA → input_path"| XGBoostTraining
    XGBoostTraining --> n1
    n1 --> n2
    classDef source fill:#e3f2fd,stroke:#1565c0
`
	if got != want {
		t.Fatalf("mermaid =\n%s\nwant\n%s", got, want)
	}
}

// TestParentsByNode: one pass over the edges gives what Parents gives per
// node, duplicate edges counted once and edge order kept.
func TestParentsByNode(t *testing.T) {
	d := New([]string{"A", "B", "C", "D"}, edges("B>D", "A>D", "B>D", "A>B", "C>C"))
	all := d.ParentsByNode()
	for _, n := range d.Nodes {
		if got, want := all[n], d.Parents(n); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", n, got, want)
		}
	}
}
