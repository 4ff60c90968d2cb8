package localrun

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

type channel struct {
	ChannelName string `json:"ChannelName"`
	DataSource  struct {
		S3DataSource *struct {
			S3Uri      string `json:"S3Uri"`
			S3DataType string `json:"S3DataType"`
		} `json:"S3DataSource"`
	} `json:"DataSource"`
	ContentType string `json:"ContentType,omitempty"`
}

type metricDefinition struct {
	Name  string `json:"Name"`
	Regex string `json:"Regex"`
}

type trainingArgs struct {
	AlgorithmSpecification struct {
		TrainingImage     string             `json:"TrainingImage"`
		TrainingInputMode string             `json:"TrainingInputMode"`
		MetricDefinitions []metricDefinition `json:"MetricDefinitions"`
	} `json:"AlgorithmSpecification"`
	HyperParameters  map[string]any `json:"HyperParameters"`
	InputDataConfig  []channel      `json:"InputDataConfig"`
	OutputDataConfig struct {
		S3OutputPath string `json:"S3OutputPath"`
	} `json:"OutputDataConfig"`
	Environment map[string]string `json:"Environment"`
}

// trainingJob is one emulated training job's outcome.
type trainingJob struct {
	name     string
	modelURI string
	log      string
	metrics  map[string]float64
	res      *execResult
}

// training emulates a training job in script mode.
func (ru *run) training(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	var a trainingArgs
	if err := decode(args, &a); err != nil {
		return nil, fail("Arguments", "Regenerate the definition: compile it again with its report.", "the training arguments do not decode: %v", err)
	}
	name := ru.jobName(s.Name)
	tj, err := ru.trainingJob(ctx, s.Name, name, "Arguments", a, a.HyperParameters)
	if err != nil {
		return resultOf(jobRes(tj), ru), err
	}
	props := copyMap(args)
	props["TrainingJobName"] = name
	props["TrainingJobArn"] = "arn:aws:sagemaker:local:000000000000:training-job/" + name
	props["TrainingJobStatus"] = "Completed"
	props["ModelArtifacts"] = map[string]any{"S3ModelArtifacts": tj.modelURI}
	props["FinalMetricDataList"] = metricList(tj.metrics)
	out := resultOf(tj.res, ru)
	out.props = props
	return out, nil
}

func jobRes(tj *trainingJob) *execResult {
	if tj == nil {
		return nil
	}
	return tj.res
}

// trainingJob runs one training job: channels at
// /opt/ml/input/data/<channel>, the hyperparameters (SageMaker's string
// encoding) at /opt/ml/input/config/hyperparameters.json, the
// sagemaker_submit_directory tarball unpacked at /opt/ml/code and its
// sagemaker_program run with the SM_* environment; /opt/ml/model is packed
// to <S3OutputPath>/<job>/output/model.tar.gz and /opt/ml/output/data to
// output.tar.gz beside it. field is where the job's arguments are in the
// step (Arguments or Arguments.TrainingJobDefinition).
func (ru *run) trainingJob(ctx context.Context, step, name, field string, a trainingArgs, hps map[string]any) (*trainingJob, error) {
	j, err := ru.newJob(step)
	if err != nil {
		return nil, err
	}
	hp := map[string]string{}
	for k, v := range hps {
		hp[k] = scalarString(v)
	}
	var chans []string
	for i, c := range a.InputDataConfig {
		f := fmt.Sprintf("%s.InputDataConfig[%d]", field, i)
		if c.DataSource.S3DataSource == nil {
			return nil, fail(f, "Use an S3DataSource channel: the local run emulates S3 only.", "channel %q has no S3DataSource", c.ChannelName)
		}
		dst := filepath.Join(j.dir, "ml", "input", "data", c.ChannelName)
		if c.ChannelName == "" || strings.ContainsAny(c.ChannelName, "/\\") || c.ChannelName == "." || c.ChannelName == ".." {
			return nil, fail(f+".ChannelName", "Name the channel with letters, digits and - or _.", "channel name %q is not valid", c.ChannelName)
		}
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return nil, ru.fatal(step, &StorageError{What: "the job's inputs", Err: err})
		}
		if err := ru.download(ctx, step, f+".DataSource.S3DataSource.S3Uri", c.ChannelName, c.DataSource.S3DataSource.S3Uri, dst); err != nil {
			return nil, err
		}
		chans = append(chans, c.ChannelName)
	}
	sort.Strings(chans)
	cfg := filepath.Join(j.dir, "ml", "input", "config")
	for _, d := range []string{cfg, filepath.Join(j.dir, "ml", "model"), filepath.Join(j.dir, "ml", "output", "data"), filepath.Join(j.dir, "ml", "code")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, ru.fatal(step, &StorageError{What: "the job directory", Err: err})
		}
	}
	inputCfg := map[string]any{}
	for _, c := range chans {
		inputCfg[c] = map[string]any{"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated", "RecordWrapperType": "None"}
	}
	for file, v := range map[string]any{"hyperparameters.json": hp, "inputdataconfig.json": inputCfg,
		"resourceconfig.json": map[string]any{"current_host": "algo-1", "hosts": []string{"algo-1"}, "network_interface_name": "eth0"}} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(cfg, file), b, 0o600); err != nil {
			return nil, ru.fatal(step, &StorageError{What: "the job's configuration", Err: err})
		}
	}
	program, okProg := jsonString(hp["sagemaker_program"])
	submit, okSubmit := jsonString(hp["sagemaker_submit_directory"])
	hpField := field + ".HyperParameters"
	if strings.HasSuffix(field, "TrainingJobDefinition") {
		hpField = field + ".StaticHyperParameters"
	}
	if !okProg || program == "" {
		return nil, fail(hpField+".sagemaker_program", "Give the training step an entry point: the compiler sets sagemaker_program from the config's training_entry_point.",
			"the job has no sagemaker_program: the image's algorithm mode is not emulated by the local run")
	}
	if !okSubmit || submit == "" {
		return nil, fail(hpField+".sagemaker_submit_directory", "Set sagemaker_submit_directory to the step's sourcedir.tar.gz (a compile with its report does).",
			"the job has no sagemaker_submit_directory")
	}
	tgz, err := ru.store.get(submit)
	if err != nil {
		return nil, fail(hpField+".sagemaker_submit_directory", "Point sagemaker_submit_directory at the code artifact the manifest lists.", "the source tarball %s: %v", submit, err)
	}
	code := filepath.Join(j.dir, "ml", "code")
	if err := untar(strings.NewReader(string(tgz)), code, ru.room()); err != nil {
		var se *StorageError
		if errors.As(err, &se) {
			return nil, ru.fatal(step, err)
		}
		return nil, fail(hpField+".sagemaker_submit_directory", "Repack the source directory (a compile with its report does).", "unpack %s: %v", submit, err)
	}
	if _, err := os.Stat(filepath.Join(code, filepath.FromSlash(program))); err != nil || !fs.ValidPath(program) {
		return nil, fail(hpField+".sagemaker_program", fmt.Sprintf("Set %s.sagemaker_program to a script at the top of the source directory (it has: %s).", hpField, listPy(code)),
			"sagemaker_program %q is not in the source directory", program)
	}
	if err := ru.requirements(ctx, step, filepath.Join(code, "requirements.txt")); err != nil {
		return nil, err
	}
	// The training toolkit's environment.
	user := map[string]any{}
	var userArgs []string
	keys := make([]string, 0, len(hp))
	for k := range hp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "sagemaker_") {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(hp[k]), &v); err != nil {
			v = hp[k]
		}
		user[k] = v
		userArgs = append(userArgs, "--"+k, scalarString(v))
	}
	hpsJSON, _ := json.Marshal(user)
	chJSON, _ := json.Marshal(chans)
	argsJSON, _ := json.Marshal(userArgs)
	env := map[string]string{
		"SM_MODEL_DIR": "/opt/ml/model", "SM_OUTPUT_DATA_DIR": "/opt/ml/output/data", "SM_OUTPUT_DIR": "/opt/ml/output",
		"SM_INPUT_DIR": "/opt/ml/input", "SM_INPUT_CONFIG_DIR": "/opt/ml/input/config", "SM_INPUT_DATA_CONFIG": mustJSON(inputCfg),
		"SM_CHANNELS": string(chJSON), "SM_HPS": string(hpsJSON), "SM_USER_ARGS": string(argsJSON),
		"SM_CURRENT_HOST": "algo-1", "SM_HOSTS": `["algo-1"]`, "SM_NUM_GPUS": "0", "SM_NUM_CPUS": "2",
		"SM_MODULE_DIR": submit, "SM_MODULE_NAME": strings.TrimSuffix(program, ".py"), "SM_USER_ENTRY_POINT": program,
		"SM_FRAMEWORK_MODULE": "", "SM_LOG_LEVEL": "20", "SM_NETWORK_INTERFACE_NAME": "eth0",
		"SM_RESOURCE_CONFIG": `{"current_host":"algo-1","hosts":["algo-1"]}`, "TRAINING_JOB_NAME": name,
		"PYTHONPATH": "/opt/ml/code",
	}
	for _, c := range chans {
		env["SM_CHANNEL_"+strings.ToUpper(c)] = "/opt/ml/input/data/" + c
	}
	for k, v := range user {
		env["SM_HP_"+strings.ToUpper(k)] = scalarString(v)
	}
	for k, v := range a.Environment {
		env[k] = v
	}
	j.env, j.cwd = env, "/opt/ml/code"
	j.argv = append([]string{"python3", "/opt/ml/code/" + program}, userArgs...)
	res, err := ru.exec(ctx, j)
	tj := &trainingJob{name: name, res: res}
	if err != nil {
		return tj, ru.fatal(step, err)
	}
	tj.log = res.log
	tj.metrics = parseMetrics(a.AlgorithmSpecification.MetricDefinitions, res.log)
	if res.err != nil {
		if m := unknownChannel(res.log, chans); m != nil {
			return tj, &stepFailure{field: field + ".InputDataConfig", reason: fmt.Sprintf("the script reads channel %q (%s), which the job does not have (channels: %s): %s",
				m[1], m[0], strings.Join(chans, ", "), lastLines(res.log, 2)),
				remedy: fmt.Sprintf("Add a %q channel to %s.InputDataConfig (wire the step's input to the upstream output that feeds it), or make the script read one of its channels.", m[1], field)}
		}
		return tj, scriptFailure(step, hpField+".sagemaker_program", res)
	}
	out := strings.TrimSuffix(a.OutputDataConfig.S3OutputPath, "/")
	if out == "" {
		return tj, fail(field+".OutputDataConfig.S3OutputPath", "Set OutputDataConfig.S3OutputPath.", "the job has no output path")
	}
	model, err := tarGz(filepath.Join(j.dir, "ml", "model"))
	if err != nil {
		return tj, ru.fatal(step, err)
	}
	if isEmptyTar(model) {
		return tj, fail(hpField+".sagemaker_program", fmt.Sprintf("Make %s write the model to /opt/ml/model (SM_MODEL_DIR).", program),
			"the training script wrote nothing to /opt/ml/model")
	}
	tj.modelURI = out + "/" + name + "/output/model.tar.gz"
	if err := ru.store.put(tj.modelURI, model); err != nil {
		return tj, ru.fatal(step, err)
	}
	data, err := tarGz(filepath.Join(j.dir, "ml", "output", "data"))
	if err != nil {
		return tj, ru.fatal(step, err)
	}
	if !isEmptyTar(data) {
		if err := ru.store.put(out+"/"+name+"/output/output.tar.gz", data); err != nil {
			return tj, ru.fatal(step, err)
		}
	}
	return tj, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonString decodes a hyperparameter SageMaker's SDK JSON-encoded (a
// plain string is taken as is).
func jsonString(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var v string
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, true
	}
	return s, true
}

func listPy(dir string) string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".py") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "no .py files"
	}
	return strings.Join(names, ", ")
}

// channelPath is a channel directory a failing script names in its log.
var channelPath = regexp.MustCompile(`/opt/ml/input/data/([A-Za-z0-9_.-]+)|SM_CHANNEL_([A-Z0-9_]+)`)

// unknownChannel is the first channel path in the log that is not one of
// the job's channels.
func unknownChannel(log string, chans []string) []string {
	for _, m := range channelPath.FindAllStringSubmatch(log, -1) {
		name := m[1]
		if name == "" {
			name = strings.ToLower(m[2])
			if slices.ContainsFunc(chans, func(c string) bool { return strings.ToUpper(c) == m[2] }) {
				continue
			}
		} else if slices.Contains(chans, name) {
			continue
		}
		return []string{m[0], name}
	}
	return nil
}

// parseMetrics applies each metric definition's regex to the log; the
// last match of each wins, as SageMaker's final metric value.
func parseMetrics(defs []metricDefinition, log string) map[string]float64 {
	out := map[string]float64{}
	for _, d := range defs {
		re, err := regexp.Compile(d.Regex)
		if err != nil {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(log, -1) {
			s := m[0]
			if len(m) > 1 {
				s = m[1]
			}
			if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				out[d.Name] = v
			}
		}
	}
	return out
}

func metricList(m map[string]float64) []any {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := []any{}
	for _, k := range names {
		out = append(out, map[string]any{"MetricName": k, "Value": m[k]})
	}
	return out
}

// tarGz packs the files under dir (paths relative to it).
func tarGz(dir string) ([]byte, error) {
	var buf strings.Builder
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel) + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: fi.ModTime()})
		case d.Type().IsRegular():
			if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: 0o644, Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.CopyN(tw, f, fi.Size())
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	return []byte(buf.String()), storageErr(err)
}

// isEmptyTar reports whether a packed archive holds no regular file.
func isEmptyTar(data []byte) bool {
	gz, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		return true
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return true
		}
		if h.Typeflag == tar.TypeReg {
			return false
		}
	}
}
