// Package pipelines is the catalog of ready-made pipeline DAGs ("shared
// DAGs"): the built-in set embedded here plus operator directories in the
// Cursus layout (<framework>/<name>.dag.json, optional catalog_index.json).
// It ranks them for a request and explains the ranking.
package pipelines

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/workspace"
)

//go:embed shared_dags
var builtin embed.FS

// IndexFile is the optional index beside the framework directories.
const IndexFile = "catalog_index.json"

// Entry is one shared DAG with its index metadata.
type Entry struct {
	ID                string         `json:"id"`
	Path              string         `json:"path"` // <framework>/<name>.dag.json, relative to its directory
	Description       string         `json:"description"`
	Framework         string         `json:"framework"`
	Complexity        string         `json:"complexity"`
	TaskType          string         `json:"task_type"`
	NodeCount         int            `json:"node_count"`
	EdgeCount         int            `json:"edge_count"`
	Features          []string       `json:"features"`
	InputRequirements map[string]any `json:"input_requirements"`
	Constraints       map[string]any `json:"constraints"`
	Cost              map[string]any `json:"cost"`
	UsedByProjects    []string       `json:"used_by_projects"`
	AgentContext      AgentContext   `json:"agent_context"`
	// Source is "builtin" or the directory the entry came from.
	Source string `json:"source"`

	dag *dag.DAG
}

// DAG returns a copy of the entry's graph.
func (e *Entry) DAG() *dag.DAG { return dag.New(e.dag.Nodes, e.dag.Edges) }

// AgentContext tells an agent when and how to use a DAG.
type AgentContext struct {
	WhenToUse       string                       `json:"when_to_use"`
	WhenNotToUse    string                       `json:"when_not_to_use"`
	Differentiators []string                     `json:"differentiators"`
	Prerequisites   []Prerequisite               `json:"prerequisites"`
	ConfigGuidance  ConfigGuidance               `json:"config_guidance"`
	DecisionTree    map[string]map[string]string `json:"decision_tree"`
}

// Prerequisite is one thing to check before running a DAG, and how.
type Prerequisite struct {
	Check string `json:"check"`
	How   string `json:"how"`
}

// ConfigGuidance summarises the configuration a DAG needs.
type ConfigGuidance struct {
	UserMustProvide []string `json:"user_must_provide"`
	SafeDefaults    []string `json:"safe_defaults"`
	CommonPitfalls  []string `json:"common_pitfalls"`
}

// Catalog is an immutable set of entries, sorted by id.
type Catalog struct {
	entries []*Entry
	byID    map[string]*Entry
}

// MaxFileSize bounds a DAG file or index of an extra directory; real ones
// are a few kilobytes.
const MaxFileSize = 4 << 20

// Load reads the built-in DAGs, then each extra directory in order; an entry
// whose id already exists replaces it. Broken files become problems. Extra
// directories are read through workspace.OpenDir: a file that is not a
// regular file (a named pipe, a device), is larger than MaxFileSize, or is a
// symlink leading outside its directory is a problem too, found without
// blocking on it or reading it. The error is non-nil only if the built-in
// set itself cannot be read.
func Load(extraDirs ...string) (*Catalog, []finding.Finding, error) {
	sub, err := fs.Sub(builtin, "shared_dags")
	if err != nil {
		return nil, nil, err
	}
	entries, problems := LoadFS(sub, "builtin")
	if len(entries) == 0 {
		return nil, problems, errors.New("built-in pipeline catalog is empty")
	}
	c := &Catalog{byID: map[string]*Entry{}}
	c.add(entries)
	for _, dir := range extraDirs {
		info, err := os.Stat(dir)
		if err != nil || !info.IsDir() {
			problems = append(problems, finding.Finding{File: dir, Rule: "directory", Message: "extra pipeline directory is missing or not a directory"})
			continue
		}
		root, err := workspace.OpenDir(dir, MaxFileSize)
		if err != nil {
			problems = append(problems, finding.Finding{File: dir, Rule: "directory", Message: err.Error()})
			continue
		}
		more, ps := LoadFS(root.FS(), dir)
		root.Close()
		problems = append(problems, ps...)
		c.add(more)
	}
	return c, problems, nil
}

func (c *Catalog) add(entries []*Entry) {
	for _, e := range entries {
		if _, ok := c.byID[e.ID]; !ok {
			c.entries = append(c.entries, e)
		} else {
			for i, old := range c.entries {
				if old.ID == e.ID {
					c.entries[i] = e
				}
			}
		}
		c.byID[e.ID] = e
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].ID < c.entries[j].ID })
}

// List returns every entry sorted by id.
func (c *Catalog) List() []*Entry { return append([]*Entry(nil), c.entries...) }

// Get returns the entry with the given id.
func (c *Catalog) Get(id string) (*Entry, bool) {
	e, ok := c.byID[id]
	return e, ok
}

// IDs returns every id, sorted.
func (c *Catalog) IDs() []string {
	out := make([]string, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.ID
	}
	return out
}

// indexDoc is the Cursus catalog_index.json layout.
type indexDoc struct {
	Version    string   `json:"version"`
	TotalDAGs  int      `json:"total_dags"`
	Frameworks []string `json:"frameworks"`
	DAGs       []*Entry `json:"dags"`
}

// fileDoc is a shared DAG file: the graph plus metadata mirroring the index.
type fileDoc struct {
	Metadata *fileMeta `json:"metadata"`
}

type fileMeta struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Entry
}

// LoadFS reads one catalog directory: every <framework>/<name>.dag.json,
// with metadata from catalog_index.json when it lists the file, else from
// the file's own "metadata". Node and edge counts are always recomputed;
// a stated count that disagrees is reported.
func LoadFS(fsys fs.FS, source string) ([]*Entry, []finding.Finding) {
	var problems []finding.Finding
	indexed := map[string]*Entry{}
	data, err := fs.ReadFile(fsys, IndexFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		problems = append(problems, skipped(path.Join(source, IndexFile), err))
	}
	if err == nil {
		var idx indexDoc
		if err := json.Unmarshal(data, &idx); err != nil {
			problems = append(problems, finding.Finding{File: path.Join(source, IndexFile), Rule: "json", Message: err.Error()})
		} else {
			for i, e := range idx.DAGs {
				if e == nil || e.ID == "" || e.Path == "" {
					problems = append(problems, finding.Finding{File: path.Join(source, IndexFile), Path: fmt.Sprintf("dags[%d]", i), Rule: "required", Message: "index entry needs id and path"})
					continue
				}
				indexed[path.Clean(e.Path)] = e
			}
		}
	}
	files, ps := dagFiles(fsys, source)
	problems = append(problems, ps...)
	var entries []*Entry
	seen := map[string]string{}
	for _, f := range files {
		e, ps := loadFile(fsys, f, source, indexed[f])
		problems = append(problems, ps...)
		if e == nil {
			continue
		}
		if prev, dup := seen[e.ID]; dup {
			problems = append(problems, finding.Finding{File: path.Join(source, f), Rule: "unique_id", Message: fmt.Sprintf("id %q is also used by %s; this file is skipped", e.ID, prev)})
			continue
		}
		seen[e.ID] = f
		entries = append(entries, e)
	}
	for p := range indexed {
		if !slicesContains(files, p) {
			problems = append(problems, finding.Finding{File: path.Join(source, IndexFile), Path: p, Rule: "missing_file", Message: "index lists a DAG file that does not exist"})
		}
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].String() < problems[j].String() })
	return entries, problems
}

// dagFiles lists every <framework>/<name>.dag.json of fsys, sorted. Hidden
// directories hold copies, not DAGs: a Kubernetes ConfigMap mount keeps
// its files under ..data and a timestamped ..<date> directory as well as
// the visible names. A framework directory that cannot be listed (a
// symlink leading outside) is a problem.
func dagFiles(fsys fs.FS, source string) ([]string, []finding.Finding) {
	top, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, []finding.Finding{skipped(source, err)}
	}
	var files []string
	var problems []finding.Finding
	for _, d := range top {
		name := d.Name()
		if strings.HasPrefix(name, ".") || (!d.IsDir() && d.Type()&fs.ModeSymlink == 0) {
			continue
		}
		entries, err := fs.ReadDir(fsys, name)
		if err != nil {
			var fe *workspace.FileError
			if d.Type()&fs.ModeSymlink != 0 && errors.As(err, &fe) {
				continue // a symlink to a file inside: not a framework directory
			}
			problems = append(problems, skipped(path.Join(source, name), err))
			continue
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".dag.json") {
				files = append(files, name+"/"+e.Name())
			}
		}
	}
	sort.Strings(files)
	return files, problems
}

// skipped is the problem of a file or directory that could not be read.
func skipped(where string, err error) finding.Finding {
	rule, reason := workspace.Skipped(err)
	return finding.Finding{File: where, Rule: rule, Message: reason + "; it is skipped"}
}

func loadFile(fsys fs.FS, f, source string, fromIndex *Entry) (*Entry, []finding.Finding) {
	where := path.Join(source, f)
	data, err := fs.ReadFile(fsys, f)
	if err != nil {
		return nil, []finding.Finding{skipped(where, err)}
	}
	d, err := dag.Parse(data)
	if err != nil {
		return nil, []finding.Finding{{File: where, Rule: "dag", Message: err.Error()}}
	}
	var e Entry
	if fromIndex != nil {
		e = *fromIndex
	} else {
		var doc fileDoc
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, []finding.Finding{{File: where, Path: "metadata", Rule: "metadata", Message: err.Error()}}
		}
		if doc.Metadata != nil {
			e = doc.Metadata.Entry
			e.ID = doc.Metadata.ID
			if e.ID == "" {
				e.ID = doc.Metadata.Name
			}
		}
	}
	framework, file := path.Split(f)
	framework = strings.TrimSuffix(framework, "/")
	if e.ID == "" {
		e.ID = framework + "_" + strings.TrimSuffix(file, ".dag.json")
	}
	if e.Framework == "" {
		e.Framework = framework
	}
	if e.Complexity == "" {
		e.Complexity = "standard"
	}
	e.Path, e.Source, e.dag = f, source, d
	var problems []finding.Finding
	if integrity := d.Check(); !integrity.Valid {
		for _, is := range integrity.Issues {
			problems = append(problems, finding.Finding{File: where, Path: "dag", Rule: is.Category, Message: is.Message})
		}
		return nil, problems
	}
	stats := d.Stats()
	if e.NodeCount != 0 && e.NodeCount != stats.NodeCount {
		problems = append(problems, finding.Finding{File: where, Path: "metadata.node_count", Rule: "count", Message: fmt.Sprintf("says %d, the DAG has %d nodes", e.NodeCount, stats.NodeCount)})
	}
	if e.EdgeCount != 0 && e.EdgeCount != stats.EdgeCount {
		problems = append(problems, finding.Finding{File: where, Path: "metadata.edge_count", Rule: "count", Message: fmt.Sprintf("says %d, the DAG has %d edges", e.EdgeCount, stats.EdgeCount)})
	}
	e.NodeCount, e.EdgeCount = stats.NodeCount, stats.EdgeCount
	e.fillAbsent()
	return &e, problems
}

// fillAbsent makes the lists and maps a DAG file left out empty, so an
// entry encodes them as [] and {} rather than null: agents read a missing
// list as "none", not as an error to handle.
func (e *Entry) fillAbsent() {
	ac := &e.AgentContext
	orEmpty(&e.Features)
	orEmpty(&e.UsedByProjects)
	orEmptyMap(&e.InputRequirements)
	orEmptyMap(&e.Constraints)
	orEmptyMap(&e.Cost)
	orEmpty(&ac.Differentiators)
	orEmpty(&ac.Prerequisites)
	orEmpty(&ac.ConfigGuidance.UserMustProvide)
	orEmpty(&ac.ConfigGuidance.SafeDefaults)
	orEmpty(&ac.ConfigGuidance.CommonPitfalls)
	orEmptyMap(&ac.DecisionTree)
}

func orEmpty[T any](list *[]T) {
	if *list == nil {
		*list = []T{}
	}
}

func orEmptyMap[K comparable, V any](m *map[K]V) {
	if *m == nil {
		*m = map[K]V{}
	}
}

func slicesContains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}

// Index renders the catalog in the catalog_index.json layout (without a
// timestamp, so it is reproducible).
func (c *Catalog) Index() ([]byte, error) {
	fw := map[string]bool{}
	var frameworks []string
	for _, e := range c.entries {
		if !fw[e.Framework] {
			fw[e.Framework] = true
			frameworks = append(frameworks, e.Framework)
		}
	}
	sort.Strings(frameworks)
	doc := indexDoc{Version: "3.1", TotalDAGs: len(c.entries), Frameworks: frameworks, DAGs: c.entries}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
