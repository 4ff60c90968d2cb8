package validate

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// ScriptAnalysis is what a step script reads and declares, found without
// running it. Every item carries the 1-based line it appears on.
type ScriptAnalysis struct {
	File string `json:"file"`
	// Main is the module-level main() function, nil when absent.
	Main *MainFunc `json:"main,omitempty"`
	// EnvReads are environment variables the script reads.
	EnvReads []EnvRead `json:"env_reads"`
	// Arguments are argparse flags declared with add_argument.
	Arguments []ArgDecl `json:"arguments"`
	// DynamicArguments is true when some add_argument call has a
	// non-literal flag, so the flag set is not fully known.
	DynamicArguments bool `json:"dynamic_arguments"`
	// UsesArgparse is true when the script constructs an ArgumentParser.
	UsesArgparse bool `json:"uses_argparse"`
	// JobArgReads are attributes read from main's job_args parameter.
	JobArgReads []NameUse `json:"job_arg_reads"`
	// ContainerPaths are string literals under /opt/ml/.
	ContainerPaths []PathLiteral `json:"container_paths"`
	// InputNames, OutputNames are the logical names read from main's
	// input_paths / output_paths parameters (or variables of those names).
	InputNames  []NameUse `json:"input_names"`
	OutputNames []NameUse `json:"output_names"`
	// EnvironNames are keys read from main's environ_vars parameter.
	EnvironNames []NameUse `json:"environ_names"`
}

// MainFunc is the entry point signature.
type MainFunc struct {
	Line   int      `json:"line"`
	Params []string `json:"params"`
}

// ExpectedMainParams is the entry point every Cursus step script exposes.
var ExpectedMainParams = []string{"input_paths", "output_paths", "environ_vars", "job_args"}

// HasExpectedSignature reports whether main takes exactly the four
// conventional parameters in order.
func (m *MainFunc) HasExpectedSignature() bool {
	if m == nil || len(m.Params) != len(ExpectedMainParams) {
		return false
	}
	for i, p := range m.Params {
		if p != ExpectedMainParams[i] {
			return false
		}
	}
	return true
}

// EnvRead is one read of an environment variable.
type EnvRead struct {
	Name string `json:"name"`
	Line int    `json:"line"`
	// Form is how it is read: os.environ[], os.environ.get, os.getenv,
	// "in os.environ" or environ_vars.
	Form string `json:"form"`
	// HasDefault is true for .get / getenv calls with a second argument.
	HasDefault bool `json:"has_default"`
	// Harvested is true for a module-level read inside a dict literal (the
	// `environ_vars = {...}` idiom): the value is collected, not consumed.
	Harvested bool `json:"harvested"`
}

// ArgDecl is one add_argument call.
type ArgDecl struct {
	Flags []string `json:"flags"`
	Line  int      `json:"line"`
}

// NameUse is a name read at a line.
type NameUse struct {
	Name string `json:"name"`
	Line int    `json:"line"`
}

// PathLiteral is a container path literal; for an f-string, Path is the
// literal text before the first replacement field.
type PathLiteral struct {
	Path string `json:"path"`
	Line int    `json:"line"`
}

// HasFlag reports whether an add_argument declares flag (normalised).
func (a *ScriptAnalysis) HasFlag(flag string) bool {
	want := steps.NormalizeFlag(flag)
	for _, d := range a.Arguments {
		for _, f := range d.Flags {
			if steps.NormalizeFlag(f) == want {
				return true
			}
		}
	}
	return false
}

// EnvNames returns the sorted set of environment variable names read
// (harvested reads included).
func (a *ScriptAnalysis) EnvNames() []string {
	set := map[string]bool{}
	for _, r := range a.EnvReads {
		set[r.Name] = true
	}
	for _, r := range a.EnvironNames {
		set[r.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// compoundKeywords start a statement that must carry a ':' at bracket
// depth zero.
var compoundKeywords = map[string]bool{
	"def": true, "class": true, "if": true, "elif": true, "else": true, "while": true,
	"for": true, "try": true, "except": true, "finally": true, "with": true,
}

// AnalyzeScript tokenizes Python source and extracts what a step script
// reads. A source Python would refuse to parse is a *ScriptAnalysisError.
// It reads token patterns, not a syntax tree: no pure-Go Python 3 parser
// exists (see the package doc).
//
// It stops with ctx's error when ctx ends.
func AnalyzeScript(ctx context.Context, file string, src []byte) (*ScriptAnalysis, error) {
	lines, err := tokenize(ctx, file, src)
	if err != nil {
		return nil, err
	}
	if err := checkStructure(file, lines); err != nil {
		return nil, err
	}
	a := &ScriptAnalysis{File: file, EnvReads: []EnvRead{}, Arguments: []ArgDecl{}, JobArgReads: []NameUse{},
		ContainerPaths: []PathLiteral{}, InputNames: []NameUse{}, OutputNames: []NameUse{}, EnvironNames: []NameUse{}}

	// Find main first: its parameter names say which variables carry the
	// logical names.
	for _, ll := range lines {
		if ll.Indent != 0 {
			continue
		}
		t := ll.Tokens
		if len(t) > 0 && t[0].is(tokName, "async") {
			t = t[1:]
		}
		if len(t) >= 3 && t[0].is(tokName, "def") && t[1].is(tokName, "main") && t[2].is(tokOp, "(") {
			a.Main = &MainFunc{Line: ll.Line, Params: paramNames(t[3:])}
		}
	}
	roles := map[string]string{"input_paths": "input", "output_paths": "output", "environ_vars": "environ", "job_args": "job_args"}
	if a.Main != nil {
		for i, p := range a.Main.Params {
			if i < len(ExpectedMainParams) {
				roles[p] = map[int]string{0: "input", 1: "output", 2: "environ", 3: "job_args"}[i]
			}
		}
	}

	type funcScope struct {
		indent int
		name   string
	}
	var scopes []funcScope
	for i, ll := range lines {
		if err := pollCtx(ctx, i); err != nil {
			return nil, err
		}
		for len(scopes) > 0 && ll.Indent <= scopes[len(scopes)-1].indent {
			scopes = scopes[:len(scopes)-1]
		}
		t := ll.Tokens
		head := t
		if len(head) > 0 && head[0].is(tokName, "async") {
			head = head[1:]
		}
		if len(head) >= 2 && head[0].is(tokName, "def") {
			scopes = append(scopes, funcScope{indent: ll.Indent, name: head[1].Text})
		}
		inFunction := len(scopes) > 0
		a.scanLine(t, inFunction, roles)
	}
	return a, nil
}

// pollCtx reports ctx's error on every 1024th iteration i: the tokenizer's
// and scanner's steps are a few nanoseconds each, less than a check.
func pollCtx(ctx context.Context, i int) error {
	if i%1024 != 0 {
		return nil
	}
	return ctx.Err()
}

// paramNames reads parameter names from the tokens after "def main(".
func paramNames(t []token) []string {
	var names []string
	depth := 0
	expectName := true
	for _, tk := range t {
		if tk.Kind == tokOp {
			switch tk.Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return names
				}
				depth--
			case ",":
				if depth == 0 {
					expectName = true
				}
			}
			continue
		}
		if depth == 0 && expectName && tk.Kind == tokName {
			names = append(names, tk.Text)
			expectName = false
		}
	}
	return names
}

// scanLine extracts reads from one logical line.
func (a *ScriptAnalysis) scanLine(t []token, inFunction bool, roles map[string]string) {
	ls := &lineScan{a: a, t: t, inFunction: inFunction, roles: roles}
	for i, tk := range t {
		switch tk.Kind {
		case tokOp:
			ls.bracket(tk.Text)
		case tokString:
			ls.stringLit(i)
		case tokName:
			ls.name(i)
		}
	}
}

// lineScan is the state of scanning one logical line: its tokens and the
// brackets open at the current token.
type lineScan struct {
	a          *ScriptAnalysis
	t          []token
	inFunction bool
	roles      map[string]string
	brackets   []string
}

// at reports whether token i is kind with text.
func (ls *lineScan) at(i int, kind tokKind, text string) bool {
	return i < len(ls.t) && ls.t[i].is(kind, text)
}

// str is the value of token i when it is a plain string literal (not an
// f-string or bytes).
func (ls *lineScan) str(i int) (string, bool) {
	if i < len(ls.t) && ls.t[i].Kind == tokString && !strings.Contains(ls.t[i].Prefix, "f") && !strings.Contains(ls.t[i].Prefix, "b") {
		return ls.t[i].Value, true
	}
	return "", false
}

// callHasSecondArg reports whether the call whose '(' is at open has a
// comma at its own depth.
func (ls *lineScan) callHasSecondArg(open int) bool {
	depth := 0
	for j := open; j < len(ls.t); j++ {
		if ls.t[j].Kind != tokOp {
			continue
		}
		switch ls.t[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return false
			}
		case ",":
			if depth == 1 {
				return true
			}
		}
	}
	return false
}

// harvested reports whether the current token sits inside a {…} at module
// level (a dict of settings read once at import).
func (ls *lineScan) harvested() bool {
	return !ls.inFunction && slices.Contains(ls.brackets, "{")
}

func (ls *lineScan) addEnv(name string, line int, form string, def bool) {
	ls.a.EnvReads = append(ls.a.EnvReads, EnvRead{Name: name, Line: line, Form: form, HasDefault: def, Harvested: ls.harvested()})
}

// bracket tracks the brackets an operator opens or closes.
func (ls *lineScan) bracket(op string) {
	switch op {
	case "(", "[", "{":
		ls.brackets = append(ls.brackets, op)
	case ")", "]", "}":
		if len(ls.brackets) > 0 {
			ls.brackets = ls.brackets[:len(ls.brackets)-1]
		}
	}
}

// stringLit records a container path literal and `"NAME" in os.environ`.
func (ls *lineScan) stringLit(i int) {
	tk := ls.t[i]
	v := tk.Value
	if strings.Contains(tk.Prefix, "f") {
		if k := strings.Index(v, "{}"); k >= 0 {
			v = v[:k]
		}
	}
	if v == "/opt/ml" || strings.HasPrefix(v, "/opt/ml/") {
		ls.a.ContainerPaths = append(ls.a.ContainerPaths, PathLiteral{Path: v, Line: tk.Line})
	}
	name, ok := ls.str(i)
	if !ok || !ls.at(i+1, tokName, "in") {
		return
	}
	j := i + 2
	if ls.at(j, tokName, "os") && ls.at(j+1, tokOp, ".") {
		j += 2
	}
	if ls.at(j, tokName, "environ") && !ls.at(j+1, tokOp, ".") {
		ls.addEnv(name, tk.Line, "in os.environ", false)
	}
}

// name dispatches a name token to the read it may start.
func (ls *lineScan) name(i int) {
	text := ls.t[i].Text
	prevDot := i > 0 && ls.t[i-1].is(tokOp, ".")
	fromOS := !prevDot || (i >= 2 && ls.t[i-2].is(tokName, "os"))
	switch {
	case text == "environ" && fromOS:
		ls.environ(i)
	case text == "getenv" && fromOS:
		ls.getenv(i)
	case text == "add_argument" && prevDot && ls.at(i+1, tokOp, "("):
		ls.addArgument(i)
	case text == "ArgumentParser" && ls.at(i+1, tokOp, "("):
		ls.a.UsesArgparse = true
	case !prevDot && ls.roles[text] != "":
		ls.roleRead(i, ls.roles[text])
	}
}

// environ reads os.environ["X"], os.environ.get("X"[, d]) and
// os.environ.setdefault, or environ[...] after `from os import environ`.
func (ls *lineScan) environ(i int) {
	line := ls.t[i].Line
	switch {
	case ls.at(i+1, tokOp, "["):
		if name, ok := ls.str(i + 2); ok && ls.at(i+3, tokOp, "]") {
			ls.addEnv(name, line, "os.environ[]", false)
		}
	case ls.at(i+1, tokOp, ".") && (ls.at(i+2, tokName, "get") || ls.at(i+2, tokName, "setdefault")) && ls.at(i+3, tokOp, "("):
		if name, ok := ls.str(i + 4); ok {
			ls.addEnv(name, line, "os.environ.get", ls.callHasSecondArg(i+3))
		}
	}
}

// getenv reads os.getenv("X"[, d]).
func (ls *lineScan) getenv(i int) {
	if !ls.at(i+1, tokOp, "(") {
		return
	}
	if name, ok := ls.str(i + 2); ok {
		ls.addEnv(name, ls.t[i].Line, "os.getenv", ls.callHasSecondArg(i+1))
	}
}

// addArgument records an add_argument(...) call whose '(' follows i: its
// literal flags, a positional argument's name, or that a flag is computed.
func (ls *lineScan) addArgument(i int) {
	var flags []string
	for j := i + 2; ; j += 2 {
		s, ok := ls.str(j)
		if !ok || !strings.HasPrefix(s, "-") {
			break
		}
		flags = append(flags, s)
		if !ls.at(j+1, tokOp, ",") {
			break
		}
	}
	if len(flags) == 0 {
		first, ok := ls.str(i + 2)
		if !ok {
			// A non-literal first argument: the flag is computed.
			ls.a.DynamicArguments = true
			return
		}
		// A positional argument: record its name.
		flags = []string{first}
	}
	ls.a.Arguments = append(ls.a.Arguments, ArgDecl{Flags: flags, Line: ls.t[i].Line})
}

// roleRead records a logical name read through one of main's parameters
// (input_paths["x"], output_paths.get("x"), environ_vars[...]) or an
// attribute of job_args.
func (ls *lineScan) roleRead(i int, role string) {
	line := ls.t[i].Line
	var name string
	var ok bool
	switch {
	case role == "job_args" && ls.at(i+1, tokOp, ".") && i+2 < len(ls.t) && ls.t[i+2].Kind == tokName:
		ls.a.JobArgReads = append(ls.a.JobArgReads, NameUse{Name: ls.t[i+2].Text, Line: line})
		return
	case ls.at(i+1, tokOp, "["):
		name, ok = ls.str(i + 2)
		ok = ok && ls.at(i+3, tokOp, "]")
	case ls.at(i+1, tokOp, ".") && ls.at(i+2, tokName, "get") && ls.at(i+3, tokOp, "("):
		name, ok = ls.str(i + 4)
	}
	if !ok {
		return
	}
	use := NameUse{Name: name, Line: line}
	switch role {
	case "input":
		ls.a.InputNames = append(ls.a.InputNames, use)
	case "output":
		ls.a.OutputNames = append(ls.a.OutputNames, use)
	case "environ":
		ls.a.EnvironNames = append(ls.a.EnvironNames, use)
	}
}

// checkStructure applies the indentation and compound-statement rules.
func checkStructure(file string, lines []logicalLine) error {
	fail := func(line int, msg string) error {
		return &ScriptAnalysisError{File: file, Line: line, Message: msg}
	}
	stack := []int{0}
	expectIndent := false
	expectLine := 0
	for _, ll := range lines {
		top := stack[len(stack)-1]
		switch {
		case expectIndent:
			if ll.Indent <= top {
				return fail(ll.Line, "expected an indented block after the statement on line "+strconv.Itoa(expectLine))
			}
			stack = append(stack, ll.Indent)
		case ll.Indent > top:
			return fail(ll.Line, "unexpected indent")
		case ll.Indent < top:
			for len(stack) > 0 && stack[len(stack)-1] > ll.Indent {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 || stack[len(stack)-1] != ll.Indent {
				return fail(ll.Line, "unindent does not match any outer indentation level")
			}
		}
		expectIndent = false

		t := ll.Tokens
		if len(t) > 0 && t[0].is(tokName, "async") {
			t = t[1:]
		}
		if len(t) == 0 {
			continue
		}
		kw := t[0]
		if kw.Kind == tokName && compoundKeywords[kw.Text] {
			colon := topLevelColon(t)
			if colon < 0 {
				return fail(kw.Line, "expected ':' in '"+kw.Text+"' statement")
			}
			if (kw.Text == "def" || kw.Text == "class") && (len(t) < 2 || t[1].Kind != tokName) {
				return fail(kw.Line, "invalid syntax: '"+kw.Text+"' must be followed by a name")
			}
			if kw.Text == "def" && (len(t) < 3 || !t[2].is(tokOp, "(")) {
				return fail(kw.Line, "invalid syntax: expected '(' after the function name")
			}
			if colon == len(t)-1 {
				expectIndent = true
				expectLine = kw.Line
			}
		}
	}
	if expectIndent {
		return fail(expectLine, "expected an indented block at end of file")
	}
	return nil
}

// topLevelColon returns the index of the first ':' at bracket depth zero
// that is not part of a lambda, or -1.
func topLevelColon(t []token) int {
	depth, lambdas := 0, 0
	for i, tk := range t {
		if tk.is(tokName, "lambda") && depth == 0 {
			lambdas++
			continue
		}
		if tk.Kind != tokOp {
			continue
		}
		switch tk.Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ":":
			if depth == 0 {
				if lambdas > 0 {
					lambdas--
					continue
				}
				return i
			}
		}
	}
	return -1
}
