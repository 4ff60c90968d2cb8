package localrun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// leftovers fails the test when the run left anything in its temporary
// directory.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

func TestBadInput(t *testing.T) {
	needRuntime(t)
	def, code := tinyPipeline(t)
	good, _ := json.Marshal(def)
	tmp := t.TempDir()
	r := testRunner(t, Settings{MaxSampleBytes: 1 << 10, TempDir: tmp})
	cases := []struct {
		name  string
		req   Request
		field string
		want  string
	}{
		{"not JSON", Request{Definition: []byte("steps:\n- a"), Code: code}, "definition", "not a JSON object"},
		{"not a definition", Request{Definition: []byte(`{"nodes": ["A"], "edges": []}`), Code: code}, "definition", "no Steps"},
		{"a cycle", Request{Definition: []byte(`{"Steps": [{"Name": "A", "Type": "Processing", "DependsOn": ["B"]}, {"Name": "B", "Type": "Processing", "DependsOn": ["A"]}]}`)}, "definition.Steps", "cycle"},
		{"manifest missing an artifact", Request{Definition: good, Code: code[:1], SampleData: map[string][]byte{"s.csv": []byte("id\n1\n")}}, "manifest", "sourcedir.tar.gz"},
		{"sample data too large", Request{Definition: good, Code: code, SampleData: map[string][]byte{"big.csv": make([]byte, 2<<10)}}, "sample_data", "1024-byte limit"},
		{"sample name escapes", Request{Definition: good, Code: code, SampleData: map[string][]byte{"../x.csv": []byte("a\n")}}, "sample_data", "plain relative path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := r.Run(context.Background(), c.req)
			var ie *InputError
			if !errors.As(err, &ie) || rep != nil {
				t.Fatalf("got %v, %v; want an InputError", rep, err)
			}
			if ie.Field != c.field || !strings.Contains(ie.Error(), c.want) {
				t.Errorf("error %q (field %s), want field %s saying %q", ie.Error(), ie.Field, c.field, c.want)
			}
			leftovers(t, tmp)
		})
	}
}

func TestManifestIsCheckedAgainstContentAddresses(t *testing.T) {
	prep, _ := os.ReadFile("testdata/tiny/prep.py")
	read := os.DirFS("testdata")
	uri := codeURIOf(prep, "prep.py")
	code, err := CodeFromManifest(context.Background(), map[string]string{"tiny/prep.py": uri}, read)
	if err != nil || len(code) != 1 || string(code[0].Data) != string(prep) {
		t.Fatalf("%v %v", code, err)
	}
	// The same key, other content: refused.
	var ie *InputError
	if _, err := CodeFromManifest(context.Background(), map[string]string{"tiny/train.py": uri}, read); !errors.As(err, &ie) || !strings.Contains(err.Error(), "does not match its content address") {
		t.Errorf("changed source: %v", err)
	}
	if _, err := CodeFromManifest(context.Background(), map[string]string{"tiny/gone.py": uri}, read); !errors.As(err, &ie) || !strings.Contains(err.Error(), "not in the call's files") {
		t.Errorf("missing source: %v", err)
	}
	if _, err := CodeFromManifest(context.Background(), map[string]string{"tiny/prep.py": "s3://b/x/prep.py"}, read); !errors.As(err, &ie) {
		t.Errorf("not a code URI: %v", err)
	}
}

func TestAHangingScriptTimesOutAndIsCleanedUp(t *testing.T) {
	needRuntime(t)
	def, code := tinyPipeline(t)
	args(def, "Prep")["AppSpecification"].(map[string]any)["ContainerEntrypoint"] = []any{"python3", "-c",
		"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(601)']); time.sleep(600)"}
	tmp := t.TempDir()
	r := testRunner(t, Settings{StepTimeout: 3 * time.Second, TempDir: tmp})
	b, _ := json.Marshal(def)
	start := time.Now()
	rep, err := r.Run(context.Background(), Request{Definition: b, Code: code, SampleData: map[string][]byte{"s.csv": tinySample()}})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Step != "Prep" {
		t.Fatalf("got %v; want a TimeoutError at Prep", err)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("the run took %s past a 3s step limit", took)
	}
	if rep == nil || rep.OK || rep.FirstFailure == nil || rep.FirstFailure.Step != "Prep" || stepReport(t, rep, "Train").Status != StatusSkipped {
		t.Fatalf("report: %+v", rep)
	}
	leftovers(t, tmp)
	// The script's child went with it.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "time.sleep(601)") {
			t.Errorf("left running: %s %q", p, b)
		}
	}
}

func TestAScriptFillingTheDiskIsAStorageError(t *testing.T) {
	needRuntime(t)
	def, code := tinyPipeline(t)
	args(def, "Prep")["AppSpecification"].(map[string]any)["ContainerEntrypoint"] = []any{"python3", "-c",
		"f = open('/opt/ml/processing/output/train/big', 'wb')\nwhile True: f.write(b'0' * (1 << 20)); f.flush()"}
	tmp := t.TempDir()
	r := testRunner(t, Settings{MaxStorageBytes: 32 << 20, StepTimeout: time.Minute, TempDir: tmp})
	b, _ := json.Marshal(def)
	rep, err := r.Run(context.Background(), Request{Definition: b, Code: code, SampleData: map[string][]byte{"s.csv": tinySample()}})
	var se *StorageError
	if !errors.As(err, &se) || se.Step != "Prep" {
		t.Fatalf("got %v; want a StorageError at Prep", err)
	}
	if rep == nil || rep.OK || rep.FirstFailure == nil || rep.FirstFailure.Step != "Prep" {
		t.Fatalf("report: %+v", rep)
	}
	leftovers(t, tmp)
}

func TestCancelStopsTheRun(t *testing.T) {
	needRuntime(t)
	def, code := tinyPipeline(t)
	args(def, "Prep")["AppSpecification"].(map[string]any)["ContainerEntrypoint"] = []any{"python3", "-c", "import time; time.sleep(600)"}
	tmp := t.TempDir()
	r := testRunner(t, Settings{TempDir: tmp})
	b, _ := json.Marshal(def)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go func() { <-started; time.Sleep(time.Second); cancel() }()
	_, err := r.Run(ctx, Request{Definition: b, Code: code, SampleData: map[string][]byte{"s.csv": tinySample()},
		Progress: func(done, total int, msg string) {
			if done == 0 {
				close(started)
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	leftovers(t, tmp)
}

// A source tarball that unpacks past the storage limit stops the run
// before anything runs from it.
func TestASourceTarballBombIsAStorageError(t *testing.T) {
	needRuntime(t)
	def, code := tinyPipeline(t)
	train, _ := os.ReadFile("testdata/tiny/train.py")
	bomb := tarGzOf(t, map[string][]byte{"train.py": train, "zeros.bin": make([]byte, 48<<20)})
	uri := codeURIOf(bomb, "sourcedir.tar.gz")
	code[1] = Code{URI: uri, Data: bomb}
	args(def, "Train")["HyperParameters"].(map[string]any)["sagemaker_submit_directory"] = `"` + uri + `"`
	tmp := t.TempDir()
	r := testRunner(t, Settings{MaxStorageBytes: 32 << 20, TempDir: tmp})
	b, _ := json.Marshal(def)
	_, err := r.Run(context.Background(), Request{Definition: b, Code: code, SampleData: map[string][]byte{"s.csv": tinySample()}})
	var se *StorageError
	if !errors.As(err, &se) || se.Step != "Train" {
		t.Fatalf("got %v; want a StorageError at Train", err)
	}
	leftovers(t, tmp)
}
