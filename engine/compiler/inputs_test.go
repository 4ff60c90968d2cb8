package compiler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
	"github.com/cursus-dev/cursus/engine/steps"
)

const exampleRoot = "../.."

// exampleInput is the example project's DAG and configs over the
// repository as workspace.
func exampleInput(t *testing.T) Input {
	t.Helper()
	c, s := fixtures(t)
	data, err := os.ReadFile(exampleRoot + "/examples/xgboost-tabular/dag.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	f := enginetest.ConfigFile(t, os.DirFS(exampleRoot), "examples/xgboost-tabular/config.json", s)
	return Input{DAG: d, Configs: f.Configs, Catalog: c, Sources: os.DirFS(exampleRoot)}
}

// processingInput returns the named ProcessingInput of a step, as the
// encoded definition has it.
func processingInput(t *testing.T, def []byte, step, input string) (map[string]any, bool) {
	t.Helper()
	var doc struct {
		Steps []struct {
			Name      string
			Arguments struct {
				ProcessingInputs []struct {
					InputName string
					S3Input   map[string]any
				}
			}
		}
	}
	if err := json.Unmarshal(def, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Steps {
		if s.Name != step {
			continue
		}
		for _, in := range s.Arguments.ProcessingInputs {
			if in.InputName == input {
				return in.S3Input, true
			}
		}
		return nil, false
	}
	t.Fatalf("no step %s in the definition", step)
	return nil, false
}

func inputArtifacts(res *Result) []Artifact {
	var out []Artifact
	for _, a := range res.Artifacts {
		if a.Kind == KindInput {
			out = append(out, a)
		}
	}
	return out
}

var folderPrefix = regexp.MustCompile(`^s3://([^/]+)/(.+/code/[0-9a-f]{64}/inference/)$`)

// The example's Package step reads its inference folder from an S3 prefix
// holding the folder's files, each of which is an artifact in the manifest.
func TestExamplePackageInputIsUploadedFolder(t *testing.T) {
	res, err := Compile(context.Background(), exampleInput(t))
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	in, ok := processingInput(t, res.JSON, "Package", "inference_scripts_input")
	if !ok {
		t.Fatalf("Package has no inference_scripts_input; warnings %v", res.Warnings)
	}
	uri, _ := in["S3Uri"].(string)
	m := folderPrefix.FindStringSubmatch(uri)
	if m == nil || m[1] != res.Bucket || !strings.HasPrefix(m[2], res.PipelineName+"/code/") {
		t.Fatalf("S3Uri %q is not a content-addressed folder prefix in bucket %s", in["S3Uri"], res.Bucket)
	}
	if in["S3DataType"] != "S3Prefix" || in["LocalPath"] != "/opt/ml/processing/input/script" {
		t.Fatalf("input %v", in)
	}
	// Every file of the folder on disk is an artifact under the prefix,
	// with its bytes, and nothing else is.
	folder := "examples/xgboost-tabular/scripts/inference"
	want := map[string][]byte{}
	err = fs.WalkDir(os.DirFS(exampleRoot), folder, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			want[p], err = os.ReadFile(exampleRoot + "/" + p)
		}
		return err
	})
	if err != nil || len(want) == 0 {
		t.Fatalf("example folder %s: %v (%d files)", folder, err, len(want))
	}
	manifest := res.Manifest()
	arts := inputArtifacts(res)
	if len(arts) != len(want) {
		t.Fatalf("%d input artifacts for %d files: %+v", len(arts), len(want), arts)
	}
	for _, a := range arts {
		data, ok := want[a.Local]
		if !ok || !bytes.Equal(data, a.Data) {
			t.Errorf("artifact %s (%s) does not match a file of the folder", a.Local, a.Key)
		}
		rel := strings.TrimPrefix(a.Local, folder+"/")
		if a.S3URI != uri+rel || a.Key != m[2]+rel || !slices.Equal(a.Steps, []string{"Package"}) {
			t.Errorf("artifact %s at %s (steps %v), want %s", a.Local, a.S3URI, a.Steps, uri+rel)
		}
		if manifest[a.Local] != a.S3URI {
			t.Errorf("manifest[%s] = %q, want %q", a.Local, manifest[a.Local], a.S3URI)
		}
	}
	again, err := Compile(context.Background(), exampleInput(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.JSON, again.JSON) {
		t.Fatal("two compiles of the example differ")
	}
	a, b := inputArtifacts(res), inputArtifacts(again)
	for i := range a {
		if a[i].Key != b[i].Key || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("artifact %d differs between compiles: %s vs %s", i, a[i].Key, b[i].Key)
		}
	}
}

// packageWorkspace is a workspace for the e2e DAG whose Package step ships
// inference/ (relative to the script processors' source directory, the
// root), with entries the upload must leave out.
func packageWorkspace(t *testing.T) (Input, fstest.MapFS) {
	t.Helper()
	in := sampleInputWith(t, e2eDAG(), map[string]map[string]any{
		"XGBoostTraining": {"source_dir": "xgb"}, "XGBoostModelEval_calibration": {"source_dir": "xgb"}})
	src := scripts(in)
	src["inference/inference.py"] = &fstest.MapFile{Data: []byte("def model_fn(d):\n    return d\n")}
	src["inference/lib/util.py"] = &fstest.MapFile{Data: []byte("X = 1\n")}
	src["inference/.env"] = &fstest.MapFile{Data: []byte("SECRET=1\n")}
	src["inference/__pycache__/util.cpython-311.pyc"] = &fstest.MapFile{Data: []byte{0, 1}}
	src["inference/link.py"] = &fstest.MapFile{Data: []byte("inference.py"), Mode: fs.ModeSymlink}
	in.Sources = src
	return in, src
}

func TestChangingOneInputFileChangesOnlyItsFolderPrefix(t *testing.T) {
	in, src := packageWorkspace(t)
	before, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, before.JSON)
	var locals []string
	for _, a := range inputArtifacts(before) {
		locals = append(locals, a.Local)
	}
	if !slices.Equal(locals, []string{"inference/inference.py", "inference/lib/util.py"}) {
		t.Fatalf("uploaded %v; hidden files, __pycache__ and symlinks must be left out", locals)
	}
	oldIn, _ := processingInput(t, before.JSON, "Package", "inference_scripts_input")
	oldURI, _ := oldIn["S3Uri"].(string)
	if folderPrefix.FindStringSubmatch(oldURI) == nil {
		t.Fatalf("S3Uri %q", oldURI)
	}

	src["inference/lib/util.py"] = &fstest.MapFile{Data: []byte("X = 2\n")}
	after, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	newIn, _ := processingInput(t, after.JSON, "Package", "inference_scripts_input")
	newURI, _ := newIn["S3Uri"].(string)
	if newURI == oldURI || folderPrefix.FindStringSubmatch(newURI) == nil {
		t.Fatalf("prefix %q → %q", oldURI, newURI)
	}
	// The definition differs by the folder's prefix only…
	if !bytes.Equal(bytes.ReplaceAll(before.JSON, []byte(oldURI), []byte(newURI)), after.JSON) {
		t.Fatal("the definitions differ by more than the folder's prefix")
	}
	// …and every other artifact keeps its key.
	oldPrefix, newPrefix := strings.TrimPrefix(oldURI, "s3://"+before.Bucket+"/"), strings.TrimPrefix(newURI, "s3://"+after.Bucket+"/")
	for _, k := range diffKeys(before.Artifacts, after.Artifacts) {
		if !strings.HasPrefix(k, newPrefix) {
			t.Errorf("key %s changed outside the folder", k)
		}
	}
	for _, k := range diffKeys(after.Artifacts, before.Artifacts) {
		if !strings.HasPrefix(k, oldPrefix) {
			t.Errorf("key %s disappeared outside the folder", k)
		}
	}
	if len(before.Artifacts) != len(after.Artifacts) {
		t.Fatalf("%d artifacts before, %d after", len(before.Artifacts), len(after.Artifacts))
	}
}

// Each uploaded file reaches S3 once, and the pipeline SageMaker receives
// names the prefix they are under.
func TestInputFolderUploadsOnce(t *testing.T) {
	in, _ := packageWorkspace(t)
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	f := sagemakertest.NewFakeAWS(t)
	if _, err := Upsert(context.Background(), fakeDeployer(t, f), res, ""); err != nil {
		t.Fatal(err)
	}
	arts := inputArtifacts(res)
	if len(arts) != 2 || f.Count("PutObject") != len(res.Artifacts) {
		t.Fatalf("%d input artifacts, %d PutObject for %d artifacts", len(arts), f.Count("PutObject"), len(res.Artifacts))
	}
	for _, a := range arts {
		if got, ok := f.Object(a.Bucket, a.Key); !ok || !bytes.Equal(got, a.Data) {
			t.Fatalf("%s not uploaded intact", a.Key)
		}
	}
	stored, _ := f.Pipeline(res.PipelineName)
	in0, _ := processingInput(t, []byte(stored), "Package", "inference_scripts_input")
	if uri, _ := in0["S3Uri"].(string); !strings.HasPrefix(arts[0].S3URI, uri) || uri == "" {
		t.Fatalf("deployed S3Uri %v does not hold %s", in0["S3Uri"], arts[0].S3URI)
	}
}

func TestMissingOptionalInputFolderIsDropped(t *testing.T) {
	for name, src := range map[string]func(fstest.MapFS){
		"does not exist": func(fstest.MapFS) {},
		"has no files to upload": func(m fstest.MapFS) {
			m["inference/.hidden"] = &fstest.MapFile{Data: []byte("x")}
			m["inference/__pycache__/a.pyc"] = &fstest.MapFile{Data: []byte("x")}
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := sampleInput(t, e2eDAG())
			fsys := scripts(in)
			src(fsys)
			in.Sources = fsys
			res, err := Compile(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			sagemakertest.MustValidate(t, res.JSON)
			if in, ok := processingInput(t, res.JSON, "Package", "inference_scripts_input"); ok {
				t.Fatalf("input kept: %v", in)
			}
			if _, ok := processingInput(t, res.JSON, "Package", "model_input"); !ok {
				t.Fatal("the other inputs must stay")
			}
			var warned bool
			for _, w := range res.Warnings {
				warned = warned || strings.Contains(w, `node "Package"`) && strings.Contains(w, "inference_scripts_input_path") &&
					strings.Contains(w, `"inference"`) && strings.Contains(w, name)
			}
			if !warned {
				t.Fatalf("no warning naming the node, field and path: %v", res.Warnings)
			}
			for _, a := range res.Artifacts {
				if a.Kind == KindInput {
					t.Fatalf("artifact %+v for a dropped input", a)
				}
			}
			for _, s := range res.Steps {
				if _, ok := s.Inputs["inference_scripts_input"]; ok && s.Node == "Package" {
					t.Fatalf("report lists the dropped input: %v", s.Inputs)
				}
			}
		})
	}
}

// requiredPackage is the catalog with Package's inference scripts input
// made required.
type requiredPackage struct {
	Catalog
	pkg *steps.Interface
}

func (c requiredPackage) Get(name string) (*steps.Interface, bool) {
	if name == "Package" {
		return c.pkg, true
	}
	return c.Catalog.Get(name)
}

func TestMissingRequiredInputFolderIsAnError(t *testing.T) {
	in := sampleInput(t, e2eDAG())
	in.Sources = scripts(in)
	yml, err := os.ReadFile(exampleRoot + "/engine/steps/catalog/package.step.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const optional = "      required: false\n      compatible_sources: [UserProvided]"
	if !bytes.Contains(yml, []byte(optional)) {
		t.Fatal("package.step.yaml no longer declares the inference scripts input as optional")
	}
	pkg, err := steps.Parse("package.step.yaml", bytes.Replace(yml, []byte(optional), []byte(strings.Replace(optional, "false", "true", 1)), 1))
	if err != nil {
		t.Fatal(err)
	}
	if dep, _ := pkg.Spec.Dependencies.Get("inference_scripts_input"); !dep.IsRequired() {
		t.Fatal("the edited interface's input is still optional")
	}
	in.Catalog = requiredPackage{Catalog: in.Catalog, pkg: pkg}
	_, err = Compile(context.Background(), in)
	var be *BuildError
	if !errors.As(err, &be) || be.Node != "Package" || !strings.Contains(err.Error(), "inference_scripts_input_path") ||
		!strings.Contains(err.Error(), "inference does not exist") {
		t.Fatalf("want a build error naming the field and path, got %v", err)
	}
}

func TestS3InputOverrideIsPassedThrough(t *testing.T) {
	const uri = "s3://my-bucket/shared/inference/"
	in := sampleInputWith(t, e2eDAG(), map[string]map[string]any{"Package": {"inference_scripts_input_path": uri}})
	in.Sources = scripts(in)
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	got, ok := processingInput(t, res.JSON, "Package", "inference_scripts_input")
	if !ok || got["S3Uri"] != uri || got["S3DataType"] != "S3Prefix" {
		t.Fatalf("input %v", got)
	}
	if arts := inputArtifacts(res); len(arts) != 0 {
		t.Fatalf("an s3:// input uploads nothing, got %+v", arts)
	}
}

// A config path naming one file ships that file as one content-addressed
// object, and the input reads it.
func TestSingleFileInputIsOneObject(t *testing.T) {
	in := sampleInputWith(t, e2eDAG(), map[string]map[string]any{"Package": {"inference_scripts_input_path": "./serve/inference.py"}})
	src := scripts(in)
	body := []byte("def model_fn(d):\n    return 1\n")
	src["serve/inference.py"] = &fstest.MapFile{Data: body}
	in.Sources = src
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	arts := inputArtifacts(res)
	if len(arts) != 1 || arts[0].Local != "serve/inference.py" || !bytes.Equal(arts[0].Data, body) ||
		arts[0].Key != res.PipelineName+"/code/"+digestOf(body)+"/inference.py" {
		t.Fatalf("artifacts %+v", arts)
	}
	got, _ := processingInput(t, res.JSON, "Package", "inference_scripts_input")
	if got["S3Uri"] != arts[0].S3URI {
		t.Fatalf("S3Uri %v, want %s", got["S3Uri"], arts[0].S3URI)
	}
	if res.Manifest()["serve/inference.py"] != arts[0].S3URI {
		t.Fatalf("manifest %v", res.Manifest())
	}
}

func TestBadInputPathsAreErrors(t *testing.T) {
	for value, want := range map[string]string{
		"/etc/inference":  "must be an s3:// URI or a path relative",
		"../../elsewhere": "leaves the workspace",
	} {
		in := sampleInputWith(t, e2eDAG(), map[string]map[string]any{"Package": {"inference_scripts_input_path": value}})
		in.Sources = scripts(in)
		_, err := Compile(context.Background(), in)
		var be *BuildError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "inference_scripts_input_path") {
			t.Errorf("%s: want a build error %q, got %v", value, want, err)
		}
	}
}

// Folders of the same files have the same address whatever order they are
// read in; renaming or changing a file changes it.
func TestDirDigest(t *testing.T) {
	a := map[string][]byte{"x.py": []byte("1"), "lib/y.py": []byte("2")}
	same := map[string][]byte{"lib/y.py": []byte("2"), "x.py": []byte("1")}
	renamed := map[string][]byte{"x2.py": []byte("1"), "lib/y.py": []byte("2")}
	changed := map[string][]byte{"x.py": []byte("1"), "lib/y.py": []byte("3")}
	// "a" + "bc" vs "ab" + "c": the path/content boundary is part of the encoding.
	shifted1 := map[string][]byte{"a": []byte("bc")}
	shifted2 := map[string][]byte{"ab": []byte("c")}
	if dirDigest(a) != dirDigest(same) {
		t.Fatal("order changed the digest")
	}
	for _, other := range []map[string][]byte{renamed, changed} {
		if dirDigest(a) == dirDigest(other) {
			t.Fatalf("%v and %v share a digest", a, other)
		}
	}
	if dirDigest(shifted1) == dirDigest(shifted2) {
		t.Fatal("path and content boundary is ambiguous")
	}
}
