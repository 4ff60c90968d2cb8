package compiler

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/pipelines"
)

// sharedCompiled compiles every built-in shared DAG with the sample
// configs and returns each entry with its decoded definition.
func sharedCompiled(t *testing.T, extra func(*pipelines.Entry, Input) Input) []compiledDAG {
	t.Helper()
	cat, probs, err := pipelines.Load()
	if err != nil || len(probs) > 0 {
		t.Fatalf("pipelines: %v %v", err, probs)
	}
	var out []compiledDAG
	for _, e := range cat.List() {
		in := sampleInput(t, e.DAG())
		if extra != nil {
			in = extra(e, in)
		}
		res, err := Compile(context.Background(), in)
		if err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		var def struct {
			Steps []struct {
				Name      string         `json:"Name"`
				Type      string         `json:"Type"`
				Arguments map[string]any `json:"Arguments"`
			} `json:"Steps"`
		}
		if err := json.Unmarshal(res.JSON, &def); err != nil {
			t.Fatal(err)
		}
		c := compiledDAG{entry: e, res: res}
		for _, s := range def.Steps {
			c.steps = append(c.steps, compiledStep{name: s.Name, typ: s.Type, args: s.Arguments})
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatal("no shared DAGs")
	}
	return out
}

type compiledDAG struct {
	entry *pipelines.Entry
	res   *Result
	steps []compiledStep
}

type compiledStep struct {
	name, typ string
	args      map[string]any
}

// at walks a decoded JSON value along keys (a number indexes a list).
func at(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// namesObject: the value is a reference to an S3 object, not a prefix: a
// training job's model artifact (which is model.tar.gz) or a join whose
// last part is a file name.
func namesObject(v any) bool {
	if g, ok := at(v, "Get").(string); ok {
		return strings.HasSuffix(g, ".ModelArtifacts.S3ModelArtifacts")
	}
	parts, _ := at(v, "Std:Join", "Values").([]any)
	if len(parts) == 0 {
		return false
	}
	last, _ := parts[len(parts)-1].(string)
	return strings.HasSuffix(last, ".tar.gz")
}

// Issue 21 item 1: RegisterModel (and CreateModel) name the artifact
// object the producer writes, not its output prefix.
func TestSharedDAGsRegisterModelObjects(t *testing.T) {
	registers, payloads := 0, 0
	for _, c := range sharedCompiled(t, nil) {
		for _, s := range c.steps {
			switch s.typ {
			case "RegisterModel":
				registers++
				for i, ctr := range at(s.args, "InferenceSpecification", "Containers").([]any) {
					if url := at(ctr, "ModelDataUrl"); !namesObject(url) {
						t.Errorf("%s %s: container %d ModelDataUrl is not an object: %v", c.entry.ID, s.name, i, url)
					}
				}
				if p, ok := s.args["SamplePayloadUrl"]; ok {
					payloads++
					j, _ := json.Marshal(p)
					if !namesObject(p) || !strings.HasSuffix(string(j), `"payload.tar.gz"]}}`) {
						t.Errorf("%s %s: SamplePayloadUrl is not payload.tar.gz: %s", c.entry.ID, s.name, j)
					}
				}
			case "Model":
				if url := at(s.args, "PrimaryContainer", "ModelDataUrl"); !namesObject(url) {
					t.Errorf("%s %s: ModelDataUrl is not an object: %v", c.entry.ID, s.name, url)
				}
			}
		}
	}
	if registers == 0 || payloads == 0 {
		t.Fatalf("no shared DAG registers a model with a payload (%d registrations, %d payloads)", registers, payloads)
	}
}

// imageRepoOf is the repository of an image URI (between "/" and ":").
func imageRepoOf(uri string) string {
	repo := uri[strings.Index(uri, "/")+1:]
	return repo[:strings.Index(repo, ":")]
}

// Issue 21 item 2: images and model class follow the training framework.
// LightGBM trains in the PyTorch container, so its model is served there.
func TestSharedDAGsFollowTheirTrainingFramework(t *testing.T) {
	inference := map[string]string{"xgboost": "sagemaker-xgboost", "lightgbm": "pytorch-inference", "pytorch": "pytorch-inference"}
	training := map[string]string{"xgboost": "sagemaker-xgboost", "lightgbm": "pytorch-training", "pytorch": "pytorch-training"}
	for _, c := range sharedCompiled(t, nil) {
		fw := c.entry.Framework
		if inference[fw] == "" {
			t.Fatalf("%s: framework %q has no expectation here", c.entry.ID, fw)
		}
		if !strings.Contains(c.res.PipelineName, "-"+fw+"-") {
			t.Errorf("%s: pipeline name %s does not carry model class %s", c.entry.ID, c.res.PipelineName, fw)
		}
		for _, w := range c.res.Warnings {
			if strings.Contains(w, "trained") || strings.Contains(w, "model family") {
				t.Errorf("%s: framework conflict reported on a consistent DAG: %s", c.entry.ID, w)
			}
		}
		for _, s := range c.steps {
			var image string
			want := inference[fw]
			switch s.typ {
			case "Training":
				image, want = at(s.args, "AlgorithmSpecification", "TrainingImage").(string), training[fw]
				if strings.HasSuffix(s.name, "-RepackModel") {
					want = "sagemaker-scikit-learn" // the SDK's model repack runs on scikit-learn 1.2-1
				}
			case "Tuning":
				image, want = at(s.args, "TrainingJobDefinition", "AlgorithmSpecification", "TrainingImage").(string), training[fw]
			case "Model":
				image = at(s.args, "PrimaryContainer", "Image").(string)
			case "RegisterModel":
				image = at(s.args, "InferenceSpecification", "Containers", 0, "Image").(string)
				if d, _ := s.args["ModelPackageDescription"].(string); !strings.Contains(d, " "+fw+" ") {
					t.Errorf("%s %s: description %q does not name %s", c.entry.ID, s.name, d, fw)
				}
			default:
				continue
			}
			if got := imageRepoOf(image); got != want {
				t.Errorf("%s %s (%s): image %s, want repository %s", c.entry.ID, s.name, s.typ, image, want)
			}
		}
	}
}

// A registration whose framework contradicts the training step keeps the
// explicit choice and says so; so does a model_class that contradicts the
// model the training step makes.
func TestFrameworkConflictIsReported(t *testing.T) {
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := cat.Get("lightgbm_complete_e2e")
	if !ok {
		t.Fatal("lightgbm_complete_e2e not found")
	}
	in := sampleInputWith(t, e.DAG(), map[string]map[string]any{
		"Registration": {"framework": "xgboost"}, "LightGBMTraining": {"model_class": "xgboost"}})
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var reg, family bool
	for _, w := range res.Warnings {
		reg = reg || (strings.Contains(w, `"Registration"`) && strings.Contains(w, `framework "xgboost"`) && strings.Contains(w, "LightGBMTraining"))
		family = family || (strings.Contains(w, `"LightGBMTraining"`) && strings.Contains(w, `model_class "xgboost"`) && strings.Contains(w, "lightgbm"))
	}
	if !reg || !family {
		t.Fatalf("conflicts not reported (registration %v, model_class %v): %q", reg, family, res.Warnings)
	}
	if !strings.Contains(string(res.JSON), "sagemaker-xgboost:1.7-1") {
		t.Error("the explicit framework was not used")
	}
}

// Issue 21 item 9: training steps carry the SDK's default debugger hook
// and profiler configs, writing under the job's output path; the config
// switches leave them out.
func TestTrainingDebuggerAndProfilerDefaults(t *testing.T) {
	trainings := 0
	for _, c := range sharedCompiled(t, nil) {
		for _, s := range c.steps {
			if s.typ != "Training" {
				continue
			}
			trainings++
			out, _ := json.Marshal(at(s.args, "OutputDataConfig", "S3OutputPath"))
			hook, _ := json.Marshal(s.args["DebugHookConfig"])
			prof, _ := json.Marshal(s.args["ProfilerConfig"])
			if want := `{"CollectionConfigurations":[],"S3OutputPath":` + string(out) + `}`; string(hook) != want {
				t.Errorf("%s %s: DebugHookConfig %s, want %s", c.entry.ID, s.name, hook, want)
			}
			want := `{"DisableProfiler":false,"S3OutputPath":` + string(out) + `}`
			if strings.HasSuffix(s.name, "-RepackModel") {
				want = `{"DisableProfiler":true}` // as the SDK's model repack
			}
			if string(prof) != want {
				t.Errorf("%s %s: ProfilerConfig %s, want %s", c.entry.ID, s.name, prof, want)
			}
		}
	}
	if trainings == 0 {
		t.Fatal("no training step in the shared DAGs")
	}
	cat, _, _ := pipelines.Load()
	e, _ := cat.Get("xgboost_simple_training")
	for _, tc := range []struct {
		vals         map[string]any
		hook, profil bool
	}{
		{map[string]any{"disable_debugger": true}, false, true},
		{map[string]any{"disable_profiler": true}, true, false},
		{map[string]any{"disable_debugger": true, "disable_profiler": true}, false, false},
	} {
		res, err := Compile(context.Background(), sampleInputWith(t, e.DAG(), map[string]map[string]any{"XGBoostTraining": tc.vals}))
		if err != nil {
			t.Fatal(err)
		}
		js := string(res.JSON)
		if strings.Contains(js, `"DebugHookConfig"`) != tc.hook || strings.Contains(js, `"ProfilerConfig"`) != tc.profil {
			t.Errorf("%v: DebugHookConfig present %v (want %v), ProfilerConfig present %v (want %v)", tc.vals,
				strings.Contains(js, `"DebugHookConfig"`), tc.hook, strings.Contains(js, `"ProfilerConfig"`), tc.profil)
		}
	}
}

// The model family a training step declares and the model_class default
// of its config agree, so the pipeline name says what is trained.
func TestModelFamilyMatchesModelClassDefault(t *testing.T) {
	c, s := fixtures(t)
	checked := 0
	for _, name := range c.Names() {
		iface, _ := c.Get(name)
		if iface.Compute == nil || iface.Compute.ModelFamily == "" {
			continue
		}
		cfg, _ := s.Build(name, nil, nil)
		if got := cfg.Values["model_class"]; got != iface.Compute.ModelFamily {
			t.Errorf("%s: model_family %s, model_class default %v", name, iface.Compute.ModelFamily, got)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no step declares a model family")
	}
}

// tarNames lists the entries of a .tar.gz.
func tarNames(t *testing.T, data []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for range 10000 {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	t.Fatal("tarball has more than 10000 entries")
	return nil
}

// extraFiles belong to no step: data, secrets, another project.
var extraFiles = map[string]string{
	"secrets.env":             "TOKEN=do-not-ship\n",
	"data/train.csv":          "a,b\n1,2\n",
	"other_project/helper.py": "print('not mine')\n",
	"notes/README.md":         "notes\n",
}

// workspaceWithExtras holds every entry script of in's steps under dir
// plus extraFiles at the workspace root.
func workspaceWithExtras(in Input, dir string) fstest.MapFS {
	fs := fstest.MapFS{path.Join(dir, "inference.py"): {Data: []byte("def model_fn(d):\n    return d\n")}}
	for name, body := range extraFiles {
		fs[name] = &fstest.MapFile{Data: []byte(body)}
	}
	for _, c := range in.Configs {
		iface, _ := in.Catalog.Get(c.StepType)
		if ep := iface.Contract.EntryPoint; ep != "" {
			fs[path.Join(dir, ep)] = &fstest.MapFile{Data: []byte("print('" + ep + "')\n")}
		}
	}
	return fs
}

// Issue 21 item 4: a framework step's sourcedir.tar.gz holds its source
// directory only — the entry script alone when no source_dir is
// configured and the script sits at the workspace root — never the
// workspace root's other files.
func TestSharedDAGTarballsStayInTheirSourceDir(t *testing.T) {
	generated := map[string]bool{"hyperparams/hyperparameters.json": true}
	for _, dir := range []string{".", "scripts"} {
		tarballs := 0
		workspaces := map[string]fstest.MapFS{}
		for _, c := range sharedCompiled(t, func(e *pipelines.Entry, in Input) Input {
			if dir != "." {
				for i := range in.Configs {
					in.Configs[i].Values["source_dir"] = dir
					delete(in.Configs[i].Derived, "effective_source_dir")
				}
			}
			workspaces[e.ID] = workspaceWithExtras(in, dir)
			in.Sources = workspaces[e.ID]
			return in
		}) {
			for _, a := range c.res.Artifacts {
				if a.Kind != KindSourceDir {
					continue
				}
				tarballs++
				if strings.HasPrefix(a.Local, BuiltinPrefix) {
					t.Errorf("%s: built-in code %s packed for %v although the workspace has the script", c.entry.ID, a.Local, a.Steps)
					continue
				}
				names := tarNames(t, a.Data)
				for _, n := range names {
					if generated[n] {
						continue
					}
					local := path.Join(dir, n)
					_, inWorkspace := workspaces[c.entry.ID][local]
					_, extra := extraFiles[local]
					if extra || !inWorkspace || (dir != "." && !strings.HasPrefix(local, dir+"/")) {
						t.Errorf("%s (source_dir %s): tarball of %v ships %s, which is outside its source directory", c.entry.ID, dir, a.Steps, local)
					}
				}
				if dir == "." && len(names) > 2 {
					t.Errorf("%s: tarball of %v without a source_dir ships %v, not the entry script alone", c.entry.ID, a.Steps, names)
				}
			}
			for _, w := range c.res.Warnings {
				if strings.Contains(w, "built-in code") {
					t.Errorf("%s (source_dir %s): %s", c.entry.ID, dir, w)
				}
			}
		}
		if tarballs == 0 {
			t.Fatalf("source_dir %s: no framework step packed a tarball", dir)
		}
	}
}

// A step whose configured source directory lacks its entry script runs the
// built-in code of its step type in its place, and the compile says so —
// training and model steps too, not just script processors.
func TestMissingEntryScriptsFallBackToBuiltinCode(t *testing.T) {
	cat, _, _ := pipelines.Load()
	e, _ := cat.Get("xgboost_e2e_with_model_creation")
	in := sampleInputWith(t, e.DAG(), nil)
	for i := range in.Configs {
		in.Configs[i].Values["source_dir"] = "scripts"
		delete(in.Configs[i].Derived, "effective_source_dir")
	}
	src := workspaceWithExtras(in, "scripts")
	delete(src, "scripts/xgboost_training.py")
	delete(src, "scripts/inference.py")
	in.Sources = src
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`node "XGBoostTraining": scripts/xgboost_training.py is not in the call's files or the workspace: the built-in code of XGBoostTraining is used`,
		`node "XGBoostModel": scripts/inference.py is not in the call's files or the workspace: the built-in code of XGBoostModel is used`} {
		found := false
		for _, w := range res.Warnings {
			found = found || strings.HasPrefix(w, want)
		}
		if !found {
			t.Errorf("no warning %q in %q", want, res.Warnings)
		}
	}
	byStep := map[string]string{}
	for _, a := range res.Artifacts {
		for _, s := range a.Steps {
			if a.Kind == KindSourceDir {
				byStep[s] = a.Local
			}
		}
	}
	if byStep["XGBoostTraining"] != "builtin:xgboost_training" || byStep["XGBoostModel"] != "builtin:xgboost_model" {
		t.Errorf("source dirs %v, want the built-in folders for the two steps without scripts", byStep)
	}
	for step, local := range byStep {
		if step != "XGBoostTraining" && step != "XGBoostModel" && strings.HasPrefix(local, BuiltinPrefix) {
			t.Errorf("%s packs %s although the workspace has its script", step, local)
		}
	}
}

// Issue 21 item 3: with one base config every shared DAG gets its own
// pipeline (and so its own artifact keys), named after the DAG.
func TestSharedDAGPipelineNamesAreDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, c := range sharedCompiled(t, func(e *pipelines.Entry, in Input) Input {
		in.DAGName = e.ID
		return in
	}) {
		name := c.res.PipelineName
		if prev, dup := seen[name]; dup {
			t.Errorf("%s and %s share pipeline name %s", prev, c.entry.ID, name)
		}
		seen[name] = c.entry.ID
		if want := strings.ReplaceAll(c.entry.ID, "_", "-"); !strings.Contains(name, want) {
			t.Errorf("%s: pipeline name %s does not carry the DAG's name %s", c.entry.ID, name, want)
		}
	}
	// Unnamed, the DAGs still get distinct names (from their content).
	unnamed := map[string]string{}
	for _, c := range sharedCompiled(t, nil) {
		if prev, dup := unnamed[c.res.PipelineName]; dup {
			t.Errorf("unnamed: %s and %s share pipeline name %s", prev, c.entry.ID, c.res.PipelineName)
		}
		unnamed[c.res.PipelineName] = c.entry.ID
	}
}

// The parts of a generated name, and the override that replaces it.
func TestPipelineNameParts(t *testing.T) {
	cat, _, _ := pipelines.Load()
	e, _ := cat.Get("xgboost_simple_training")
	in := sampleInput(t, e.DAG())
	in.DAGName = "fraud_daily"
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.PipelineName != "jdoe-example-xgboost-NA-fraud-daily-1-0-0-pipeline" {
		t.Errorf("named DAG: %s", res.PipelineName)
	}
	in.DAGName = ""
	res, _ = Compile(context.Background(), in)
	again, _ := Compile(context.Background(), in)
	if !strings.HasPrefix(res.PipelineName, "jdoe-example-xgboost-NA-dag-") || res.PipelineName != again.PipelineName {
		t.Errorf("unnamed DAG: %s / %s", res.PipelineName, again.PipelineName)
	}
	in = sampleInputWith(t, e.DAG(), map[string]map[string]any{"XGBoostTraining": {"pipeline_name_override": "my-pipe"}})
	in.DAGName = "fraud_daily"
	res, err = Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.PipelineName != "my-pipe-1-0-0-pipeline" {
		t.Errorf("override: %s", res.PipelineName)
	}
}
