package localrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// definition is the part of a pipeline definition a local run reads.
type definition struct {
	Version    string      `json:"Version"`
	Parameters []parameter `json:"Parameters"`
	Steps      []rawStep   `json:"Steps"`
}

type parameter struct {
	Name         string `json:"Name"`
	Type         string `json:"Type"`
	DefaultValue any    `json:"DefaultValue"`
}

type rawStep struct {
	Name      string         `json:"Name"`
	Type      string         `json:"Type"`
	Arguments map[string]any `json:"Arguments"`
	DependsOn []string       `json:"DependsOn"`
}

// parseDefinition decodes and checks a definition; what is wrong with it
// is an *InputError.
func parseDefinition(data []byte) (*definition, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, &InputError{Field: "definition", Reason: "is not a JSON object: " + err.Error()}
	}
	steps, ok := top["Steps"].([]any)
	if !ok || len(steps) == 0 {
		return nil, &InputError{Field: "definition", Reason: "is not a pipeline definition: it has no Steps list"}
	}
	d := &definition{}
	if v, ok := top["Version"].(string); ok {
		d.Version = v
	}
	if ps, ok := top["Parameters"].([]any); ok {
		for i, p := range ps {
			m, ok := p.(map[string]any)
			name, _ := m["Name"].(string)
			if !ok || name == "" {
				return nil, &InputError{Field: fmt.Sprintf("definition.Parameters[%d]", i), Reason: "has no Name"}
			}
			typ, _ := m["Type"].(string)
			d.Parameters = append(d.Parameters, parameter{Name: name, Type: typ, DefaultValue: m["DefaultValue"]})
		}
	}
	seen := map[string]bool{}
	for i, s := range steps {
		m, ok := s.(map[string]any)
		if !ok {
			return nil, &InputError{Field: fmt.Sprintf("definition.Steps[%d]", i), Reason: "is not an object"}
		}
		st := rawStep{}
		st.Name, _ = m["Name"].(string)
		st.Type, _ = m["Type"].(string)
		if st.Name == "" || st.Type == "" {
			return nil, &InputError{Field: fmt.Sprintf("definition.Steps[%d]", i), Reason: "needs a Name and a Type"}
		}
		if seen[st.Name] {
			return nil, &InputError{Field: fmt.Sprintf("definition.Steps[%d].Name", i), Reason: fmt.Sprintf("%q names two steps", st.Name)}
		}
		seen[st.Name] = true
		st.Arguments, _ = m["Arguments"].(map[string]any)
		if st.Arguments == nil {
			st.Arguments = map[string]any{}
		}
		if deps, ok := m["DependsOn"].([]any); ok {
			for _, dep := range deps {
				if s, ok := dep.(string); ok {
					st.DependsOn = append(st.DependsOn, s)
				}
			}
		}
		d.Steps = append(d.Steps, st)
	}
	return d, nil
}

// order sorts the steps so that each comes after every step it depends
// on (DependsOn and property references), keeping definition order among
// independent steps. It also returns each step's upstream steps.
func (d *definition) order() ([]int, map[string][]string, error) {
	index := map[string]int{}
	for i, s := range d.Steps {
		index[s.Name] = i
	}
	upstream := map[string][]string{}
	for _, s := range d.Steps {
		set := map[string]bool{}
		for _, dep := range s.DependsOn {
			set[dep] = true
		}
		for _, ref := range stepRefs(s.Arguments) {
			set[ref] = true
		}
		for dep := range set {
			if _, ok := index[dep]; !ok {
				return nil, nil, &InputError{Field: "definition.Steps." + s.Name, Reason: fmt.Sprintf("depends on or refers to step %q, which the definition does not have", dep)}
			}
			if dep == s.Name {
				return nil, nil, &InputError{Field: "definition.Steps." + s.Name, Reason: "refers to itself"}
			}
			upstream[s.Name] = append(upstream[s.Name], dep)
		}
		sort.Strings(upstream[s.Name])
	}
	var out []int
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(i int) error
	visit = func(i int) error {
		name := d.Steps[i].Name
		switch state[name] {
		case 1:
			return &InputError{Field: "definition.Steps", Reason: fmt.Sprintf("has a dependency cycle through %q", name)}
		case 2:
			return nil
		}
		state[name] = 1
		for _, dep := range upstream[name] {
			if err := visit(index[dep]); err != nil {
				return err
			}
		}
		state[name] = 2
		out = append(out, i)
		return nil
	}
	for i := range d.Steps {
		if err := visit(i); err != nil {
			return nil, nil, err
		}
	}
	return out, upstream, nil
}

// stepRefs lists the steps a value refers to with {"Get": "Steps.X..."}.
func stepRefs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if g, ok := t["Get"].(string); ok && len(t) == 1 {
				if rest, ok := strings.CutPrefix(g, "Steps."); ok {
					name, _, _ := strings.Cut(rest, ".")
					out = append(out, name)
				}
				return
			}
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// scope is what expressions resolve against.
type scope struct {
	params    map[string]any
	execution map[string]any
	props     map[string]map[string]any // step name → its properties
}

// RefError is an expression that does not resolve: Field is where it is
// in the step's arguments, Ref the expression.
type RefError struct {
	Field, Ref, Reason string
}

func (e *RefError) Error() string { return fmt.Sprintf("%s: %s %s", e.Field, e.Ref, e.Reason) }

// resolve replaces every Get and Std:Join in v with its value.
func (sc *scope) resolve(v any, field string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		if g, ok := t["Get"].(string); ok && len(t) == 1 {
			return sc.get(g, field)
		}
		if j, ok := t["Std:Join"].(map[string]any); ok && len(t) == 1 {
			on, _ := j["On"].(string)
			vals, _ := j["Values"].([]any)
			parts := make([]string, 0, len(vals))
			for i, x := range vals {
				r, err := sc.resolve(x, fmt.Sprintf("%s.Std:Join.Values[%d]", field, i))
				if err != nil {
					return nil, err
				}
				parts = append(parts, scalarString(r))
			}
			return strings.Join(parts, on), nil
		}
		if _, ok := t["Std:JsonGet"]; ok && len(t) == 1 {
			return nil, &RefError{Field: field, Ref: "Std:JsonGet", Reason: "(property files) is not emulated by the local run"}
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			r, err := sc.resolve(x, field+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			r, err := sc.resolve(x, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func (sc *scope) get(ref, field string) (any, error) {
	switch {
	case strings.HasPrefix(ref, "Parameters."):
		name := strings.TrimPrefix(ref, "Parameters.")
		v, ok := sc.params[name]
		if !ok {
			return nil, &RefError{Field: field, Ref: ref, Reason: "names a parameter the definition does not declare"}
		}
		if v == nil {
			return nil, &RefError{Field: field, Ref: ref, Reason: "has no DefaultValue, and a local run sets no parameters"}
		}
		return v, nil
	case strings.HasPrefix(ref, "Execution."):
		v, ok := sc.execution[strings.TrimPrefix(ref, "Execution.")]
		if !ok {
			return nil, &RefError{Field: field, Ref: ref, Reason: "is not an execution variable"}
		}
		return v, nil
	case strings.HasPrefix(ref, "Steps."):
		rest := strings.TrimPrefix(ref, "Steps.")
		name, p, _ := strings.Cut(rest, ".")
		props, ok := sc.props[name]
		if !ok {
			return nil, &RefError{Field: field, Ref: ref, Reason: fmt.Sprintf("refers to step %s, which has not run", name)}
		}
		v, err := walkPath(props, strings.TrimPrefix(p, "Properties."))
		if err != nil {
			return nil, &RefError{Field: field, Ref: ref, Reason: fmt.Sprintf("does not resolve: step %s produced no %s", name, err)}
		}
		return v, nil
	}
	return nil, &RefError{Field: field, Ref: ref, Reason: "is not a Parameters, Execution or Steps reference"}
}

// walkPath follows a property path such as
// ProcessingOutputConfig.Outputs['data'].S3Output.S3Uri through v. A
// ['name'] on a list picks the element whose *Name field is name (as
// SageMaker's properties do for outputs, channels and metrics).
func walkPath(v any, p string) (any, error) {
	done := ""
	for p != "" {
		var seg, idx string
		switch {
		case strings.HasPrefix(p, "["):
			end := strings.Index(p, "]")
			if end < 0 {
				return nil, fmt.Errorf("%s (unclosed [)", done+p)
			}
			idx, p = p[1:end], p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			seg, p = p[:end], p[end:]
		}
		p = strings.TrimPrefix(p, ".")
		if seg != "" {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s", strings.TrimPrefix(done+"."+seg, "."))
			}
			if v, ok = m[seg]; !ok {
				return nil, fmt.Errorf("%s", strings.TrimPrefix(done+"."+seg, "."))
			}
			done = strings.TrimPrefix(done+"."+seg, ".")
			continue
		}
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s[%s]", done, idx)
		}
		if n, err := strconv.Atoi(idx); err == nil {
			if n < 0 || n >= len(list) {
				return nil, fmt.Errorf("%s[%s]", done, idx)
			}
			v = list[n]
		} else {
			name := strings.Trim(idx, `'"`)
			found := false
			for _, e := range list {
				m, _ := e.(map[string]any)
				for k, x := range m {
					if strings.HasSuffix(k, "Name") && x == name {
						v, found = e, true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("%s[%s]", done, idx)
			}
		}
		done += "[" + idx + "]"
	}
	return v, nil
}

// scalarString renders a resolved scalar as the pipeline service would
// in a string context.
func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return t.String()
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case int:
		return strconv.Itoa(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// decode turns resolved arguments into a typed value.
func decode(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
