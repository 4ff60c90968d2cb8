// Package verbatim encodes JSON the way agents and SageMaker read it back:
// like encoding/json, but with <, > and & left as they are (scripts, S3
// paths and property references travel verbatim).
package verbatim

import (
	"bytes"
	"encoding/json"
	"io"
)

// Marshal is json.Marshal without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Encode writes Marshal's bytes and a newline to w. Nothing is written
// when v cannot be encoded.
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
