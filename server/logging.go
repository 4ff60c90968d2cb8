package server

import (
	"encoding/json"
	"fmt"
	"regexp"
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

// secretKey matches argument names whose values are never logged.
var secretKey = regexp.MustCompile(`(?i)(token|password|passwd|secret|authorization|api[_-]?key|credential|private[_-]?key|cookie)`)

// summarizeArgs renders args for a log line: secret-looking keys redacted,
// long strings shortened, deep or wide values elided, the whole capped at
// max bytes.
func summarizeArgs(args any, max int) string {
	if max <= 0 || args == nil {
		return ""
	}
	b, err := json.Marshal(summarize(args, 0))
	if err != nil {
		return ""
	}
	return capString(string(b), max)
}

func summarize(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if depth >= summaryDepthMax {
			return "{…}"
		}
		out := make(map[string]any, min(len(x), summaryItemsMax))
		n := 0
		for k, val := range x {
			if n == summaryItemsMax {
				out["…"] = fmt.Sprintf("%d more keys", len(x)-n)
				break
			}
			n++
			if secretKey.MatchString(k) {
				out[k] = "[redacted]"
				continue
			}
			out[k] = summarize(val, depth+1)
		}
		return out
	case []any:
		if depth >= summaryDepthMax {
			return "[…]"
		}
		out := make([]any, 0, min(len(x), summaryItemsMax+1))
		for i, val := range x {
			if i == summaryItemsMax {
				out = append(out, fmt.Sprintf("… %d more items", len(x)-i))
				break
			}
			out = append(out, summarize(val, depth+1))
		}
		return out
	case string:
		if len(x) > summaryStringMax {
			return fmt.Sprintf("%s…(%d bytes)", strings.TrimSuffix(capString(x, summaryStringMax/2), "…"), len(x))
		}
		return x
	default:
		return x
	}
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
