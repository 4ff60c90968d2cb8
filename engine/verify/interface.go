package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// maxInterfaceBytes bounds a .step.yaml file read for validation.
const maxInterfaceBytes = 1 << 20

// InterfaceResult is the validation of one step interface.
type InterfaceResult struct {
	Step     string            `json:"step"`
	Source   string            `json:"source,omitempty"`
	JobType  string            `json:"job_type,omitempty"`
	OK       bool              `json:"ok"`
	Errors   []finding.Finding `json:"errors"`
	Warnings []finding.Finding `json:"warnings"`
}

// InterfaceRequest names the interfaces to validate: exactly one of a
// catalog step, every catalog step, a file or directory in the workspace,
// inline YAML, or the documents of a call's step_types; JobType selects a
// variant.
type InterfaceRequest struct {
	StepName  string
	All       bool
	JobType   string
	Path      string
	YAML      string
	Documents []string
}

// InterfaceReport is the validation of every interface requested.
type InterfaceReport struct {
	Validated int               `json:"validated"`
	Errors    int               `json:"errors"`
	Warnings  int               `json:"warnings"`
	Results   []InterfaceResult `json:"results"`
	// Failed counts the interfaces with errors.
	Failed int `json:"-"`
}

// CheckInterfaces validates the interfaces req names.
func (s *Suite) CheckInterfaces(ctx context.Context, req InterfaceRequest) (*InterfaceReport, error) {
	given := 0
	for _, b := range []bool{req.StepName != "", req.All, req.Path != "", req.YAML != "", len(req.Documents) > 0} {
		if b {
			given++
		}
	}
	if given != 1 {
		return nil, inputErrorf("provide exactly one of 'step_name' (a canonical step name), 'all': true, 'path', 'yaml' or only 'step_types'")
	}
	var results []InterfaceResult
	switch {
	case req.All:
		for _, n := range s.Steps.Names() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			iface, _ := s.Steps.Get(n)
			results = append(results, s.CheckInterface(iface, req.JobType))
		}
	case req.StepName != "":
		iface, _, _, err := s.Step(req.StepName, "")
		if err != nil {
			return nil, err
		}
		results = append(results, s.CheckInterface(iface, req.JobType))
	case req.YAML != "":
		results = append(results, s.parseAndCheck(steps.InlineSource, "inline.step.yaml", []byte(req.YAML), req.JobType))
	case len(req.Documents) > 0:
		for i, doc := range req.Documents {
			results = append(results, s.checkDocument(steps.OverlaySource(i), doc, req.JobType))
		}
	default:
		files, err := s.interfaceFiles(req.Path)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			_, data, err := s.readLimited(f, maxInterfaceBytes)
			if err != nil {
				results = append(results, parseFailure(f, err))
				continue
			}
			results = append(results, s.parseAndCheck(f, f, data, req.JobType))
		}
	}
	rep := &InterfaceReport{Validated: len(results), Results: results}
	for _, r := range results {
		rep.Errors += len(r.Errors)
		rep.Warnings += len(r.Warnings)
		if !r.OK {
			rep.Failed++
		}
	}
	return rep, nil
}

// interfaceFiles is the file p names, or the .step.yaml files of the
// directory p names, as sorted names in Files.
func (s *Suite) interfaceFiles(p string) ([]string, error) {
	name, err := s.Root.FSPath(p)
	if err != nil {
		return nil, &PathError{Arg: "path", Err: err}
	}
	fsys := s.files()
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		if path.IsAbs(p) && errors.Is(err, fs.ErrNotExist) {
			// "Not found" would tell an absolute path inside the
			// workspace from one outside it.
			err = &workspace.FileError{Path: p, Reason: "does not exist"}
		}
		return nil, &PathError{Arg: "path", Err: err}
	}
	if !fi.IsDir() {
		return []string{name}, nil
	}
	entries, err := fs.ReadDir(fsys, name)
	if err != nil {
		return nil, &PathError{Arg: "path", Err: err}
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), steps.FileSuffix) {
			files = append(files, path.Join(name, e.Name()))
		}
	}
	if len(files) == 0 && path.IsAbs(p) {
		return nil, &PathError{Arg: "path", Err: &workspace.FileError{Path: p, Reason: "holds no " + steps.FileSuffix + " files"}}
	}
	if len(files) == 0 {
		return nil, &NotFoundError{Msg: fmt.Sprintf("'path': no %s files in %s", steps.FileSuffix, p)}
	}
	sort.Strings(files)
	return files, nil
}

// parseAndCheck parses data (named file) as an interface from source and
// validates it.
func (s *Suite) parseAndCheck(source, file string, data []byte, jobType string) InterfaceResult {
	iface, err := steps.Parse(file, data)
	if err != nil {
		return parseFailure(source, err)
	}
	iface.Source = source
	return s.CheckInterface(iface, jobType)
}

// checkDocument validates a document sent in a call: as a file, but
// without the file-name rule, since it has no file.
func (s *Suite) checkDocument(source, doc, jobType string) InterfaceResult {
	iface, err := steps.Parse(source, []byte(doc))
	if err != nil {
		return parseFailure(source, err)
	}
	r := s.CheckInterface(iface, jobType)
	r.Warnings = slices.DeleteFunc(r.Warnings, func(f finding.Finding) bool { return f.Rule == "file_name" })
	return r
}

func parseFailure(source string, err error) InterfaceResult {
	r := InterfaceResult{Step: "", Source: source, Errors: []finding.Finding{}, Warnings: []finding.Finding{}}
	var le *steps.LoadError
	if errors.As(err, &le) {
		r.Errors = append(r.Errors, le.Findings...)
	} else {
		r.Errors = append(r.Errors, finding.Finding{Level: finding.Error, File: source, Rule: "parse", Message: err.Error()})
	}
	return r
}

// CheckInterface validates one interface (with the jobType variant merged
// when given) and adds the catalog-level warning: a compatible source that
// is a case typo of a known step.
func (s *Suite) CheckInterface(iface *steps.Interface, jobType string) InterfaceResult {
	r := InterfaceResult{Step: iface.StepType, Source: iface.Source, JobType: jobType, Errors: []finding.Finding{}, Warnings: []finding.Finding{}}
	target := iface
	if jobType != "" {
		merged, warns, err := iface.WithJobType(jobType)
		if err != nil {
			r.Errors = append(r.Errors, finding.Finding{Level: finding.Error, Path: "variants." + jobType, Rule: "variant_merge", Message: err.Error()})
		} else {
			target = merged
			for _, w := range warns {
				r.Warnings = append(r.Warnings, finding.Finding{Level: finding.Warning, Path: "variants", Rule: "job_type", Message: w})
			}
		}
	}
	for _, f := range steps.Validate(target) {
		if f.Level == finding.Error {
			r.Errors = append(r.Errors, f)
		} else {
			r.Warnings = append(r.Warnings, f)
		}
	}
	r.Warnings = append(r.Warnings, s.sourceCaseTypos(iface.Source, target)...)
	r.OK = len(r.Errors) == 0
	return r
}

// sourceCaseTypos warns of compatible sources that match a catalog step
// only when case is ignored.
func (s *Suite) sourceCaseTypos(file string, iface *steps.Interface) []finding.Finding {
	lower := map[string]string{}
	for _, n := range s.Steps.Names() {
		lower[strings.ToLower(n)] = n
	}
	var out []finding.Finding
	for _, depName := range iface.Spec.Dependencies.Keys() {
		dep, _ := iface.Spec.Dependencies.Get(depName)
		for _, src := range dep.CompatibleSources {
			if _, known := s.Steps.Get(src); known {
				continue
			}
			if exact, ok := lower[strings.ToLower(src)]; ok {
				out = append(out, finding.Finding{Level: finding.Warning, File: file,
					Path: "spec.dependencies." + depName + ".compatible_sources", Rule: "compatible_source_case",
					Message: fmt.Sprintf("%q looks like a case typo of %q; compatible sources are matched exactly", src, exact)})
			}
		}
	}
	return out
}
