// Package verbatim encodes JSON the way agents and SageMaker read it back:
// like encoding/json, but with <, > and & left as they are (scripts, S3
// paths and property references travel verbatim).
package verbatim

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
