package registry

import (
	"strings"
	"unicode"
)

// The lean listing is how a tool appears in a default MCP tools/list: what
// a model needs to pick the tool and form a valid call, in about a third
// of the bytes of the full rendering. Every agent session pays for the
// list before its first call; the rest (examples, property descriptions,
// string and array limits, patterns, the output schema) is served by
// tools.describe_tool and <ns>.help, and the server still validates every
// call against the full schema, naming the violated keyword.

// Summary is the lean description: the lead clause of the description
// and the when-cue.
func (t *ToolDef) Summary() string {
	return leadClause(t.Description) + "\nWhen: " + t.When
}

// Purpose is the lead clause of the description: what the tool is for,
// in one line.
func (t *ToolDef) Purpose() string {
	return leadClause(t.Description)
}

// leadClause is the first sentence of s, cut before a colon, semicolon or
// parenthesis that follows its first words (the rest of such a sentence
// lists details). "e.g." and "i.e." do not end a sentence.
func leadClause(s string) string {
	s = strings.TrimSpace(s)
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && s[i] != '!' && s[i] != '?' {
			continue
		}
		if i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n' {
			continue
		}
		if strings.HasSuffix(s[:i+1], "e.g.") || strings.HasSuffix(s[:i+1], "i.e.") {
			continue
		}
		end = i
		break
	}
	first := s[:end]
	const minLead = 10 // a cut this early would leave too little to go on
	for _, sep := range []string{": ", "; ", " ("} {
		if i := strings.Index(first, sep); i >= minLead {
			first = first[:i]
		}
	}
	first = strings.TrimRightFunc(first, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
	return first + "."
}

// listedKeywords are the schema keywords the lean listing keeps: the
// shape of a valid call. Left out are property descriptions, the limits a
// model rarely meets (lengths, item counts, patterns, formats) and
// additionalProperties: false.
var listedKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "items": true, "enum": true, "const": true,
	"additionalProperties": true, "anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "default": true,
}

// LeanSchema is schema with only the listed keywords, at every depth.
func LeanSchema(schema map[string]any) map[string]any {
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		if !listedKeywords[k] {
			continue
		}
		switch k {
		case "additionalProperties":
			// A closed object's false is left out: the server refuses an
			// unknown argument by name anyway, and it is 28 bytes on
			// every object of every tool.
			if v != false {
				out[k] = leanValue(v)
			}
		case "properties":
			props, _ := v.(map[string]any)
			kept := make(map[string]any, len(props))
			for name, sub := range props {
				kept[name] = leanValue(sub)
			}
			out[k] = kept
		case "items":
			out[k] = leanValue(v)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			alts, _ := v.([]any)
			kept := make([]any, len(alts))
			for i, alt := range alts {
				kept[i] = leanValue(alt)
			}
			out[k] = kept
		default:
			out[k] = v
		}
	}
	return out
}

func leanValue(v any) any {
	if m, ok := v.(map[string]any); ok {
		return LeanSchema(m)
	}
	return v // a boolean schema
}

// LeanAnnotations are the hints the lean listing sends: the title (the
// dotted name) is left out, and so are the destructive and idempotent
// hints of a read-only tool, which MCP says are meaningful only when
// readOnlyHint is false. The open-world hint is always sent: MCP's default
// is true, which a client would show for every tool.
func (t *ToolDef) LeanAnnotations() LeanHints {
	a := t.Annotations()
	h := LeanHints{ReadOnlyHint: &a.ReadOnlyHint, OpenWorldHint: &a.OpenWorldHint}
	if !a.ReadOnlyHint {
		h.DestructiveHint, h.IdempotentHint = &a.DestructiveHint, &a.IdempotentHint
	}
	return h
}

// LeanHints are MCP tool annotations with unsent hints left nil.
type LeanHints struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}
