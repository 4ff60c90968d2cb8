package dag

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// MermaidOptions decorate a Mermaid rendering. Both functions may be nil.
type MermaidOptions struct {
	// EdgeLabel labels the edge src → dst ("" for none), e.g. the wired ports.
	EdgeLabel func(src, dst string) string
	// NodeClass names a class for the node ("" for none); classes used are
	// declared with a style so sources, sinks and problems stand out.
	NodeClass func(node string) string
}

// Classes with a built-in style in Mermaid output.
var mermaidStyles = map[string]string{
	"source":     "fill:#e3f2fd,stroke:#1565c0",
	"sink":       "fill:#e8f5e9,stroke:#2e7d32",
	"singular":   "fill:#f3e5f5,stroke:#6a1b9a",
	"unknown":    "fill:#ffebee,stroke:#c62828,stroke-dasharray:4",
	"unresolved": "fill:#fff3e0,stroke:#ef6c00",
}

var plainID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Words Mermaid treats as keywords in flowcharts; they cannot be node ids.
var mermaidKeywords = map[string]bool{"end": true, "graph": true, "subgraph": true, "flowchart": true,
	"style": true, "class": true, "classdef": true, "click": true, "linkstyle": true, "direction": true,
	"call": true, "href": true}

// Mermaid renders d as a top-down Mermaid flowchart. Node names that are
// plain identifiers are used as ids; anything else gets a generated id and
// is shown as an escaped label, so hostile names cannot break the diagram.
// Edges to undeclared nodes are drawn with their endpoint added. The
// options' functions run once per node or edge, so Mermaid stops with
// ctx's error when ctx ends.
func (d *DAG) Mermaid(ctx context.Context, opts MermaidOptions) (string, error) {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	ids := map[string]string{}
	taken := map[string]bool{}
	var order []string
	id := func(n string) string {
		if v, ok := ids[n]; ok {
			return v
		}
		v := n
		if !plainID.MatchString(n) || mermaidKeywords[strings.ToLower(n)] || taken[v] {
			v = fmt.Sprintf("n%d", len(ids))
		}
		for taken[v] {
			v += "_"
		}
		ids[n] = v
		taken[v] = true
		order = append(order, n)
		return v
	}
	for _, n := range d.Nodes {
		id(n)
	}
	for _, e := range d.Edges {
		id(e[0])
		id(e[1])
	}
	used := map[string]bool{}
	for i, n := range order {
		if err := pollCtx(ctx, i); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "    %s[\"%s\"]", ids[n], mermaidEscape(n))
		if opts.NodeClass != nil {
			if c := opts.NodeClass(n); c != "" && plainID.MatchString(c) {
				fmt.Fprintf(&b, ":::%s", c)
				used[c] = true
			}
		}
		b.WriteByte('\n')
	}
	seen := map[[2]string]bool{}
	for i, e := range d.Edges {
		if err := pollCtx(ctx, i); err != nil {
			return "", err
		}
		if seen[e] {
			continue
		}
		seen[e] = true
		label := ""
		if opts.EdgeLabel != nil {
			label = opts.EdgeLabel(e[0], e[1])
		}
		if label != "" {
			fmt.Fprintf(&b, "    %s -->|\"%s\"| %s\n", ids[e[0]], mermaidEscape(label), ids[e[1]])
		} else {
			fmt.Fprintf(&b, "    %s --> %s\n", ids[e[0]], ids[e[1]])
		}
	}
	for _, c := range []string{"source", "sink", "singular", "unknown", "unresolved"} {
		if used[c] {
			fmt.Fprintf(&b, "    classDef %s %s\n", c, mermaidStyles[c])
		}
	}
	return b.String(), nil
}

// pollCtx reports ctx's error on every 128th iteration i: a check per
// iteration of a loop of cheap steps would cost more than the steps.
func pollCtx(ctx context.Context, i int) error {
	if i%128 != 0 {
		return nil
	}
	return ctx.Err()
}

// mermaidEscape makes s safe inside a quoted Mermaid label.
func mermaidEscape(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "\n", " ", "\r", " ", "<", "#lt;", ">", "#gt;", "|", "#124;")
	return r.Replace(s)
}
