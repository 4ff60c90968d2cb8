package serving

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"strings"
	"testing"
)

// runJob splits one input, batches it and assembles the given answers
// (one per mini-batch) without a model: the record handling alone.
func runJob(t *testing.T, tj TransformJob, input string, answer func(payload string) string) (string, []string, error) {
	t.Helper()
	j, err := tj.validate()
	if err != nil {
		return "", nil, err
	}
	recs, err := j.records("in", []byte(input))
	if err != nil {
		return "", nil, err
	}
	var out bytes.Buffer
	var payloads []string
	done := 0
	for len(recs) > 0 {
		n, payload, err := j.batch("in", recs)
		if err != nil {
			return "", nil, err
		}
		payloads = append(payloads, string(payload))
		if err := j.assemble(&out, recs[:n], []byte(answer(string(payload))), "in", done); err != nil {
			return "", payloads, err
		}
		done += n
		recs = recs[n:]
	}
	return out.String(), payloads, nil
}

// scores answers one line per payload line: "0.<n>".
func scores(payload string) string {
	var b strings.Builder
	for i := range strings.Split(payload, "\n") {
		b.WriteString("0." + string(rune('1'+i)) + "\n")
	}
	return b.String()
}

func TestTransformRecordHandling(t *testing.T) {
	csvJob := TransformJob{ContentType: "text/csv", SplitType: "Line", Accept: "text/csv", AssembleWith: "Line"}
	for _, tc := range []struct {
		name     string
		job      func(TransformJob) TransformJob
		input    string
		answer   func(string) string
		want     string
		payloads []string
		err      string
		field    string
	}{{
		name: "multi-record batches, input filter, join, output filter",
		job: func(j TransformJob) TransformJob {
			j.DataProcessing = DataProcessing{"$[2:]", "Input", "$[0,1,-1]"}
			return j
		},
		input:    "1,0,a,b\n2,1,c,\"d,e\"\n",
		answer:   scores,
		payloads: []string{"a,b\nc,\"d,e\""},
		want:     "1,0,0.1\n2,1,0.2\n",
	}, {
		name: "single record",
		job: func(j TransformJob) TransformJob {
			j.BatchStrategy = "SingleRecord"
			j.DataProcessing.JoinSource = "Input"
			return j
		},
		input:    "1,x\n2,y",
		answer:   scores,
		payloads: []string{"1,x", "2,y"},
		want:     "1,x,0.1\n2,y,0.1\n",
	}, {
		name:     "no DataProcessing: answers assembled line by line",
		job:      func(j TransformJob) TransformJob { return j },
		input:    "1,x\r\n2,y\r\n",
		answer:   scores,
		payloads: []string{"1,x\n2,y"},
		want:     "0.1\n0.2\n",
	}, {
		name:   "AssembleWith None and no processing: answers as they came",
		job:    func(j TransformJob) TransformJob { j.AssembleWith = "None"; return j },
		input:  "1,x\n2,y\n",
		answer: func(string) string { return "A" },
		want:   "A",
	}, {
		name:   "join needs one answer line per record",
		job:    func(j TransformJob) TransformJob { j.DataProcessing.JoinSource = "Input"; return j },
		input:  "1,x\n2,y\n",
		answer: func(string) string { return "0.5\n" },
		err:    "answered 1 lines for 2 records",
		field:  "DataProcessing.JoinSource",
	}, {
		name:   "input filter outside the record",
		job:    func(j TransformJob) TransformJob { j.DataProcessing.InputFilter = "$[3]"; return j },
		input:  "1,x\n",
		answer: scores,
		err:    "record 1: $[3]: index 3 is outside",
		field:  "DataProcessing.InputFilter",
	}, {
		name: "CSV DataProcessing needs SplitType Line",
		job: func(j TransformJob) TransformJob {
			j.SplitType = "None"
			j.DataProcessing.JoinSource = "Input"
			return j
		},
		input: "1,x\n",
		err:   "needs SplitType Line",
		field: "TransformInput.SplitType",
	}, {
		name: "CSV DataProcessing needs AssembleWith Line",
		job: func(j TransformJob) TransformJob {
			j.AssembleWith = "None"
			j.DataProcessing.OutputFilter = "$[0]"
			return j
		},
		input: "1,x\n",
		err:   "needs AssembleWith Line",
		field: "TransformOutput.AssembleWith",
	}, {
		name:  "a filter SageMaker refuses",
		job:   func(j TransformJob) TransformJob { j.DataProcessing.InputFilter = "$[0:1,3:]"; return j },
		input: "1,x\n",
		err:   "only single range filters",
		field: "DataProcessing.InputFilter",
	}, {
		name:  "a record over MaxPayloadInMB",
		job:   func(j TransformJob) TransformJob { j.MaxPayloadInMB = 1; return j },
		input: strings.Repeat("x", 1<<20+1) + "\n",
		err:   "more than MaxPayloadInMB",
		field: "MaxPayloadInMB",
	}, {
		name:  "unknown split type",
		job:   func(j TransformJob) TransformJob { j.SplitType = "RecordIO"; return j },
		err:   "not emulated",
		field: "TransformInput.SplitType",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, payloads, err := runJob(t, tc.job(csvJob), tc.input, tc.answer)
			if tc.err != "" {
				wantKind(t, err, kindOf(err), tc.field, tc.err)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if tc.payloads != nil && strings.Join(payloads, "|") != strings.Join(tc.payloads, "|") {
				t.Fatalf("payloads %q, want %q", payloads, tc.payloads)
			}
		})
	}
}

// TestTransformJSONJoin: a JSON object gets the answer under
// SageMakerOutput (after its own members); any other value is wrapped
// with SageMakerInput.
func TestTransformJSONJoin(t *testing.T) {
	tj := TransformJob{ContentType: "application/jsonlines", SplitType: "Line", Accept: "application/jsonlines", AssembleWith: "Line",
		DataProcessing: DataProcessing{InputFilter: "$.features", JoinSource: "Input", OutputFilter: "$['id','SageMakerOutput']"}}
	got, payloads, err := runJob(t, tj, `{"id":1,"features":[1,2],"x":true}`+"\n"+`{"id":2,"features":[3,4],"x":false}`,
		func(string) string { return "{\"score\":0.5}\n{\"score\":0.25}\n" })
	if err != nil {
		t.Fatal(err)
	}
	if payloads[0] != "[1,2]\n[3,4]" {
		t.Errorf("payload %q", payloads[0])
	}
	if want := `{"id":1,"SageMakerOutput":{"score":0.5}}` + "\n" + `{"id":2,"SageMakerOutput":{"score":0.25}}` + "\n"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	tj.DataProcessing = DataProcessing{JoinSource: "Input"}
	got, _, err = runJob(t, tj, "[1,2]\n", func(string) string { return "0.5\n" })
	if err != nil || got != `{"SageMakerInput":[1,2],"SageMakerOutput":0.5}`+"\n" {
		t.Fatalf("got %s, %v", got, err)
	}
}

// TestArchivesStayInside: a model archive cannot write outside the
// directory it is unpacked into, nor plant links.
func TestArchivesStayInside(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  tar.Header
		want string
	}{
		{"parent", tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Size: 1}, "points outside"},
		{"absolute", tar.Header{Name: "/etc/evil", Typeflag: tar.TypeReg, Size: 1}, "points outside"},
		{"symlink", tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, "symbolic link"},
		{"hardlink", tar.Header{Name: "link", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}, "hard link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			tc.hdr.Mode = 0o644
			tw.WriteHeader(&tc.hdr)
			if tc.hdr.Size > 0 {
				tw.Write([]byte("x"))
			}
			tw.Close()
			zw.Close()
			dir := t.TempDir()
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			root.MkdirAll("m", 0o700)
			err = extractTarGz(context.Background(), root, "m", buf.Bytes(), 1<<20, "ModelDataUrl")
			wantKind(t, err, KindArchive, "ModelDataUrl", tc.want)
		})
	}
	dir := t.TempDir()
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	root.MkdirAll("m", 0o700)
	big := tarGz(t, map[string][]byte{"a": bytes.Repeat([]byte("x"), 2048)})
	wantKind(t, extractTarGz(context.Background(), root, "m", big, 1024, "ModelDataUrl"), KindLimit, "ModelDataUrl")
}
