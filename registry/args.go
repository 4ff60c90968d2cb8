package registry

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
)

// Arguments are parsed and bound by the rules of encoding/json/v2 (the
// go-json-experiment module is its mirror until Go 1.27 ships it, and
// aliases the standard library's there): a key given twice, invalid UTF-8
// and trailing data are errors, and a key binds only to the field its
// name matches exactly. encoding/json (v1) has no way to refuse a
// duplicate key: it keeps the last value when decoding into a map and
// merges the objects when decoding into a struct, so a body bound
// straight into a tool's struct could carry a value validation never saw.
// Under these rules the arguments validated and the input bound are the
// same value, whether the input is bound from the caller's text or from
// the arguments (TestDuplicateKeysAreRefused).

// DecodeArgs parses a JSON arguments body. An empty body means {}.
func DecodeArgs(body []byte) (map[string]any, *Result) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return map[string]any{}, nil
	}
	if trimmed[0] != '{' {
		return nil, Fail(CodeInvalidInput, "arguments must be a JSON object")
	}
	var args map[string]any
	if err := jsonv2.Unmarshal(trimmed, &args); err != nil {
		return nil, Fail(CodeInvalidInput, "arguments must be a single JSON object: "+err.Error())
	}
	return args, nil
}

// bind decodes validated arguments into In: from text, the JSON they were
// decoded from, when the front end has it (encoding args again would
// double the cost of binding a large inline DAG or config, and text keeps
// integers past 2^53 that a float64 in args has rounded), else from args
// encoded. The schema has already rejected unknown keys and wrong types,
// so an error from args means the struct and its schema disagree. One
// from text can also mean a number the schema takes as an integer but
// the decoder does not (5.0, 1e2): args, where it is a float64 again,
// decide then.
func bind[In any](args map[string]any, text []byte) (In, error) {
	if len(text) > 0 {
		var in In
		if jsonv2.Unmarshal(text, &in) == nil {
			return in, nil
		}
	}
	var in In
	b, err := json.Marshal(args) // as validation saw in-process arguments
	if err == nil {
		err = jsonv2.Unmarshal(b, &in)
	}
	return in, err
}
