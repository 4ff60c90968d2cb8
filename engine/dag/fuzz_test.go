package dag_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
)

// FuzzParseDAG feeds arbitrary bytes to the DAG JSON reader. Whatever it
// accepts must survive the writer and read back as the same graph, and the
// graph operations must not panic on it.
//
//	go test -run=^$ -fuzz=FuzzParseDAG -fuzztime=10m ./engine/dag
func FuzzParseDAG(f *testing.F) {
	for _, seed := range []string{
		`{"nodes":["a","b"],"edges":[["a","b"]]}`,
		`{"dag":{"nodes":["a"],"edges":[]},"version":"1.0","metadata":{"n":1}}`,
		`{"dag":{"nodes":["a","b"],"edges":[["a","b"],["b","a"]]}}`,
		`{"nodes":["a"],"edges":[["a","zz"]]}`,
		`{"nodes":["a","a"],"edges":[]}`,
		`{"version":"2.0","nodes":[]}`,
		`{"nodes":[1],"edges":[["a"]]}`,
		`[]`, `{}`, ``,
	} {
		f.Add([]byte(seed))
	}
	// The shared DAGs shipped with the pipeline catalog are realistic seeds.
	files, _ := filepath.Glob("../pipelines/shared_dags/*/*.json")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := dag.ParseDocument(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		d := doc.DAG
		if d == nil {
			t.Fatal("ParseDocument returned no DAG and no error")
		}
		_ = d.Check()
		if order, err := d.TopoSort(); err == nil {
			// Nodes keeps duplicates (Check reports them); the order has
			// each node once.
			distinct := map[string]bool{}
			for _, n := range d.Nodes {
				distinct[n] = true
			}
			if len(order) != len(distinct) {
				t.Fatalf("topological order has %d nodes, DAG has %d distinct", len(order), len(distinct))
			}
			pos := map[string]int{}
			for i, n := range order {
				pos[n] = i
			}
			for _, e := range d.Edges {
				if pos[e[0]] >= pos[e[1]] {
					t.Fatalf("edge %v violates topological order %v", e, order)
				}
			}
		}
		out, err := dag.MarshalDocument(*doc)
		if err != nil {
			t.Fatalf("accepted DAG cannot be written: %v", err)
		}
		back, err := dag.Parse(out)
		if err != nil {
			t.Fatalf("written DAG does not read back: %v\n%s", err, out)
		}
		if !slices.Equal(back.Nodes, d.Nodes) || !slices.Equal(back.Edges, d.Edges) {
			t.Fatalf("round trip changed the graph:\n%v %v\n%v %v", d.Nodes, d.Edges, back.Nodes, back.Edges)
		}
	})
}
