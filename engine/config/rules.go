package config

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// A derived field's rule is a small expression:
//
//	expr  = ident | "string" | call
//	call  = func "(" [expr {"," expr}] ")"
//
// Identifiers name fields of the schema or the pseudo-variables step_type,
// step_snake and config_class. Functions:
//
//	aws_region(r)        NA → us-east-1, EU → eu-west-1, FE → us-west-2; AWS names pass through
//	format("…{f}…")      substitutes fields into a template
//	s3_join(a, b, …)     joins S3 URI parts with single slashes
//	path_join(a, b, …)   s3_join for s3:// roots, a cleaned relative path otherwise
//	first_set(a, b, …)   the first value that is set (not null, not "")
//	choose(c, a, b)      a when the boolean c is true, else b
//
// A rule whose inputs are not set yields null.
type expr interface {
	eval(env func(string) any) any
	check(known func(string) bool) error
	idents(acc []string) []string
}

var pseudoVars = map[string]bool{"step_type": true, "step_snake": true, "config_class": true}

// cursusRegions maps the Cursus region codes to AWS region names.
var cursusRegions = map[string]string{"NA": "us-east-1", "EU": "eu-west-1", "FE": "us-west-2"}

// RegionCodes are the Cursus region codes, sorted.
func RegionCodes() []string { return slices.Sorted(maps.Keys(cursusRegions)) }

type identExpr string
type stringExpr string
type callExpr struct {
	fn   string
	args []expr
}

func (e identExpr) eval(env func(string) any) any { return env(string(e)) }
func (e identExpr) check(known func(string) bool) error {
	if !known(string(e)) {
		return fmt.Errorf("unknown field %q", string(e))
	}
	return nil
}
func (e identExpr) idents(acc []string) []string { return append(acc, string(e)) }

func (e stringExpr) eval(func(string) any) any     { return string(e) }
func (e stringExpr) check(func(string) bool) error { return nil }
func (e stringExpr) idents(acc []string) []string  { return acc }

type ruleFunc struct {
	minArgs, maxArgs int // maxArgs < 0: unbounded
	call             func(args []any) any
}

var ruleFuncs = map[string]ruleFunc{
	"aws_region": {1, 1, func(a []any) any {
		r, ok := a[0].(string)
		if !ok {
			return nil
		}
		if aws, ok := cursusRegions[r]; ok {
			return aws
		}
		return r
	}},
	"format": {1, 1, nil}, // evaluated specially: the template names fields
	"s3_join": {1, -1, func(a []any) any {
		parts, ok := strs(a)
		if !ok {
			return nil
		}
		return s3Join(parts)
	}},
	"path_join": {1, -1, func(a []any) any {
		parts, ok := strs(a)
		if !ok {
			return nil
		}
		if strings.HasPrefix(parts[0], "s3://") {
			return s3Join(parts)
		}
		return path.Join(parts...)
	}},
	"first_set": {1, -1, func(a []any) any {
		for _, v := range a {
			if s, ok := v.(string); ok && s == "" {
				continue
			}
			if v != nil {
				return v
			}
		}
		return nil
	}},
	"choose": {3, 3, func(a []any) any {
		c, ok := a[0].(bool)
		if !ok {
			return nil
		}
		if c {
			return a[1]
		}
		return a[2]
	}},
}

func strs(a []any) ([]string, bool) {
	out := make([]string, len(a))
	for i, v := range a {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func s3Join(parts []string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(parts[0], "/"))
	for _, p := range parts[1:] {
		p = strings.Trim(p, "/")
		if p == "" {
			continue
		}
		b.WriteByte('/')
		b.WriteString(p)
	}
	return b.String()
}

func (e *callExpr) eval(env func(string) any) any {
	if e.fn == "format" {
		return formatTemplate(string(e.args[0].(stringExpr)), env)
	}
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = a.eval(env)
	}
	return ruleFuncs[e.fn].call(args)
}

func (e *callExpr) check(known func(string) bool) error {
	f, ok := ruleFuncs[e.fn]
	if !ok {
		return fmt.Errorf("unknown function %q (known: %s)", e.fn, strings.Join(slices.Sorted(maps.Keys(ruleFuncs)), ", "))
	}
	if len(e.args) < f.minArgs || (f.maxArgs >= 0 && len(e.args) > f.maxArgs) {
		return fmt.Errorf("%s takes %s", e.fn, arity(f))
	}
	if e.fn == "format" {
		tmpl, ok := e.args[0].(stringExpr)
		if !ok {
			return fmt.Errorf("format needs a string literal template")
		}
		for _, id := range templateFields(string(tmpl)) {
			if !known(id) {
				return fmt.Errorf("format template names unknown field %q", id)
			}
		}
		return nil
	}
	for _, a := range e.args {
		if err := a.check(known); err != nil {
			return err
		}
	}
	return nil
}

func (e *callExpr) idents(acc []string) []string {
	if e.fn == "format" {
		if t, ok := e.args[0].(stringExpr); ok {
			return append(acc, templateFields(string(t))...)
		}
	}
	for _, a := range e.args {
		acc = a.idents(acc)
	}
	return acc
}

func arity(f ruleFunc) string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d argument(s)", f.minArgs)
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("exactly %d argument(s)", f.minArgs)
	}
	return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
}

func templateFields(t string) []string {
	var out []string
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, t[i+1:i+j])
		t = t[i+j+1:]
	}
}

func formatTemplate(t string, env func(string) any) any {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i])
		v := env(t[i+1 : i+j])
		if v == nil {
			return nil
		}
		if s, ok := v.(string); ok {
			b.WriteString(s)
		} else {
			fmt.Fprint(&b, v)
		}
		t = t[i+j+1:]
	}
}

// parseRule parses a rule expression.
func parseRule(src string) (expr, error) {
	p := &ruleParser{src: src}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("unexpected %q at offset %d", p.src[p.pos:], p.pos)
	}
	return e, nil
}

type ruleParser struct {
	src   string
	pos   int
	depth int
}

func (p *ruleParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *ruleParser) expr() (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 16 {
		return nil, fmt.Errorf("rule nests too deeply")
	}
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil, fmt.Errorf("unexpected end of rule")
	}
	c := p.src[p.pos]
	if c == '"' || c == '\'' {
		end := strings.IndexByte(p.src[p.pos+1:], c)
		if end < 0 {
			return nil, fmt.Errorf("unterminated string at offset %d", p.pos)
		}
		s := p.src[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return stringExpr(s), nil
	}
	start := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	if start == p.pos {
		return nil, fmt.Errorf("unexpected %q at offset %d", string(c), p.pos)
	}
	name := p.src[start:p.pos]
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return identExpr(name), nil
	}
	p.pos++
	call := &callExpr{fn: name}
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ')' {
		p.pos++
		return call, nil
	}
	for {
		a, err := p.expr()
		if err != nil {
			return nil, err
		}
		call.args = append(call.args, a)
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil, fmt.Errorf("missing ) after arguments of %s", name)
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return call, nil
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d", string(p.src[p.pos]), p.pos)
		}
	}
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}
