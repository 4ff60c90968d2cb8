package server

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Argument summaries in logs: enough to see what a caller asked for, never
// a whole payload and never a credential.
const (
	summaryStringMax = 64 // longer strings keep a prefix and their length
	summaryDepthMax  = 4  // deeper values become "{…}" / "[…]"
	summaryItemsMax  = 16 // more object keys or array items are counted, not shown
)

// secretWords mark argument names whose values are never logged; a name
// matches when it contains one of them, ignoring case.
var secretWords = []string{"token", "password", "passwd", "secret", "authorization",
	"apikey", "api_key", "api-key", "credential", "privatekey", "private_key", "private-key", "cookie"}

func secretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// summarizeArgs renders args for a log line as JSON: secret-looking keys
// redacted, long strings shortened, deep or wide values elided, object
// keys sorted. whole is false when the summary had to be cut at max bytes
// (it then ends in "…" and is no longer JSON). It writes the JSON
// directly (rather than building a redacted copy for json.Marshal)
// because it runs on every logged call, and stops once past the cap.
func summarizeArgs(args any, max int) (summary []byte, whole bool) {
	if max <= 0 || args == nil {
		return nil, true
	}
	w := summaryWriter{buf: make([]byte, 0, min(max+1, 64)), max: max}
	w.value(args, 0)
	if len(w.buf) <= max {
		return w.buf, true
	}
	return []byte(capString(string(w.buf), max)), false
}

type summaryWriter struct {
	buf []byte
	max int
}

func (w *summaryWriter) full() bool { return len(w.buf) > w.max }

func (w *summaryWriter) value(v any, depth int) {
	if w.full() {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if depth >= summaryDepthMax {
			w.str("{…}")
			return
		}
		w.buf = append(w.buf, '{')
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i == summaryItemsMax {
				w.buf = append(w.buf, ',')
				w.str("…")
				w.buf = append(w.buf, ':')
				w.str(fmt.Sprintf("%d more keys", len(keys)-i))
				break
			}
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(k)
			w.buf = append(w.buf, ':')
			if secretName(k) {
				w.str("[redacted]")
			} else {
				w.value(x[k], depth+1)
			}
			if w.full() {
				return
			}
		}
		w.buf = append(w.buf, '}')
	case []any:
		if depth >= summaryDepthMax {
			w.str("[…]")
			return
		}
		w.buf = append(w.buf, '[')
		for i, item := range x {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if i == summaryItemsMax {
				w.str(fmt.Sprintf("… %d more items", len(x)-i))
				break
			}
			w.value(item, depth+1)
			if w.full() {
				return
			}
		}
		w.buf = append(w.buf, ']')
	case string:
		if len(x) > summaryStringMax {
			x = fmt.Sprintf("%s…(%d bytes)", strings.TrimSuffix(capString(x, summaryStringMax/2), "…"), len(x))
		}
		w.str(x)
	case float64:
		// As encoding/json writes numbers: plain unless very large or small.
		format := byte('f')
		if abs := math.Abs(x); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			format = 'e'
		}
		w.buf = strconv.AppendFloat(w.buf, x, format, -1, 64)
	case bool:
		w.buf = strconv.AppendBool(w.buf, x)
	case nil:
		w.buf = append(w.buf, "null"...)
	default:
		// Go values from in-process callers; arguments decoded from JSON
		// never get here.
		b, err := json.Marshal(x)
		if err != nil {
			b = []byte(`"?"`)
		}
		w.buf = append(w.buf, b...)
	}
}

// str writes s as a JSON string; only strings that need escaping go
// through encoding/json.
func (w *summaryWriter) str(s string) {
	plain := utf8.ValidString(s)
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		w.buf = append(append(append(w.buf, '"'), s...), '"')
		return
	}
	b, _ := json.Marshal(s)
	w.buf = append(w.buf, b...)
}

// capString cuts s to at most max bytes on a rune boundary, marking the cut.
func capString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
