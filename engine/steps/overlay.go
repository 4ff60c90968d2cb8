package steps

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/cursus-dev/cursus/engine/finding"
)

// DocumentFindings are the findings of one document of an overlay; Index
// is its position in the list the caller sent.
type DocumentFindings struct {
	Index    int               `json:"index"`
	StepType string            `json:"step_type,omitempty"`
	Errors   []finding.Finding `json:"errors"`
	Warnings []finding.Finding `json:"warnings,omitempty"`
}

// OverlayError lists every document that cannot join an overlay. Nothing
// of the overlay is applied when it is returned.
type OverlayError struct {
	Documents []DocumentFindings
}

func (e *OverlayError) Error() string {
	parts := make([]string, 0, len(e.Documents))
	for _, d := range e.Documents {
		msg := OverlaySource(d.Index)
		if d.StepType != "" {
			msg += " (" + d.StepType + ")"
		}
		if len(d.Errors) > 0 {
			f := d.Errors[0]
			msg += ": "
			if f.Path != "" {
				msg += f.Path + " "
			}
			msg += fmt.Sprintf("[%s]: %s", f.Rule, f.Message)
			if n := len(d.Errors) - 1; n > 0 {
				msg += fmt.Sprintf(" (and %d more)", n)
			}
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

// OverlaySource is the Source of an interface sent in a call: the
// position of its document in the list.
func OverlaySource(index int) string { return fmt.Sprintf("step_types[%d]", index) }

// ParseDocuments parses and validates step interface documents sent in a
// call, with the rules validate.step_interface applies to a file (a
// document has no file name, so the file-name rule is not checked). It
// returns every interface, or an *OverlayError naming each failing
// document. Warnings of valid documents are returned alongside.
func ParseDocuments(ctx context.Context, docs []string) ([]*Interface, []DocumentFindings, error) {
	ifaces := make([]*Interface, 0, len(docs))
	var failed, warned []DocumentFindings
	for i, doc := range docs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		src := OverlaySource(i)
		iface, err := Parse(src, []byte(doc))
		if err != nil {
			df := DocumentFindings{Index: i, Errors: []finding.Finding{{Level: finding.Error, File: src, Rule: "parse", Message: err.Error()}}}
			if le, ok := err.(*LoadError); ok {
				df.Errors = le.Findings
			}
			failed = append(failed, df)
			continue
		}
		// Validate with no Source: the file-name rule needs a file.
		iface.Source = ""
		findings := Validate(iface)
		iface.Source = src
		df := DocumentFindings{Index: i, StepType: iface.StepType, Errors: []finding.Finding{}}
		for _, f := range findings {
			f.File = src
			if f.Level == finding.Error {
				df.Errors = append(df.Errors, f)
			} else {
				df.Warnings = append(df.Warnings, f)
			}
		}
		switch {
		case len(df.Errors) > 0:
			failed = append(failed, df)
		case len(df.Warnings) > 0:
			warned = append(warned, df)
		}
		ifaces = append(ifaces, iface)
	}
	if len(failed) > 0 {
		return nil, nil, &OverlayError{Documents: failed}
	}
	return ifaces, warned, nil
}

// Overlay returns a new catalog: c plus ifaces, each replacing the step of
// the same type. c is not modified, and the interfaces it shares with the
// result are immutable, so both stay safe for concurrent use. Two
// documents of one step type, or a step type that differs from an
// existing one only in case or punctuation, make an *OverlayError.
func (c *Catalog) Overlay(ifaces []*Interface) (*Catalog, error) {
	if len(ifaces) == 0 {
		return c, nil
	}
	out := &Catalog{ifaces: maps.Clone(c.ifaces), warnings: append([]finding.Finding(nil), c.warnings...)}
	var failed []DocumentFindings
	seen := map[string]int{}
	for i, iface := range ifaces {
		fail := func(rule, format string, args ...any) {
			failed = append(failed, DocumentFindings{Index: i, StepType: iface.StepType, Errors: []finding.Finding{{
				Level: finding.Error, File: iface.Source, Path: "step_type", Rule: rule, Message: fmt.Sprintf(format, args...)}}})
		}
		if prev, ok := seen[iface.StepType]; ok {
			fail("duplicate_step_type", "step %s is already sent as %s", iface.StepType, OverlaySource(prev))
			continue
		}
		seen[iface.StepType] = i
		if clash := out.keyClash(iface.StepType); clash != "" {
			fail("canonical_key_clash", "step %s differs from existing step %s only in case or punctuation; rename it or use %s to override", iface.StepType, clash, clash)
			continue
		}
		if prev, ok := out.ifaces[iface.StepType]; ok {
			out.warnings = append(out.warnings, finding.Finding{File: iface.Source, Path: "step_type", Rule: "override",
				Message: fmt.Sprintf("overrides %s from %s for this call", iface.StepType, prev.Source)})
		}
		out.ifaces[iface.StepType] = iface
	}
	if len(failed) > 0 {
		return nil, &OverlayError{Documents: failed}
	}
	out.index()
	return out, nil
}

// Text is the interface file as written (nil for one built in code): an
// exemplar of the format.
func (i *Interface) Text() []byte { return i.text }
