package handlers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/registry"
)

// catalogView is one consistent set of catalogs for a call: the step
// types and their config schemas, with what went wrong loading the
// operator's step directories, and the shared DAGs. It is immutable.
type catalogView struct {
	Steps  *steps.Catalog
	Config *config.Schemas
	// Problems are step files that could not join the catalog; schema
	// defects are in Config.Problems().
	Problems []finding.Finding
	// Dirs are the operator's step directories, as configured.
	Dirs []string
	// ReloadError says why the last reload of Dirs failed ("" when it
	// did not); the catalogs are then those of the reload before.
	ReloadError string
	// DAGs is the shared-DAG catalog: the built-in DAGs plus the
	// operator's pipeline directories; DAGProblems are DAG files of those
	// directories that could not join it.
	DAGs        *pipelines.Catalog
	DAGProblems []finding.Finding
	// Warnings are the findings of warning level in the step types the
	// call sent, for its reply.
	Warnings []string
}

// Defaults of the caps on step_types.
const (
	defaultMaxStepTypes     = 16
	defaultMaxStepTypeBytes = 256 << 10
	// defaultStepReloadInterval is the least time between two looks at the
	// step and pipeline directories for changes.
	defaultStepReloadInterval = 2 * time.Second
)

// liveCatalogs holds the shared catalogs and reloads them when a step or
// pipeline directory changes. Calls read the current view without locking;
// a call that finds the check due starts a look at the directories (others
// carry on with the current view meanwhile) and waits for it only as long
// as its own context allows: past that it goes on with the current view,
// and the reload swaps its catalogs in when it ends.
type liveCatalogs struct {
	dirs     []string // step directories
	dagDirs  []string // pipeline directories
	interval time.Duration
	// build loads the step catalogs of dirs: buildView, or a stand-in in
	// tests.
	build   func(dirs []string) (*catalogView, error)
	current atomic.Pointer[catalogView]
	checked atomic.Int64 // unix nanoseconds of the last look
	mu      sync.Mutex   // one reload at a time; guards the stamps
	// stamp and dagStamp digest the step and pipeline directories as
	// last loaded.
	stamp, dagStamp string
	// start begins the first load; ready is closed when it has ended,
	// loadErr its error. Nothing reads current before.
	start   sync.Once
	begun   atomic.Bool // the first load has started
	ready   chan struct{}
	loadErr error
}

// startCatalogs prepares the catalogs. With operator step or pipeline
// directories it starts loading them at once, on another goroutine, so
// that start-up can build the tool registry meanwhile and still fail (or
// log) on a bad directory before it serves. Without, there is only the
// built-in, embedded content, which the package tests check and so cannot
// fail at run time: it is parsed on first use (the first read waits for
// it), and a server that is never asked about steps or DAGs never parses
// them.
func startCatalogs(dirs, dagDirs []string, interval time.Duration) *liveCatalogs {
	l := &liveCatalogs{dirs: dirs, dagDirs: dagDirs, interval: interval, build: buildView, ready: make(chan struct{})}
	if l.operatorDirs() {
		l.begin()
	}
	return l
}

// operatorDirs says whether the operator configured step or pipeline
// directories (whose first load start-up waits for).
func (l *liveCatalogs) operatorDirs() bool { return len(l.dirs) > 0 || len(l.dagDirs) > 0 }

// begin starts the first load on another goroutine, once.
func (l *liveCatalogs) begin() {
	l.start.Do(func() {
		l.begun.Store(true)
		go func() {
			defer close(l.ready)
			l.loadErr = l.load()
		}()
	})
}

// startupLoad is what start-up waits for: the first load when the
// operator configured directories (its error fails start-up), nothing
// when the built-in catalogs load on first use.
func (l *liveCatalogs) startupLoad() error {
	if !l.operatorDirs() {
		return nil
	}
	<-l.ready
	return l.loadErr
}

// loaded is the current catalogs once the first load has ended (nil if
// it failed), starting that load if no read has yet.
func (l *liveCatalogs) loaded() *catalogView {
	l.begin()
	<-l.ready
	return l.current.Load()
}

// load is the first load of the catalogs.
func (l *liveCatalogs) load() error {
	dirs, dagDirs := l.dirs, l.dagDirs
	l.stamp, l.dagStamp = steps.DirsStamp(dirs), pipelines.DirsStamp(dagDirs)
	// The shared DAGs do not depend on the step catalog: they load on
	// another core meanwhile.
	type dagLoad struct {
		cat      *pipelines.Catalog
		problems []finding.Finding
		err      error
	}
	dagsDone := make(chan dagLoad, 1)
	go func() {
		var d dagLoad
		d.cat, d.problems, d.err = pipelines.Load(dagDirs...)
		dagsDone <- d
	}()
	view, err := l.build(dirs)
	dags := <-dagsDone
	if err != nil {
		return err
	}
	if dags.err != nil {
		return fmt.Errorf("pipeline catalog: %w", dags.err)
	}
	view.DAGs, view.DAGProblems = dags.cat, dags.problems
	l.current.Store(view)
	l.checked.Store(time.Now().UnixNano())
	return nil
}

func buildView(dirs []string) (*catalogView, error) {
	cat, problems, err := steps.LoadCatalog(dirs...)
	if err != nil {
		return nil, fmt.Errorf("step catalog: %w", err)
	}
	schemas, err := config.LoadSchemas(cat)
	if err != nil {
		return nil, fmt.Errorf("config schemas: %w", err)
	}
	return &catalogView{Steps: cat, Config: schemas, Problems: problems, Dirs: dirs}, nil
}

// view is the current catalogs, reloaded first when the check is due and
// a directory changed, if the reload ends before ctx does. A reload that
// fails keeps the last good catalogs and says why in ReloadError.
func (l *liveCatalogs) view(ctx context.Context) *catalogView {
	cur := l.loaded()
	if !l.operatorDirs() {
		return cur
	}
	now := time.Now()
	if now.UnixNano()-l.checked.Load() < int64(l.interval) || !l.mu.TryLock() {
		return l.current.Load()
	}
	l.checked.Store(now.UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer l.mu.Unlock()
		l.reload()
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return l.current.Load()
}

// reload rebuilds the catalogs whose directories changed: the step
// catalogs, the shared DAGs, or both. The caller holds l.mu.
func (l *liveCatalogs) reload() {
	stamp, dagStamp := steps.DirsStamp(l.dirs), pipelines.DirsStamp(l.dagDirs)
	if stamp == l.stamp && dagStamp == l.dagStamp {
		return
	}
	next := *l.current.Load()
	if stamp != l.stamp {
		l.stamp = stamp
		if built, err := l.build(l.dirs); err != nil {
			next.ReloadError = err.Error() + "; the step types loaded before are kept"
		} else {
			next.Steps, next.Config, next.Problems, next.Dirs, next.ReloadError = built.Steps, built.Config, built.Problems, built.Dirs, ""
		}
	}
	if dagStamp != l.dagStamp {
		l.dagStamp = dagStamp
		// Only an unreadable built-in set fails Load, and it loaded at
		// start: the DAGs before are kept then.
		if dags, problems, err := pipelines.Load(l.dagDirs...); err == nil {
			next.DAGs, next.DAGProblems = dags, problems
		}
	}
	l.current.Store(&next)
}

// catalogs is the shared view: the built-in step types plus the
// operator's directories, without any the caller sent.
func (d *Deps) catalogs(ctx context.Context) *catalogView { return d.live.view(ctx) }

// stepTypesArg is the argument every tool that resolves step types
// embeds: step interfaces sent with the call.
type stepTypesArg struct {
	StepTypes []string `json:"step_types,omitempty" jsonschema:"Step interface documents (.step.yaml text, one step type each) that overlay the catalog for this call only: a new step type, or a replacement of one under the same step_type. Each is checked as validate.step_interface checks a file; any error rejects the call. Exemplars: steps.source; the format: steps.format {\"format\": \"step_yaml\"}."`
}

// catalogsFor is the catalogs this call sees: the shared ones, overlaid by
// the step types the caller sent (if any). The shared catalogs are not
// modified, so concurrent calls with different step types each see their
// own. Warnings of the sent documents are the view's, for the reply.
func (d *Deps) catalogsFor(ctx context.Context, in stepTypesArg) (*catalogView, error) {
	shared := d.catalogs(ctx)
	if len(in.StepTypes) == 0 {
		return shared, nil
	}
	if err := d.checkStepTypeCaps(in); err != nil {
		return nil, err
	}
	ifaces, warned, err := steps.ParseDocuments(ctx, in.StepTypes)
	if err != nil {
		return nil, overlayError(err)
	}
	cat, err := shared.Steps.Overlay(ifaces)
	if err != nil {
		return nil, overlayError(err)
	}
	names := make([]string, len(ifaces))
	for i, iface := range ifaces {
		names[i] = iface.StepType
	}
	schemas, problems := shared.Config.Overlay(cat, names)
	if len(problems) > 0 {
		docs := make([]steps.DocumentFindings, 0, len(problems))
		for _, p := range problems {
			i := slices.Index(names, p.StepType)
			docs = append(docs, steps.DocumentFindings{Index: i, StepType: p.StepType, Errors: []finding.Finding{{
				Level: finding.Error, File: steps.OverlaySource(i), Path: "config", Rule: "config_schema", Message: p.String()}}})
		}
		return nil, overlayError(&steps.OverlayError{Documents: docs})
	}
	view := *shared
	view.Steps, view.Config = cat, schemas
	for _, w := range warned {
		for _, f := range w.Warnings {
			view.Warnings = append(view.Warnings, f.String())
		}
	}
	return &view, nil
}

// checkStepTypeCaps refuses more step_types, or larger ones, than the
// operator allows.
func (d *Deps) checkStepTypeCaps(in stepTypesArg) error {
	if n, limit := len(in.StepTypes), d.Opts.maxStepTypes(); n > limit {
		return overCap("limits.max_step_types", int64(limit), fmt.Sprintf("step_types has %d documents", n))
	}
	for i, doc := range in.StepTypes {
		if n, limit := len(doc), d.Opts.maxStepTypeBytes(); int64(n) > limit {
			return overCap("limits.max_step_type_bytes", limit, fmt.Sprintf("step_types[%d] is %d bytes", i, n))
		}
	}
	return nil
}

// overlayError is the invalid_input of step_types that cannot join the
// catalog: every failing document with its findings.
func overlayError(err error) error {
	var oe *steps.OverlayError
	if !errors.As(err, &oe) {
		return err
	}
	return registry.Errorf(registry.CodeInvalidInput, "invalid step_types: %s", oe.Error()).
		WithDetails(map[string]any{"argument": "step_types", "documents": oe.Documents}).
		Suggest("Fix each document's errors (validate.step_interface {\"yaml\": …} checks one), or compare with an exemplar from steps.source.",
			"validate.step_interface", "steps.source", "steps.format")
}

func (o Options) maxStepTypes() int {
	if o.MaxStepTypes > 0 {
		return o.MaxStepTypes
	}
	return defaultMaxStepTypes
}

func (o Options) maxStepTypeBytes() int64 {
	if o.MaxStepTypeBytes > 0 {
		return o.MaxStepTypeBytes
	}
	return defaultMaxStepTypeBytes
}

func (o Options) stepReloadInterval() time.Duration {
	if o.StepReloadInterval != 0 {
		return max(o.StepReloadInterval, 0)
	}
	return defaultStepReloadInterval
}

// stepDirStatus is what tools.help and catalog.list_steps say of one
// operator step directory.
type stepDirStatus struct {
	Dir       string            `json:"dir"`
	StepCount int               `json:"step_count"`
	Problems  []finding.Finding `json:"problems"`
}

// stepDirsStatus reports each step directory of v: how many step types
// it gives and which of its files failed, and why.
func (v *catalogView) stepDirsStatus() []stepDirStatus {
	out := make([]stepDirStatus, 0, len(v.Dirs))
	for _, dir := range v.Dirs {
		prefix := dir + string(filepath.Separator)
		st := stepDirStatus{Dir: dir, Problems: []finding.Finding{}}
		for _, n := range v.Steps.Names() {
			if iface, _ := v.Steps.Get(n); strings.HasPrefix(iface.Source, prefix) {
				st.StepCount++
			}
		}
		for _, p := range v.Problems {
			if strings.HasPrefix(p.File, prefix) {
				st.Problems = append(st.Problems, p)
			}
		}
		out = append(out, st)
	}
	return out
}

// stepCatalogStatus is what tools.help says of the step catalog: how many
// step types it has, the operator's directories and their problems.
type stepCatalogStatus struct {
	StepTypes   int             `json:"step_types"`
	StepDirs    []stepDirStatus `json:"step_dirs"`
	ReloadError string          `json:"reload_error,omitempty"`
	// Note says how a caller adds step types without an operator.
	Note string `json:"note"`
}

func (d *Deps) stepCatalogStatus(ctx context.Context) stepCatalogStatus {
	cv := d.catalogs(ctx)
	return stepCatalogStatus{StepTypes: cv.Steps.Len(), StepDirs: cv.stepDirsStatus(), ReloadError: cv.ReloadError,
		Note: "Tools that resolve step types take step_types: .step.yaml documents that overlay the catalog for that call only " +
			"(exemplars: steps.source; the format: steps.format)."}
}
