package steps

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/workspace"
	"github.com/cursus-dev/cursus/internal/textdist"
)

//go:embed catalog/*.step.yaml
var builtinFS embed.FS

// BuiltinPrefix marks the Source of an interface shipped in the binary.
const BuiltinPrefix = "builtin:"

// Catalog is the set of known step types: the embedded built-ins plus any
// extra directories. It is immutable after LoadCatalog and safe for
// concurrent use; Get returns shared values that callers must not modify
// (ForJobType returns private copies).
type Catalog struct {
	ifaces   map[string]*Interface
	names    []string
	byKey    map[string]string // CanonicalKey → step type
	byConfig map[string]string // config class → step type
	byBuild  map[string]string // builder name → step type
	warnings []finding.Finding
	sources  map[string]int // step type → number of other steps listing it as a compatible source
}

// LoadCatalog loads the built-in step types, then each extra directory in
// order; a later file with the same step_type overrides an earlier one. A
// file that does not parse or fails validation becomes a problem and is
// skipped; the others still load. Extra directories are read through
// workspace.OpenDir: a file that is not a regular file (a named pipe, a
// device), is larger than MaxFileSize, or is a symlink leading outside its
// directory is a problem too, found without blocking or reading it. The
// error is for a directory that cannot be read at all.
func LoadCatalog(extraDirs ...string) (*Catalog, []finding.Finding, error) {
	c := &Catalog{ifaces: map[string]*Interface{}}
	var problems []finding.Finding
	builtin, err := fs.Sub(builtinFS, "catalog")
	if err != nil {
		return nil, nil, err
	}
	problems = append(problems, c.loadDir(builtin, BuiltinPrefix)...)
	for _, dir := range extraDirs {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, problems, fmt.Errorf("step catalog directory: %w", err)
		}
		if !st.IsDir() {
			return nil, problems, fmt.Errorf("step catalog directory %s: not a directory", dir)
		}
		root, err := workspace.OpenDir(dir, MaxFileSize)
		if err != nil {
			return nil, problems, fmt.Errorf("step catalog directory: %w", err)
		}
		problems = append(problems, c.loadDir(root.FS(), dir+string(os.PathSeparator))...)
		root.Close()
	}
	c.index()
	return c, problems, nil
}

// loadDir adds every *.step.yaml of fsys; prefix turns file names into the
// Source shown to users.
func (c *Catalog) loadDir(fsys fs.FS, prefix string) []finding.Finding {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return []finding.Finding{{File: prefix, Rule: "read", Message: err.Error()}}
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), FileSuffix) {
			names = append(names, e.Name())
		}
	}
	// Files are read, parsed and validated on every core (this is most of
	// start-up), then added in directory order as before.
	type loaded struct {
		iface    *Interface
		findings []finding.Finding
		readErr  error
		err      error
	}
	results := make([]loaded, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for j, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &results[j]
			data, err := fs.ReadFile(fsys, name)
			if err != nil {
				r.readErr = err
				return
			}
			if r.iface, r.err = Parse(prefix+name, data); r.err == nil {
				r.findings = Validate(r.iface)
			}
		}()
	}
	wg.Wait()
	var problems []finding.Finding
	fromThisDir := map[string]string{}
	for j, name := range names {
		file := prefix + name
		if err := results[j].readErr; err != nil {
			rule, reason := workspace.Skipped(err)
			problems = append(problems, finding.Finding{File: file, Rule: rule, Message: reason + "; the file is skipped"})
			continue
		}
		iface, err := results[j].iface, results[j].err
		if err != nil {
			var le *LoadError
			if errors.As(err, &le) {
				for _, f := range le.Findings {
					problems = append(problems, finding.Finding{File: file, Path: f.Path, Rule: f.Rule, Message: f.Message})
				}
				continue
			}
			problems = append(problems, finding.Finding{File: file, Rule: "load", Message: err.Error()})
			continue
		}
		findings := results[j].findings
		if finding.AnyBlocking(findings) {
			for _, f := range findings {
				if f.Level == finding.Error {
					problems = append(problems, finding.Finding{File: file, Path: f.Path, Rule: f.Rule, Message: f.Message})
				}
			}
			continue
		}
		if prev, ok := fromThisDir[iface.StepType]; ok {
			problems = append(problems, finding.Finding{File: file, Path: "step_type", Rule: "duplicate_step_type",
				Message: fmt.Sprintf("step %s is already defined by %s in the same directory", iface.StepType, prev)})
			continue
		}
		if clash := c.keyClash(iface.StepType); clash != "" {
			problems = append(problems, finding.Finding{File: file, Path: "step_type", Rule: "canonical_key_clash",
				Message: fmt.Sprintf("step %s differs from existing step %s only in case or punctuation; rename it or use %s to override", iface.StepType, clash, clash)})
			continue
		}
		fromThisDir[iface.StepType] = file
		for _, f := range findings {
			c.warnings = append(c.warnings, finding.Finding{Level: finding.Warning, File: file, Path: f.Path, Rule: f.Rule, Message: f.Message})
		}
		if prev, ok := c.ifaces[iface.StepType]; ok {
			c.warnings = append(c.warnings, finding.Finding{Level: finding.Warning, File: file, Path: "step_type", Rule: "override",
				Message: fmt.Sprintf("overrides %s from %s", iface.StepType, prev.Source)})
		}
		c.ifaces[iface.StepType] = iface
	}
	return problems
}

// keyClash returns an existing step whose canonical key equals name's but
// whose spelling differs.
func (c *Catalog) keyClash(name string) string {
	k := CanonicalKey(name)
	for n := range c.ifaces {
		if n != name && CanonicalKey(n) == k {
			return n
		}
	}
	return ""
}

func (c *Catalog) index() {
	c.names = c.names[:0]
	c.byKey = map[string]string{}
	c.byConfig = map[string]string{}
	c.byBuild = map[string]string{}
	c.sources = map[string]int{}
	for n, iface := range c.ifaces {
		c.names = append(c.names, n)
		c.byKey[CanonicalKey(n)] = n
		c.byConfig[iface.ConfigClass()] = n
		c.byBuild[iface.BuilderName()] = n
	}
	sort.Strings(c.names)
	for _, n := range c.names {
		iface := c.ifaces[n]
		seen := map[string]bool{}
		for _, d := range iface.Spec.Dependencies.Keys() {
			dep, _ := iface.Spec.Dependencies.Get(d)
			for _, s := range dep.CompatibleSources {
				if t, ok := c.byKey[CanonicalKey(SourceStepType(s))]; ok && t != n && !seen[t] {
					seen[t] = true
					c.sources[t]++
				}
			}
		}
	}
}

// Names lists the step types, sorted.
func (c *Catalog) Names() []string { return append([]string(nil), c.names...) }

// ModelFamilies lists the model families the catalog's training and
// tuning steps train (compute.model_family), sorted: the frameworks a
// project can be built on.
func (c *Catalog) ModelFamilies() []string {
	var out []string
	for _, name := range c.names {
		if iface := c.ifaces[name]; iface != nil && iface.Compute != nil && iface.Compute.ModelFamily != "" &&
			!slices.Contains(out, strings.ToLower(iface.Compute.ModelFamily)) {
			out = append(out, strings.ToLower(iface.Compute.ModelFamily))
		}
	}
	slices.Sort(out)
	return out
}

// Len is the number of step types.
func (c *Catalog) Len() int { return len(c.names) }

// Get returns the base interface of a step type (exact name). The value is
// shared: do not modify it.
func (c *Catalog) Get(stepType string) (*Interface, bool) {
	i, ok := c.ifaces[stepType]
	return i, ok
}

// Warnings are non-blocking findings of the loaded files (unknown keys,
// overrides, …), each of warning level.
func (c *Catalog) Warnings() []finding.Finding { return append([]finding.Finding(nil), c.warnings...) }

// ConsumerCount is how many other step types list stepType among their
// compatible sources: a rough measure of how central the step is.
func (c *Catalog) ConsumerCount(stepType string) int { return c.sources[stepType] }

// ForJobType returns a private copy of the step's interface with the
// job-type variant merged in (see Interface.WithJobType).
func (c *Catalog) ForJobType(stepType, jobType string) (*Interface, []string, error) {
	iface, ok := c.ifaces[stepType]
	if !ok {
		return nil, nil, c.notFound(stepType)
	}
	return iface.WithJobType(jobType)
}

// Resolution is what a DAG node name (or any other spelling of a step)
// means.
type Resolution struct {
	Node             string `json:"node"`
	StepType         string `json:"step_type"`
	JobType          string `json:"job_type,omitempty"`
	ConfigKey        string `json:"config_key"`
	PipelineStepName string `json:"pipeline_step_name"`
	ConfigClass      string `json:"config_class"`
	BuilderName      string `json:"builder_name"`
	// Via says which naming rule matched: step_type, legacy_alias,
	// pipeline_step_name, config_class, builder_name, node (step + job
	// type), canonical_key.
	Via string `json:"via"`
}

// NotFoundError is an unknown step name, with close matches.
type NotFoundError struct {
	Name        string
	Suggestions []string
	// Internal is set when the name is an Amazon-internal kind.
	Internal *InternalKind
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("unknown step %q", e.Name)
	if e.Internal != nil {
		msg = fmt.Sprintf("step %q is the Amazon-internal kind %s and cannot be built here: %s", e.Name, e.Internal.Name, e.Internal.Advice)
		return msg
	}
	if len(e.Suggestions) > 0 {
		msg += " (did you mean " + strings.Join(e.Suggestions, ", ") + "?)"
	}
	return msg
}

// jobTypeSuffix is what a node may carry after "_": the reference's job
// types are lowercase words, but open (pretrain, delta, …).
var jobTypeSuffix = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// MaxNameLen bounds names Resolve looks at; nothing legitimate is longer.
const MaxNameLen = 256

// Resolve interprets a name the way a user might write a step: a step type
// (XGBoostTraining), a DAG node (TabularPreprocessing_training), a
// pipeline step name (TabularPreprocessing-Training), a config class
// (BatchTransformStepConfig), a builder (XGBoostTrainingStepBuilder), a
// snake-case stem (xgboost_training, tabular_preprocessing_calibration) or a
// legacy alias (MIMSPackaging). Unknown names give *NotFoundError.
func (c *Catalog) Resolve(name string) (Resolution, error) {
	name = strings.TrimSpace(name)
	// A dangling separator ("TabularPreprocessing_") names no job type.
	if name == "" || len(name) > MaxNameLen || strings.HasSuffix(name, "_") || strings.HasSuffix(name, "-") {
		return Resolution{}, &NotFoundError{Name: name}
	}
	res := func(stepType, jobType, via string) (Resolution, error) {
		iface := c.ifaces[stepType]
		r := Resolution{
			Node: name, StepType: stepType, JobType: jobType, ConfigKey: stepType,
			PipelineStepName: PipelineStepName(stepType, jobType),
			ConfigClass:      iface.ConfigClass(), BuilderName: iface.BuilderName(), Via: via,
		}
		if jobType != "" {
			r.ConfigKey = stepType + "_" + jobType
		}
		return r, nil
	}
	if _, ok := c.ifaces[name]; ok {
		return res(name, "", "step_type")
	}
	if t, ok := LegacyAlias(name); ok && c.ifaces[t] != nil {
		return res(t, "", "legacy_alias")
	}
	if t, ok := c.byConfig[name]; ok {
		return res(t, "", "config_class")
	}
	if t, ok := c.byBuild[name]; ok {
		return res(t, "", "builder_name")
	}
	// Pipeline step name: <StepType>-<Jobtype>.
	if i := strings.LastIndex(name, "-"); i > 0 && !strings.Contains(name[:i], "-") {
		if _, ok := c.ifaces[name[:i]]; ok && jobTypeSuffix.MatchString(name[i+1:]) {
			return res(name[:i], strings.ToLower(name[i+1:]), "pipeline_step_name")
		}
	}
	// Node names: exact step-type prefixes first (XGBoostModel_eval is
	// XGBoostModel with job type eval, not XGBoostModelEval), then
	// canonical keys (tabular_preprocessing_training).
	if base, suffix, ok := SplitJobType(name, func(p string) bool { return c.ifaces[p] != nil }); ok && suffix != "" && jobTypeSuffix.MatchString(suffix) {
		return res(base, suffix, "node")
	}
	if base, suffix, ok := SplitJobType(name, func(p string) bool { return c.byKey[CanonicalKey(p)] != "" }); ok && (suffix == "" || jobTypeSuffix.MatchString(suffix)) {
		t := c.byKey[CanonicalKey(base)]
		if suffix == "" {
			return res(t, "", "canonical_key")
		}
		return res(t, suffix, "node")
	}
	// Config classes and builders in other spellings.
	for _, suf := range []string{"StepBuilder", "Config"} {
		if trimmed, ok := strings.CutSuffix(name, suf); ok && trimmed != "" {
			trimmed = strings.TrimSuffix(trimmed, "Step")
			if t, ok := c.byKey[CanonicalKey(trimmed)]; ok {
				via := "config_class"
				if suf == "StepBuilder" {
					via = "builder_name"
				}
				return res(t, "", via)
			}
		}
	}
	if t, job, ok := c.fuzzy(name); ok {
		return res(t, job, "fuzzy")
	}
	return Resolution{}, c.notFound(name)
}

var fuzzyName = regexp.MustCompile(`^[A-Za-z0-9_\- ]+$`)

// fuzzyAbbrev expands the short forms file names use.
var fuzzyAbbrev = map[string]string{
	"xgb": "xgboost", "lgbm": "lightgbm", "lgb": "lightgbm", "torch": "pytorch", "pt": "pytorch",
	"evaluation": "eval", "evaluate": "eval", "preprocess": "preprocessing", "prep": "preprocessing",
	"calib": "calibration", "pkg": "package", "reg": "registration", "mims": "",
}

// fuzzyJobTypes are trailing words read as a job type, not part of the name.
var fuzzyJobTypes = map[string]bool{"training": true, "validation": true, "testing": true, "calibration": true,
	"inference": true, "evaluation": true, "batch": true, "scoring": true}

// fuzzy is the last resort for file-style names in any word order
// (model_evaluation_xgb → XGBoostModelEval): every word must occur in the
// step's canonical key, and the shortest such step wins if it is unique.
// A trailing job-type word becomes the job type when the rest matches.
func (c *Catalog) fuzzy(name string) (stepType, jobType string, ok bool) {
	if !fuzzyName.MatchString(name) {
		return "", "", false
	}
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	if len(words) < 2 {
		return "", "", false
	}
	try := func(ws []string) string {
		var keys []string
		for _, w := range ws {
			if full, ok := fuzzyAbbrev[w]; ok {
				w = full
			}
			if k := CanonicalKey(w); k != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return ""
		}
		best, bestLen, tie := "", 0, false
		for _, n := range c.names {
			nk := CanonicalKey(n)
			all := true
			for _, k := range keys {
				if !strings.Contains(nk, k) {
					all = false
					break
				}
			}
			switch {
			case !all:
			case best == "" || len(nk) < bestLen:
				best, bestLen, tie = n, len(nk), false
			case len(nk) == bestLen:
				tie = true
			}
		}
		if tie {
			return ""
		}
		return best
	}
	if last := words[len(words)-1]; fuzzyJobTypes[last] {
		if t := try(words[:len(words)-1]); t != "" {
			return t, last, true
		}
	}
	if t := try(words); t != "" {
		return t, "", true
	}
	return "", "", false
}

func (c *Catalog) notFound(name string) *NotFoundError {
	e := &NotFoundError{Name: name, Suggestions: c.Suggest(name, 5)}
	if k, ok := LookupInternal(name); ok {
		e.Internal = &k
		if k.Replacement != "" {
			e.Suggestions = []string{k.Replacement}
		}
	}
	return e
}

// Suggest returns up to n step types close to name: same canonical-key
// prefix or containment first, then small edit distance.
func (c *Catalog) Suggest(name string, n int) []string {
	key := CanonicalKey(name)
	if key == "" || len(key) > MaxNameLen {
		return nil
	}
	// A node name's job-type suffix should not spoil the match.
	if i := strings.LastIndex(name, "_"); i > 0 {
		if k := CanonicalKey(name[:i]); len(k) >= 3 {
			key = k
		}
	}
	type cand struct {
		name  string
		score int
	}
	var cands []cand
	for _, s := range c.names {
		sk := CanonicalKey(s)
		score := -1
		switch {
		case len(key) >= 3 && strings.HasPrefix(sk, key):
			score = 0
		case len(key) >= 3 && strings.Contains(sk, key):
			score = 1
		case len(sk) >= 3 && strings.Contains(key, sk):
			score = 1
		default:
			d := textdist.Distance(key, sk)
			limit := max(2, len(sk)/3)
			if d <= limit {
				score = 2 + d
			}
		}
		if score >= 0 {
			cands = append(cands, cand{s, score})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].score < cands[b].score })
	var out []string
	for _, cd := range cands {
		if len(out) == n {
			break
		}
		out = append(out, cd.name)
	}
	return out
}
