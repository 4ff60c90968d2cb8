package localrun

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/sampledata"
)

// DefaultSampleName is the file name the built-in sample data set gets.
const DefaultSampleName = "tabular.csv"

// DefaultSample is the built-in tabular sample data set
// (engine/sampledata), as one file.
func DefaultSample() map[string][]byte {
	return map[string][]byte{DefaultSampleName: sampledata.Tabular()}
}

// checkSampleName refuses a sample file name that is not a plain
// relative path.
func checkSampleName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || path.Clean(name) != name || strings.HasPrefix(name, "..") || name == "." {
		return &InputError{Field: "sample_data", Reason: fmt.Sprintf("file name %q is not a plain relative path", name)}
	}
	return nil
}

// placeSample writes the sample data under every S3 location a step reads
// from outside the pipeline (not another step's output, not code): a
// prefix gets every sample file, an object URI (a name with an extension)
// the first one.
func (ru *run) placeSample() error {
	names := make([]string, 0, len(ru.req.SampleData))
	for n := range ru.req.SampleData {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil
	}
	noSteps := &scope{params: ru.scope.params, execution: ru.scope.execution, props: map[string]map[string]any{}}
	for _, s := range ru.def.Steps {
		for _, raw := range externalInputs(s) {
			v, err := noSteps.resolve(raw, "")
			if err != nil {
				continue // fed by another step
			}
			uri, ok := v.(string)
			if !ok || !strings.HasPrefix(uri, "s3://") || codeURI.MatchString(uri) || ru.sampled[uri] {
				continue
			}
			if _, _, err := splitURI(uri); err != nil {
				continue
			}
			ru.sampled[uri] = true
			if objs, _ := ru.store.list(uri); len(objs) > 0 {
				continue
			}
			base := path.Base(strings.TrimSuffix(uri, "/"))
			if !strings.HasSuffix(uri, "/") && path.Ext(base) != "" {
				if err := ru.store.putLocal(uri, ru.req.SampleData[names[0]]); err != nil {
					return err
				}
				continue
			}
			for _, n := range names {
				if err := ru.store.putLocal(strings.TrimSuffix(uri, "/")+"/"+n, ru.req.SampleData[n]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// externalInputs are the S3 URI values a step reads.
func externalInputs(s rawStep) []any {
	var out []any
	a := s.Arguments
	if ins, ok := a["ProcessingInputs"].([]any); ok {
		for _, in := range ins {
			if m, ok := in.(map[string]any); ok {
				if s3, ok := m["S3Input"].(map[string]any); ok {
					out = append(out, s3["S3Uri"])
				}
			}
		}
	}
	chans, _ := a["InputDataConfig"].([]any)
	if tjd, ok := a["TrainingJobDefinition"].(map[string]any); ok {
		c, _ := tjd["InputDataConfig"].([]any)
		chans = append(chans, c...)
	}
	for _, c := range chans {
		if m, ok := c.(map[string]any); ok {
			if ds, ok := m["DataSource"].(map[string]any); ok {
				if s3, ok := ds["S3DataSource"].(map[string]any); ok {
					out = append(out, s3["S3Uri"])
				}
			}
		}
	}
	if ti, ok := a["TransformInput"].(map[string]any); ok {
		if ds, ok := ti["DataSource"].(map[string]any); ok {
			if s3, ok := ds["S3DataSource"].(map[string]any); ok {
				out = append(out, s3["S3Uri"])
			}
		}
	}
	return out
}

// executionID is a fresh pipeline execution id (12 lowercase characters,
// as SageMaker's).
func executionID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// tarEntries lists the top-level .py files of a gzipped tarball.
func tarEntries(data []byte) []string {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	tr := tar.NewReader(gz)
	var out []string
	for {
		h, err := tr.Next()
		if err != nil {
			return out
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag == tar.TypeReg && !strings.Contains(name, "/") && strings.HasSuffix(name, ".py") {
			out = append(out, name)
		}
	}
}
