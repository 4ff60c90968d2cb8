// Package validate checks step scripts, interfaces and configs against
// each other without running anything: a script against its contract
// (static analysis), a contract against its config, a dependency against
// the catalog's outputs, a builder against its config. Running a script is
// engine/scriptrun's.
//
// Python scripts are analysed statically by a small tokenizer written
// here because no pure-Go library tokenizes current Python 3: gpython's
// lexer stops at the 3.4 grammar (no f-strings), and tree-sitter's Python
// grammar needs cgo. Calling a Python interpreter instead would make a
// read-only check depend on the host. The tokenizer follows the Python
// lexical rules that matter for finding names and literals (comments,
// every string form including triple-quoted and f-strings, explicit and
// implicit line joining, indentation) and reports the structural errors a
// Python parser would reject first (unterminated strings, unbalanced
// brackets, bad indentation, a compound statement without its colon,
// characters that are never valid).
package validate

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ScriptAnalysisError is a script that could not be tokenized; Line is
// 1-based.
type ScriptAnalysisError struct {
	File    string
	Line    int
	Message string
}

func (e *ScriptAnalysisError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
}

type tokKind int

const (
	tokName tokKind = iota
	tokString
	tokNumber
	tokOp
)

// token is one lexical token. For strings, Value is the decoded literal
// text (escape sequences other than quotes and backslashes kept as
// written; f-string replacement fields collapsed to "{}") and Prefix holds
// the lowercased string prefix letters.
type token struct {
	Kind   tokKind
	Text   string
	Value  string
	Prefix string
	Line   int
}

func (t token) is(kind tokKind, text string) bool { return t.Kind == kind && t.Text == text }

// logicalLine is one Python logical line: its tokens, its indentation width
// and the physical line it starts on.
type logicalLine struct {
	Tokens []token
	Indent int
	Line   int
}

type lexer struct {
	src  string
	pos  int
	line int
	file string
}

func (lx *lexer) fail(line int, format string, args ...any) error {
	return &ScriptAnalysisError{File: lx.file, Line: line, Message: fmt.Sprintf(format, args...)}
}

// threeCharOps and twoCharOps are Python's multi-character operators.
var threeCharOps = []string{"**=", "//=", ">>=", "<<=", "..."}
var twoCharOps = []string{"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="}

const singleCharOps = "+-*/%@&|^~<>()[]{},:;.="

// tokenize splits Python source into logical lines. A script may be
// megabytes long, so it stops with ctx's error when ctx ends.
func tokenize(ctx context.Context, file string, src []byte) ([]logicalLine, error) {
	if !utf8.Valid(src) {
		return nil, &ScriptAnalysisError{File: file, Line: 1, Message: "source is not valid UTF-8"}
	}
	lx := &lexer{src: strings.ReplaceAll(strings.ReplaceAll(string(src), "\r\n", "\n"), "\r", "\n"), line: 1, file: file}
	lx.src = strings.TrimPrefix(lx.src, "\ufeff")

	var (
		lines    []logicalLine
		cur      *logicalLine
		brackets []token // open brackets with their lines
	)
	atLineStart := true
	for iter := 0; lx.pos < len(lx.src); iter++ {
		if err := pollCtx(ctx, iter); err != nil {
			return nil, err
		}
		if atLineStart && len(brackets) == 0 && cur == nil {
			// Measure indentation of a new logical line.
			indent, p := 0, lx.pos
			for p < len(lx.src) && (lx.src[p] == ' ' || lx.src[p] == '\t' || lx.src[p] == '\f') {
				switch lx.src[p] {
				case ' ':
					indent++
				case '\t':
					indent = (indent/8 + 1) * 8
				case '\f':
					indent = 0
				}
				p++
			}
			lx.pos = p
			atLineStart = false
			if p >= len(lx.src) {
				break
			}
			if c := lx.src[p]; c == '\n' || c == '#' {
				// Blank or comment-only lines do not start a logical line.
				if c == '#' {
					lx.skipComment()
				}
				if lx.pos < len(lx.src) {
					lx.pos++
					lx.line++
				}
				atLineStart = true
				continue
			}
			if c := lx.src[p]; c == '\\' && p+1 < len(lx.src) && lx.src[p+1] == '\n' {
				lx.pos += 2
				lx.line++
				atLineStart = true
				continue
			}
			cur = &logicalLine{Indent: indent, Line: lx.line}
		}
		c := lx.src[lx.pos]
		switch {
		case c == '\n':
			lx.pos++
			lx.line++
			atLineStart = true
			if len(brackets) == 0 && cur != nil {
				lines = append(lines, *cur)
				cur = nil
			}
			continue
		case c == ' ' || c == '\t' || c == '\f':
			lx.pos++
			continue
		case c == '#':
			lx.skipComment()
			continue
		case c == '\\':
			if lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '\n' {
				lx.pos += 2
				lx.line++
				continue
			}
			if lx.pos+1 >= len(lx.src) {
				return nil, lx.fail(lx.line, "unexpected end of file after line continuation character")
			}
			return nil, lx.fail(lx.line, "unexpected character after line continuation character")
		}
		if cur == nil {
			cur = &logicalLine{Line: lx.line}
		}

		tok, err := lx.next()
		if err != nil {
			return nil, err
		}
		if tok.Kind == tokOp {
			switch tok.Text {
			case "(", "[", "{":
				brackets = append(brackets, tok)
			case ")", "]", "}":
				if len(brackets) == 0 {
					return nil, lx.fail(tok.Line, "unmatched '%s'", tok.Text)
				}
				open := brackets[len(brackets)-1]
				if closerOf(open.Text) != tok.Text {
					return nil, lx.fail(tok.Line, "closing parenthesis '%s' does not match opening parenthesis '%s' on line %d", tok.Text, open.Text, open.Line)
				}
				brackets = brackets[:len(brackets)-1]
			}
		}
		cur.Tokens = append(cur.Tokens, tok)
	}
	if len(brackets) > 0 {
		open := brackets[len(brackets)-1]
		return nil, lx.fail(open.Line, "'%s' was never closed", open.Text)
	}
	if cur != nil && len(cur.Tokens) > 0 {
		lines = append(lines, *cur)
	}
	return lines, nil
}

func closerOf(open string) string {
	switch open {
	case "(":
		return ")"
	case "[":
		return "]"
	}
	return "}"
}

func (lx *lexer) skipComment() {
	for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
		lx.pos++
	}
}

// next reads one token at lx.pos (not whitespace, newline or comment).
func (lx *lexer) next() (token, error) {
	start := lx.pos
	r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
	switch {
	case r == '_' || unicode.IsLetter(r):
		p := lx.pos + size
		for p < len(lx.src) {
			r2, s2 := utf8.DecodeRuneInString(lx.src[p:])
			if r2 != '_' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) && !unicode.Is(unicode.Mn, r2) && !unicode.Is(unicode.Mc, r2) {
				break
			}
			p += s2
		}
		word := lx.src[start:p]
		if p < len(lx.src) && (lx.src[p] == '\'' || lx.src[p] == '"') && isStringPrefix(word) {
			lx.pos = p
			return lx.readString(strings.ToLower(word))
		}
		lx.pos = p
		return token{Kind: tokName, Text: word, Line: lx.line}, nil
	case r == '\'' || r == '"':
		return lx.readString("")
	case r >= '0' && r <= '9', r == '.' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] >= '0' && lx.src[lx.pos+1] <= '9':
		p := lx.pos + 1
		for p < len(lx.src) {
			ch := lx.src[p]
			if ch == '_' || ch == '.' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') {
				p++
				continue
			}
			if (ch == '+' || ch == '-') && (lx.src[p-1] == 'e' || lx.src[p-1] == 'E') && !strings.HasPrefix(strings.ToLower(lx.src[start:p]), "0x") {
				p++
				continue
			}
			break
		}
		lx.pos = p
		return token{Kind: tokNumber, Text: lx.src[start:p], Line: lx.line}, nil
	}
	for _, op := range threeCharOps {
		if strings.HasPrefix(lx.src[lx.pos:], op) {
			lx.pos += 3
			return token{Kind: tokOp, Text: op, Line: lx.line}, nil
		}
	}
	for _, op := range twoCharOps {
		if strings.HasPrefix(lx.src[lx.pos:], op) {
			lx.pos += 2
			return token{Kind: tokOp, Text: op, Line: lx.line}, nil
		}
	}
	if r < utf8.RuneSelf && strings.IndexByte(singleCharOps, byte(r)) >= 0 {
		lx.pos++
		return token{Kind: tokOp, Text: string(r), Line: lx.line}, nil
	}
	return token{}, lx.fail(lx.line, "invalid character %q in source", r)
}

func isStringPrefix(word string) bool {
	switch strings.ToLower(word) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf":
		return true
	}
	return false
}

// readString reads a string literal starting at the quote at lx.pos.
func (lx *lexer) readString(prefix string) (token, error) {
	startLine := lx.line
	quote := lx.src[lx.pos]
	triple := strings.HasPrefix(lx.src[lx.pos:], strings.Repeat(string(quote), 3))
	delim := string(quote)
	if triple {
		delim = strings.Repeat(string(quote), 3)
	}
	lx.pos += len(delim)
	raw := strings.Contains(prefix, "r")
	fstr := strings.Contains(prefix, "f")
	var val strings.Builder
	for {
		if lx.pos >= len(lx.src) {
			if triple {
				return token{}, lx.fail(startLine, "unterminated triple-quoted string literal")
			}
			return token{}, lx.fail(startLine, "unterminated string literal")
		}
		c := lx.src[lx.pos]
		switch {
		case strings.HasPrefix(lx.src[lx.pos:], delim):
			lx.pos += len(delim)
			return token{Kind: tokString, Text: prefix + delim, Value: val.String(), Prefix: prefix, Line: startLine}, nil
		case c == '\n':
			if !triple {
				return token{}, lx.fail(startLine, "unterminated string literal")
			}
			val.WriteByte('\n')
			lx.pos++
			lx.line++
		case c == '\\':
			if lx.pos+1 >= len(lx.src) {
				lx.pos++
				continue
			}
			n := lx.src[lx.pos+1]
			if n == '\n' {
				lx.line++
				if raw {
					val.WriteString("\\\n")
				}
			} else if !raw && (n == '\\' || n == '\'' || n == '"') {
				val.WriteByte(n)
			} else {
				val.WriteByte('\\')
				val.WriteByte(n)
			}
			lx.pos += 2
		case fstr && c == '{':
			if strings.HasPrefix(lx.src[lx.pos:], "{{") {
				val.WriteByte('{')
				lx.pos += 2
				continue
			}
			if err := lx.skipReplacementField(startLine); err != nil {
				return token{}, err
			}
			val.WriteString("{}")
		case fstr && c == '}':
			if strings.HasPrefix(lx.src[lx.pos:], "}}") {
				val.WriteByte('}')
				lx.pos += 2
				continue
			}
			return token{}, lx.fail(lx.line, "f-string: single '}' is not allowed")
		default:
			val.WriteByte(c)
			lx.pos++
		}
	}
}

// skipReplacementField skips an f-string `{expr[!conv][:spec]}` starting at
// the '{', honouring nested brackets and nested strings (which Python 3.12
// allows to reuse the outer quote).
func (lx *lexer) skipReplacementField(stringLine int) error {
	lx.pos++ // '{'
	depth := 1
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch c {
		case '{', '[', '(':
			depth++
			lx.pos++
		case '}', ']', ')':
			depth--
			lx.pos++
			if depth == 0 {
				return nil
			}
		case '\'', '"':
			if _, err := lx.readString(""); err != nil {
				return err
			}
		case '\n':
			lx.line++
			lx.pos++
		default:
			lx.pos++
		}
	}
	return lx.fail(stringLine, "f-string: expecting '}'")
}
