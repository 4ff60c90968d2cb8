package serving

import (
	"bytes"
	"strings"
	"testing"
)

// TestPathOnCSVRecords: a CSV record is an array of its fields; the
// filters the developer guide shows select columns by index, slices
// include their end, negative indexes count from the end.
func TestPathOnCSVRecords(t *testing.T) {
	const rec = "7,1,0.5,a,x"
	for _, tc := range []struct{ path, want, err string }{
		{"$", "7,1,0.5,a,x", ""},
		{"", "7,1,0.5,a,x", ""},
		{"$[1:]", "1,0.5,a,x", ""},
		{"$[2:]", "0.5,a,x", ""},
		{"$[:1]", "7,1", ""},      // inclusive end: first and second column
		{"$[1:3]", "1,0.5,a", ""}, // "$[1:4] specifies the second through fifth columns"
		{"$[0,2]", "7,0.5", ""},   // union in the order written
		{"$[2,0]", "0.5,7", ""},   // ... even backwards
		{"$[-1]", "x", ""},        // the last column
		{"$[0,-1]", "7,x", ""},    // id and the appended score of a joined record
		{"$[0,3:]", "7,a,x", ""},  // an index and one range ("$[0,5:]" in the API docs)
		{"$[ 0 , 1 ]", "7,1", ""}, // spaces
		{"$[*]", "7,1,0.5,a,x", ""},
		{"$[5]", "", "index 5 is outside the record's 5 elements"},
		{"$[-6]", "", "index -6 is outside"},
		{"$[1:9]", "", "index 9 is outside"},
		{"$[0:1,3:]", "", "only single range filters"},
		{"$.id", "", "a CSV record is an array"},
		{"$['id','label']", "", "a CSV record is an array"},
		{"$..x", "", "recursive descent"},
		{"$[?(@>1)]", "", "filter and script expressions"},
		{"$[0:4:2]", "", "slice steps"},
		{"[1:]", "", "does not start with $"},
		{"$[1:", "", "unclosed ["},
		{"$[a]", "", "is not an index"},
		{"$[" + strings.Repeat("0,", 40) + "0]", "", "SageMaker allows 63"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := selectCSV(tc.path, rec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func selectCSV(path, rec string) (string, error) {
	p, err := ParsePath(path)
	if err != nil {
		return "", err
	}
	r, err := parseCSVRecord(rec)
	if err != nil {
		return "", err
	}
	v, err := p.Select(r)
	if err != nil {
		return "", err
	}
	return formatCSVRecord(v)
}

// TestPathOnJSONRecords: member selection, several members give an object
// of just those (in the order written), nested paths, wildcards.
func TestPathOnJSONRecords(t *testing.T) {
	const rec = `{"id":3,"features":[1.5,2,3],"meta":{"a":"x","b":true},"SageMakerOutput":{"score":0.25}}`
	for _, tc := range []struct{ path, want, err string }{
		{"$", rec, ""},
		{"$.features", `[1.5,2,3]`, ""},
		{"$.features[0]", `1.5`, ""},
		{"$.features[1:]", `[2,3]`, ""},
		{"$['id','SageMakerOutput']", `{"id":3,"SageMakerOutput":{"score":0.25}}`, ""},
		{"$['SageMakerOutput','id']", `{"SageMakerOutput":{"score":0.25},"id":3}`, ""},
		{"$.meta.*", `["x",true]`, ""},
		{"$.meta.['a','b']", `{"a":"x","b":true}`, ""},
		{"$.SageMakerOutput.score", `0.25`, ""},
		{"$.missing", "", `no member "missing"`},
		{"$['id','nope']", "", `no member "nope"`},
		{"$.meta.['a','b.c']", "", "may not nest a path"},
		{"$.id[0]", "", "an index selects an element of an array"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			p, err := ParsePath(tc.path)
			var got string
			if err == nil {
				var v any
				v, err = decodeJSON([]byte(rec))
				if err == nil {
					v, err = p.Select(v)
				}
				if err == nil {
					var b bytes.Buffer
					encodeJSON(&b, v)
					got = b.String()
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %s, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// TestCSVRecordsKeepQuoting: fields holding commas or quotes survive a
// filter and are written back quoted.
func TestCSVRecordsKeepQuoting(t *testing.T) {
	got, err := selectCSV("$[0,2]", `1,"a,b","say ""hi"""`)
	if err != nil || got != `1,"say ""hi"""` {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := parseCSVRecord("1,\"open"); err == nil {
		t.Fatal("an unclosed quote must not parse")
	}
}

func TestImageFramework(t *testing.T) {
	for _, tc := range []struct {
		image string
		want  Framework
		kind  Kind
	}{
		{"246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-xgboost:1.7-1", XGBoost, ""},
		{"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference:2.3.0-cpu-py311", PyTorch, ""},
		{"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference-graviton:2.3.0-cpu-py311-ubuntu20.04", PyTorch, ""},
		{"246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3", SKLearn, ""},
		{"727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/pytorch-inference@sha256:abc", PyTorch, ""},
		{"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3.0-cpu-py311", "", KindImage},
		{"123.dkr.ecr.us-east-1.amazonaws.com/my-own:latest", "", KindImage},
	} {
		got, err := ImageFramework(tc.image)
		if got != tc.want || kindOf(err) != tc.kind {
			t.Errorf("%s: got %q, %v; want %q, kind %q", tc.image, got, err, tc.want, tc.kind)
		}
	}
}
