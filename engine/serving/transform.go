package serving

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
)

// TransformJob is a CreateTransformJob request's data handling: what is
// read, how it is split and batched, filtered, joined and assembled.
type TransformJob struct {
	// Inputs are the objects under TransformInput's S3 prefix; Key is the
	// name relative to the prefix (it names the output: Key + ".out").
	Inputs []Object
	// ContentType is TransformInput.ContentType, sent with each request.
	ContentType string
	// CompressionType is "None" (or "") or "Gzip".
	CompressionType string
	// SplitType is "None" (or "") or "Line".
	SplitType string
	// Accept is TransformOutput.Accept.
	Accept string
	// AssembleWith is "None" (or "") or "Line".
	AssembleWith string
	// BatchStrategy is "MultiRecord" (the default here) or
	// "SingleRecord".
	BatchStrategy string
	// MaxPayloadInMB bounds a mini-batch (default 6).
	MaxPayloadInMB int
	// DataProcessing is the job's InputFilter, JoinSource, OutputFilter.
	DataProcessing DataProcessing
	// Environment is the job's Environment, laid over the model's.
	Environment map[string]string
}

// DataProcessing is CreateTransformJob's DataProcessing block.
type DataProcessing struct {
	InputFilter  string
	JoinSource   string // "None" (or "") or "Input"
	OutputFilter string
}

// Object is one S3 object's key and content.
type Object struct {
	Key  string
	Data []byte
}

// TransformResult is what a job wrote.
type TransformResult struct {
	// Outputs are the output objects, Key + ".out" for each input, in
	// input order.
	Outputs []Object
	// Records is the number of records sent; Requests the number of
	// requests (mini-batches).
	Records, Requests int
	// Log is the tail of the serving process's output.
	Log string
}

// job is a validated TransformJob.
type job struct {
	TransformJob
	inFilter, outFilter *Path
	join                bool
	csv, json           bool // input format
	outCSV, outJSON     bool // Accept's format
	maxPayload          int
	processing          bool // any DataProcessing beyond the defaults
}

func (j TransformJob) validate() (*job, error) {
	v := &job{TransformJob: j}
	switch j.SplitType {
	case "", "None", "Line":
	default:
		return nil, errorf(KindInvalid, "TransformInput.SplitType", "%q is not emulated here (None or Line)", j.SplitType)
	}
	switch j.CompressionType {
	case "", "None", "Gzip":
	default:
		return nil, errorf(KindInvalid, "TransformInput.CompressionType", "%q is not None or Gzip", j.CompressionType)
	}
	switch j.AssembleWith {
	case "", "None", "Line":
	default:
		return nil, errorf(KindInvalid, "TransformOutput.AssembleWith", "%q is not None or Line", j.AssembleWith)
	}
	switch j.BatchStrategy {
	case "", "MultiRecord", "SingleRecord":
	default:
		return nil, errorf(KindInvalid, "BatchStrategy", "%q is not MultiRecord or SingleRecord", j.BatchStrategy)
	}
	switch j.DataProcessing.JoinSource {
	case "", "None":
	case "Input":
		v.join = true
	default:
		return nil, errorf(KindInvalid, "DataProcessing.JoinSource", "%q is not None or Input", j.DataProcessing.JoinSource)
	}
	var err error
	if v.inFilter, err = ParsePath(j.DataProcessing.InputFilter); err != nil {
		return nil, &Error{Kind: KindDataProcessing, Field: "DataProcessing.InputFilter", Message: err.Error()}
	}
	if v.outFilter, err = ParsePath(j.DataProcessing.OutputFilter); err != nil {
		return nil, &Error{Kind: KindDataProcessing, Field: "DataProcessing.OutputFilter", Message: err.Error()}
	}
	v.csv, v.json = formatOf(j.ContentType)
	v.outCSV, v.outJSON = formatOf(j.Accept)
	v.processing = v.join || !v.inFilter.IsRoot() || !v.outFilter.IsRoot()
	if v.processing {
		if !v.csv && !v.json {
			return nil, errorf(KindDataProcessing, "TransformInput.ContentType", "DataProcessing works on CSV and JSON input only; ContentType is %q", j.ContentType)
		}
		if v.csv && j.SplitType != "Line" {
			return nil, errorf(KindDataProcessing, "TransformInput.SplitType", "CSV input with DataProcessing needs SplitType Line (each line is a record)")
		}
		if v.csv && j.AssembleWith != "Line" {
			return nil, errorf(KindDataProcessing, "TransformOutput.AssembleWith", "CSV input with DataProcessing needs AssembleWith Line")
		}
	}
	mb := j.MaxPayloadInMB
	if mb == 0 {
		mb = 6
	}
	if mb < 0 || mb > 100 {
		return nil, errorf(KindInvalid, "MaxPayloadInMB", "%d is outside 0..100", j.MaxPayloadInMB)
	}
	v.maxPayload = mb << 20
	return v, nil
}

// formatOf tells a CSV or a JSON (or JSON Lines) media type.
func formatOf(contentType string) (csv, json bool) {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		media = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch media {
	case "text/csv":
		return true, false
	case "application/json", "application/jsonlines", "application/x-jsonlines":
		return false, true
	}
	return false, false
}

// batchEnv is what SageMaker adds to a transform job's container.
func batchEnv(j TransformJob) map[string]string {
	env := map[string]string{"SAGEMAKER_BATCH": "true", "SAGEMAKER_MAX_CONCURRENT_TRANSFORMS": "1"}
	if j.MaxPayloadInMB > 0 {
		env["SAGEMAKER_MAX_PAYLOAD_IN_MB"] = strconv.Itoa(j.MaxPayloadInMB)
	}
	switch j.BatchStrategy {
	case "SingleRecord":
		env["SAGEMAKER_BATCH_STRATEGY"] = "SINGLE_RECORD"
	case "MultiRecord":
		env["SAGEMAKER_BATCH_STRATEGY"] = "MULTI_RECORD"
	}
	return env
}

// Transform runs a batch transform job with model m: it loads the model
// with the job's environment (the model's Environment, what SageMaker
// adds for batch — SAGEMAKER_BATCH and the strategy — and the job's
// Environment), sends every input's records in mini-batches and writes
// one output per input.
func (r *Runtime) Transform(ctx context.Context, m Model, tj TransformJob) (*TransformResult, error) {
	j, err := tj.validate()
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range m.Environment {
		env[k] = v
	}
	for k, v := range batchEnv(tj) {
		env[k] = v
	}
	for k, v := range tj.Environment {
		env[k] = v
	}
	m.Environment = env
	s, err := r.Load(ctx, m)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &TransformResult{}
	for _, in := range tj.Inputs {
		out, err := j.run(ctx, s, in, res)
		if err != nil {
			res.Log = s.Log()
			if e, ok := err.(*Error); ok && e.Log == "" {
				e.Log = res.Log
			}
			return nil, err
		}
		res.Outputs = append(res.Outputs, Object{Key: in.Key + ".out", Data: out})
	}
	res.Log = s.Log()
	return res, nil
}

// record is one input record: its bytes as read, what the model gets
// (after InputFilter) and, when joined, its parsed form.
type record struct {
	raw    []byte
	sent   []byte
	parsed any
}

// run transforms one input object.
func (j *job) run(ctx context.Context, s *Server, in Object, res *TransformResult) ([]byte, error) {
	data := in.Data
	if j.CompressionType == "Gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, errorf(KindInvalid, "TransformInput.CompressionType", "%s is not gzip-compressed: %v", in.Key, err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, int64(s.lim.MaxUnpackedBytes)+1)); err != nil {
			return nil, errorf(KindInvalid, "TransformInput.CompressionType", "%s: %v", in.Key, err)
		}
		if int64(len(data)) > s.lim.MaxUnpackedBytes {
			return nil, errorf(KindLimit, "TransformInput", "%s decompresses past the %d-byte limit", in.Key, s.lim.MaxUnpackedBytes)
		}
	}
	recs, err := j.records(in.Key, data)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for len(recs) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, payload, err := j.batch(in.Key, recs)
		if err != nil {
			return nil, err
		}
		resp, err := s.Invoke(ctx, payload, j.ContentType, j.Accept)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Message = fmt.Sprintf("the model failed a request (input %s, records %d..%d): %s", in.Key, res.Records+1, res.Records+n, e.Message)
				if e.Kind == KindPayload && j.inFilter.IsRoot() && e.Field == "" {
					// The usual cause: columns the model was not trained
					// on (an id, the label, a header) reach it whole.
					e.Field = "DataProcessing.InputFilter"
					e.Message += " (no InputFilter: every column of each record reached the model)"
				}
			}
			return nil, err
		}
		res.Requests++
		if err := j.assemble(&out, recs[:n], resp.Body, in.Key, res.Records); err != nil {
			return nil, err
		}
		res.Records += n
		recs = recs[n:]
	}
	return out.Bytes(), nil
}

// records splits an object into records and applies InputFilter.
func (j *job) records(key string, data []byte) ([]record, error) {
	var raws [][]byte
	if j.SplitType == "Line" {
		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		for _, l := range lines {
			raws = append(raws, bytes.TrimSuffix(l, []byte("\r")))
		}
	} else if len(data) > 0 {
		raws = [][]byte{data}
	}
	recs := make([]record, len(raws))
	for i, raw := range raws {
		recs[i] = record{raw: raw, sent: raw}
		if !j.processing {
			continue
		}
		parsed, err := j.parse(raw, j.csv)
		if err != nil {
			return nil, errorf(KindDataProcessing, "TransformInput.ContentType", "%s record %d: %v", key, i+1, err)
		}
		recs[i].parsed = parsed
		if j.inFilter.IsRoot() {
			continue
		}
		sel, err := j.inFilter.Select(parsed)
		if err != nil {
			return nil, errorf(KindDataProcessing, "DataProcessing.InputFilter", "%s record %d: %v", key, i+1, err)
		}
		if recs[i].sent, err = j.format(sel, j.csv); err != nil {
			return nil, errorf(KindDataProcessing, "DataProcessing.InputFilter", "%s record %d: %v", key, i+1, err)
		}
	}
	return recs, nil
}

func (j *job) parse(raw []byte, csv bool) (any, error) {
	if csv {
		return parseCSVRecord(string(raw))
	}
	return decodeJSON(raw)
}

func (j *job) format(v any, csv bool) ([]byte, error) {
	if csv {
		s, err := formatCSVRecord(v)
		return []byte(s), err
	}
	var b bytes.Buffer
	encodeJSON(&b, v)
	return b.Bytes(), nil
}

// batch picks the next mini-batch: one record (SingleRecord, or no
// split), or as many as fit in MaxPayloadInMB (MultiRecord), joined by
// line breaks.
func (j *job) batch(key string, recs []record) (int, []byte, error) {
	var payload bytes.Buffer
	n := 0
	for _, r := range recs {
		size := payload.Len() + len(r.sent)
		if n > 0 {
			size++
		}
		if size > j.maxPayload {
			if n == 0 {
				return 0, nil, errorf(KindLimit, "MaxPayloadInMB", "%s has a record of %d bytes, more than MaxPayloadInMB (%d MB)", key, len(r.sent), j.maxPayload>>20)
			}
			break
		}
		if n > 0 {
			payload.WriteByte('\n')
		}
		payload.Write(r.sent)
		n++
		if j.BatchStrategy == "SingleRecord" || j.SplitType != "Line" {
			break
		}
	}
	return n, payload.Bytes(), nil
}

// assemble writes a mini-batch's answer: as it came (AssembleWith None,
// no DataProcessing), or one line per output record, joined with its
// input record and filtered as DataProcessing says.
func (j *job) assemble(out *bytes.Buffer, recs []record, body []byte, key string, before int) error {
	if !j.processing && j.AssembleWith != "Line" {
		out.Write(body)
		return nil
	}
	var lines [][]byte
	if j.SplitType == "Line" {
		trimmed := bytes.TrimSuffix(bytes.TrimSuffix(body, []byte("\n")), []byte("\r"))
		if len(trimmed) > 0 || len(recs) == 1 {
			for _, l := range bytes.Split(trimmed, []byte("\n")) {
				lines = append(lines, bytes.TrimSuffix(l, []byte("\r")))
			}
		}
	} else {
		lines = [][]byte{bytes.TrimSuffix(body, []byte("\n"))}
	}
	if !j.processing {
		for _, l := range lines {
			out.Write(l)
			out.WriteByte('\n')
		}
		return nil
	}
	if j.join && len(lines) != len(recs) {
		return errorf(KindDataProcessing, "DataProcessing.JoinSource", "%s records %d..%d: the model answered %d lines for %d records; joining the input needs one output line per input record", key, before+1, before+len(recs), len(lines), len(recs))
	}
	for i, l := range lines {
		var joined any
		var err error
		csvOut := j.outCSV
		if j.join {
			joined, err = j.joinRecord(recs[i].parsed, l)
			csvOut = j.csv
		} else {
			joined, err = j.parse(l, j.outCSV)
		}
		if err != nil {
			return errorf(KindDataProcessing, "DataProcessing.JoinSource", "%s record %d: the model's answer %q: %v", key, before+i+1, truncate(l, 80), err)
		}
		sel, err := j.outFilter.Select(joined)
		if err != nil {
			return errorf(KindDataProcessing, "DataProcessing.OutputFilter", "%s record %d: %v", key, before+i+1, err)
		}
		b, err := j.format(sel, csvOut)
		if err != nil {
			return errorf(KindDataProcessing, "DataProcessing.OutputFilter", "%s record %d: %v", key, before+i+1, err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return nil
}

// joinRecord joins an input record with the model's answer for it: a
// CSV record gets the answer's fields appended; a JSON object gets it as
// SageMakerOutput; any other JSON value becomes {"SageMakerInput": ...,
// "SageMakerOutput": ...}.
func (j *job) joinRecord(in any, answer []byte) (any, error) {
	if j.csv {
		fields, err := parseCSVRecord(string(answer))
		if err != nil {
			return nil, err
		}
		return append(append([]any{}, in.([]any)...), fields...), nil
	}
	out, err := decodeJSON(answer)
	if err != nil {
		out = string(answer)
	}
	if o, ok := in.(*object); ok {
		joined := &object{keys: append([]string{}, o.keys...), vals: map[string]any{}}
		for k, v := range o.vals {
			joined.vals[k] = v
		}
		joined.set("SageMakerOutput", out)
		return joined, nil
	}
	joined := &object{vals: map[string]any{}}
	joined.set("SageMakerInput", in)
	joined.set("SageMakerOutput", out)
	return joined, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
