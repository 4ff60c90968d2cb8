package compiler

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
)

// formatEnv renders a config value as an environment variable or command
// line value: booleans as true/false, lists comma-joined, objects as JSON,
// numbers without a spurious ".0".
func formatEnv(v any) (string, bool) {
	switch t := v.(type) {
	case nil:
		return "", false
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case json.Number:
		return t.String(), true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return strconv.FormatInt(int64(t), 10), true
		}
		return strconv.FormatFloat(t, 'g', -1, 64), true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case []any:
		parts := make([]string, 0, len(t))
		for _, e := range t {
			s, _ := formatEnv(e)
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), true
	case []string:
		return strings.Join(t, ","), true
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
}

// jsonString renders a value the way script-mode hyperparameters carry
// every value: JSON-encoded, then passed as a string.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return `""`
	}
	return string(b)
}

func getString(c *config.Config, name string) string {
	v, ok := c.Get(name)
	if !ok {
		return ""
	}
	s, _ := formatEnv(v)
	return s
}

func getInt(c *config.Config, name string, def int) int {
	v, ok := c.Get(name)
	if !ok {
		return def
	}
	switch t := v.(type) {
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return int(n)
		}
		if f, err := t.Float64(); err == nil {
			return int(f)
		}
	case float64:
		return int(t)
	case int:
		return t
	case int64:
		return int(t)
	}
	return def
}

func getBool(c *config.Config, name string) bool {
	v, _ := c.Get(name)
	b, _ := v.(bool)
	return b
}

func getStrings(c *config.Config, name string) []string {
	v, _ := c.Get(name)
	switch t := v.(type) {
	case []string:
		return append([]string(nil), t...)
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := formatEnv(e); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if t != "" {
			return []string{t}
		}
	}
	return nil
}

func getMap(c *config.Config, name string) map[string]any {
	v, _ := c.Get(name)
	m, _ := v.(map[string]any)
	return m
}
