package localrun

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// remotePipeline is the tiny pipeline's Prep step alone, reading its data
// from s3://in/data/ and writing under the execution-scoped prefix
// s3://b/tiny/run/<execution id>/prep/<output>.
func remotePipeline(t *testing.T) (map[string]any, []Code) {
	t.Helper()
	def, code := tinyPipeline(t)
	prep := stepOf(def, "Prep")
	a := prep["Arguments"].(map[string]any)
	a["ProcessingInputs"].([]any)[0].(map[string]any)["S3Input"].(map[string]any)["S3Uri"] = "s3://in/data/"
	for _, o := range a["ProcessingOutputConfig"].(map[string]any)["Outputs"].([]any) {
		om := o.(map[string]any)
		om["S3Output"].(map[string]any)["S3Uri"] = join(get("Parameters.Prefix"), get("Execution.PipelineExecutionId"), "prep", om["OutputName"])
	}
	def["Steps"] = []any{prep}
	return def, code[:1]
}

func fakeRemote(t *testing.T, endpoint string) *sagemaker.Client {
	t.Helper()
	c, err := sagemaker.NewClient(context.Background(), sagemaker.ClientOptions{Region: "us-east-1", S3Endpoint: endpoint, MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runRemote(t *testing.T, def map[string]any, code []Code, remote Remote, objects string) *Report {
	t.Helper()
	b, _ := json.Marshal(def)
	rep, err := testRunner(t, Settings{}).Run(context.Background(), Request{Definition: b, Code: code, Remote: remote, ObjectDir: objects})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The run reads its input from S3 (paging through the listing, keeping a
// sibling prefix out) and writes each output through to S3 under the
// execution's prefix; code stays local.
func TestRemoteReadsInputsAndWritesOutputsThrough(t *testing.T) {
	needRuntime(t)
	fake := sagemakertest.NewFakeAWS(t)
	rows := strings.Split(strings.TrimSpace(string(tinySample())), "\n")
	part := func(from, to int) []byte { return []byte(rows[0] + "\n" + strings.Join(rows[from:to], "\n") + "\n") }
	fake.PutObject("in", "data/a.csv", part(1, 21))
	fake.PutObject("in", "data/b.csv", part(21, 41))
	fake.PutObject("in", "data/c.csv", part(41, 61))
	fake.PutObject("in", "data/sub/d.csv", part(1, 3))   // nested: laid out below the input
	fake.PutObject("in", "data-other/x.csv", part(1, 3)) // shares the prefix "data", not under data/
	def, code := remotePipeline(t)
	objects := t.TempDir()
	rep := runRemote(t, def, code, fakeRemote(t, fake.URL()), objects)
	if !rep.OK {
		t.Fatalf("not ok: %+v\n%s", rep.FirstFailure, logs(rep))
	}
	if tail := rep.Steps[0].LogTail; !strings.Contains(tail, "prep wrote 60 rows") {
		t.Errorf("prep read the wrong rows: %q", tail)
	}
	if fake.Count("ListObjectsV2") < 2 {
		t.Errorf("listing was not paged: %d ListObjectsV2 calls", fake.Count("ListObjectsV2"))
	}
	prefix := "tiny/run/" + rep.PipelineExecutionID + "/prep/"
	for _, key := range []string{"train/train.csv", "infer/infer.csv", "payload/payload.tar.gz"} {
		remote, ok := fake.Object("b", prefix+key)
		if !ok {
			t.Errorf("s3://b/%s%s was not written through; the fake holds %q", prefix, key, fake.Keys())
			continue
		}
		local, err := os.ReadFile(objects + "/b/" + prefix + key)
		if err != nil || string(local) != string(remote) {
			t.Errorf("%s: the working copy differs from S3 (%v)", key, err)
		}
	}
	for _, k := range fake.Keys() {
		if strings.Contains(k, "/code/") {
			t.Errorf("code object %s was written to S3", k)
		}
	}
	if _, err := os.Stat(objects + "/in/data/sub/d.csv"); err != nil {
		t.Errorf("a nested input object was not read: %v", err)
	}
	if _, err := os.Stat(objects + "/in/data-other/x.csv"); err == nil {
		t.Error("an object beside the input prefix was read")
	}
	if !strings.Contains(rep.Storage, "S3") {
		t.Errorf("storage = %q", rep.Storage)
	}
}

// An input object missing from S3 fails the step with a remedy naming
// its URI; no sample data stands in for it.
func TestRemoteMissingInputFailsNamingURI(t *testing.T) {
	needRuntime(t)
	fake := sagemakertest.NewFakeAWS(t)
	def, code := remotePipeline(t)
	rep := runRemote(t, def, code, fakeRemote(t, fake.URL()), "")
	f := rep.FirstFailure
	if rep.OK || f == nil || f.Step != "Prep" || !strings.Contains(f.Remedy, "s3://in/data/") || !strings.Contains(f.Reason, "s3://in/data/") ||
		f.Field != "Arguments.ProcessingInputs[0].S3Input.S3Uri" {
		t.Fatalf("failure = %+v", f)
	}
	if rep.Steps[0].Status != StatusFailed {
		t.Errorf("status %s", rep.Steps[0].Status)
	}
}

// An unreachable S3 fails the step saying so, never naming the endpoint.
func TestRemoteUnreachableHidesEndpoint(t *testing.T) {
	needRuntime(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	def, code := remotePipeline(t)
	rep := runRemote(t, def, code, fakeRemote(t, endpoint), "")
	f := rep.FirstFailure
	if rep.OK || f == nil || f.Step != "Prep" || !strings.Contains(f.Reason, "could not reach S3") || !strings.Contains(f.Remedy, "could not be reached") {
		t.Fatalf("failure = %+v", f)
	}
	b, _ := json.Marshal(rep)
	if host := l.Addr().String(); strings.Contains(string(b), host) || strings.Contains(string(b), "127.0.0.1") {
		t.Errorf("the report names the endpoint: %s", b)
	}
}

// A key the working copy cannot hold safely (a ".." segment) fails the
// step naming it; nothing is written outside the store.
func TestRemoteUnsafeKeyRefused(t *testing.T) {
	needRuntime(t)
	fake := sagemakertest.NewFakeAWS(t)
	fake.PutObject("in", "data/ok.csv", tinySample())
	fake.PutObject("in", "data/../../escape.csv", tinySample())
	def, code := remotePipeline(t)
	objects := t.TempDir() + "/s3"
	rep := runRemote(t, def, code, fakeRemote(t, fake.URL()), objects)
	if rep.OK || rep.FirstFailure == nil || !strings.Contains(rep.FirstFailure.Reason, "data/../../escape.csv") {
		t.Fatalf("failure = %+v", rep.FirstFailure)
	}
	if _, err := os.Stat(objects + "/../escape.csv"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an object escaped the store: %v", err)
	}
}

// Objects read from S3 count against the run's storage limit.
func TestRemoteReadsCountAgainstStorageLimit(t *testing.T) {
	needRuntime(t)
	fake := sagemakertest.NewFakeAWS(t)
	fake.PutObject("in", "data/big.csv", make([]byte, 64<<10))
	def, code := remotePipeline(t)
	b, _ := json.Marshal(def)
	_, err := testRunner(t, Settings{MaxStorageBytes: 32 << 10}).Run(context.Background(), Request{Definition: b, Code: code, Remote: fakeRemote(t, fake.URL())})
	if _, ok := errors.AsType[*StorageError](err); !ok {
		t.Fatalf("err = %v, want a StorageError", err)
	}
}
