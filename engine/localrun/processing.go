package localrun

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

type processingArgs struct {
	AppSpecification struct {
		ImageURI            string   `json:"ImageUri"`
		ContainerEntrypoint []string `json:"ContainerEntrypoint"`
		ContainerArguments  []string `json:"ContainerArguments"`
	} `json:"AppSpecification"`
	Environment      map[string]string `json:"Environment"`
	ProcessingInputs []struct {
		InputName string `json:"InputName"`
		S3Input   *struct {
			LocalPath         string `json:"LocalPath"`
			S3Uri             string `json:"S3Uri"`
			S3DataType        string `json:"S3DataType"`
			S3CompressionType string `json:"S3CompressionType"`
		} `json:"S3Input"`
	} `json:"ProcessingInputs"`
	ProcessingOutputConfig struct {
		Outputs []struct {
			OutputName string `json:"OutputName"`
			S3Output   *struct {
				LocalPath string `json:"LocalPath"`
				S3Uri     string `json:"S3Uri"`
			} `json:"S3Output"`
		} `json:"Outputs"`
	} `json:"ProcessingOutputConfig"`
}

// processing emulates a processing job: inputs downloaded to their
// LocalPath, the entrypoint run with its arguments and environment, the
// outputs uploaded from their LocalPath.
func (ru *run) processing(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	var a processingArgs
	if err := decode(args, &a); err != nil {
		return nil, fail("Arguments", "Regenerate the definition: compile it again with its report.", "the processing arguments do not decode: %v", err)
	}
	j, err := ru.newJob(s.Name)
	if err != nil {
		return nil, err
	}
	for i, in := range a.ProcessingInputs {
		field := fmt.Sprintf("Arguments.ProcessingInputs[%d]", i)
		if in.S3Input == nil {
			return nil, fail(field, "Use S3Input inputs: the local run emulates S3 only.", "input %q has no S3Input", in.InputName)
		}
		dst, err := j.host(in.S3Input.LocalPath)
		if err != nil {
			return nil, fail(field+".S3Input.LocalPath", "Put the input under /opt/ml/processing/input/.", "input %q: %v", in.InputName, err)
		}
		if err := ru.download(ctx, s.Name, field+".S3Input.S3Uri", in.InputName, in.S3Input.S3Uri, dst); err != nil {
			return nil, err
		}
	}
	ep := a.AppSpecification.ContainerEntrypoint
	field := "Arguments.AppSpecification.ContainerEntrypoint"
	if len(ep) == 0 {
		return nil, fail(field, "Set ContainerEntrypoint to run the step's script (python3 /opt/ml/processing/input/code/<script>.py).",
			"the step has no ContainerEntrypoint; the image's own entrypoint is not emulated")
	}
	j.env = a.Environment
	j.cwd = "/"
	argv := append(append([]string{}, ep...), a.AppSpecification.ContainerArguments...)
	if isShell(ep[0]) && len(ep) >= 2 {
		// A framework processor's runproc.sh: unpack the source directory
		// and run its script, as the generated script does.
		argv, err = ru.runproc(ctx, j, ep[1], a.AppSpecification.ContainerArguments)
		if err != nil {
			return nil, err
		}
	} else if !isPython(ep[0]) {
		return nil, fail(field, "Run a Python script: the local run has no container images, only the script sandbox.",
			"entrypoint %q is not python3; only Python entrypoints are emulated", ep[0])
	}
	if len(argv) > 1 && isPython(argv[0]) && !strings.HasPrefix(argv[1], "-") {
		script, err := j.host(argv[1])
		if err != nil {
			return nil, fail(field, "Point the entrypoint at the script's code input under /opt/ml/processing/input/code/.", "%v", err)
		}
		if _, err := os.Stat(script); err != nil {
			return nil, fail(field, "Point the entrypoint at a file of the step's code input (its ProcessingInputs 'code' LocalPath).",
				"the entrypoint script %s is not in the container (no input put it there)", argv[1])
		}
	}
	for _, out := range a.ProcessingOutputConfig.Outputs {
		if out.S3Output == nil {
			continue
		}
		if dst, err := j.host(out.S3Output.LocalPath); err == nil {
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return nil, &StorageError{Step: s.Name, What: "the job directory", Err: err}
			}
		}
	}
	j.argv = argv
	res, err := ru.exec(ctx, j)
	if err != nil {
		return resultOf(res, ru), ru.fatal(s.Name, err)
	}
	if res.err != nil {
		return resultOf(res, ru), scriptFailure(s.Name, field, res)
	}
	var produced []any
	for i, out := range a.ProcessingOutputConfig.Outputs {
		if out.S3Output == nil {
			continue
		}
		f := fmt.Sprintf("Arguments.ProcessingOutputConfig.Outputs[%d].S3Output.LocalPath", i)
		src, err := j.host(out.S3Output.LocalPath)
		if err != nil {
			return resultOf(res, ru), fail(f, "Put the output under /opt/ml/processing/output/.", "output %q: %v", out.OutputName, err)
		}
		if err := ru.upload(src, out.S3Output.S3Uri); err != nil {
			return resultOf(res, ru), ru.fatal(s.Name, err)
		}
		produced = append(produced, map[string]any{"OutputName": out.OutputName, "AppManaged": false,
			"S3Output": map[string]any{"S3Uri": out.S3Output.S3Uri, "LocalPath": out.S3Output.LocalPath, "S3UploadMode": "EndOfJob"}})
	}
	props := copyMap(args)
	props["ProcessingJobName"] = ru.jobName(s.Name)
	props["ProcessingJobArn"] = "arn:aws:sagemaker:local:000000000000:processing-job/" + ru.jobName(s.Name)
	props["ProcessingJobStatus"] = "Completed"
	props["ExitMessage"] = ""
	if produced != nil {
		props["ProcessingOutputConfig"] = map[string]any{"Outputs": produced}
	}
	out := resultOf(res, ru)
	out.props = props
	return out, nil
}

// room is what the run may still write.
func (ru *run) room() int64 {
	return ru.r.set.MaxStorageBytes - ru.store.usedBytes() - dirSize(ru.work)
}

// resultOf starts a step's result from its job's end.
func resultOf(res *execResult, ru *run) *stepResult {
	if res == nil {
		return &stepResult{}
	}
	return &stepResult{logTail: tail(res.log, ru.r.set.LogTailBytes), script: res.script}
}

// fatal turns a job's error into the step's failure: a timeout or a full
// disk ends the run.
func (ru *run) fatal(step string, err error) error {
	var te *TimeoutError
	var se *StorageError
	switch {
	case errors.As(err, &te):
		return &stepFailure{reason: te.Error(), fatal: te,
			remedy: fmt.Sprintf("Make step %s finish within %s on the sample data (or raise local_run.step_timeout).", step, te.Limit)}
	case errors.As(err, &se):
		se.Step = step
		return &stepFailure{reason: se.Error(), fatal: se,
			remedy: fmt.Sprintf("Make step %s write less: the run's objects and job files must stay within the storage limit.", step)}
	}
	return err
}

// scriptFailure is a job that exited non-zero.
func scriptFailure(step, field string, res *execResult) *stepFailure {
	last := lastLines(res.log, 3)
	if m := missingModule.FindStringSubmatch(res.log); m != nil {
		mod := strings.Split(m[1], ".")[0]
		return &stepFailure{status: StatusRuntimeUnavailable, field: field, missing: mod,
			reason: fmt.Sprintf("the script needs Python package %s, which is not installed on this server", mod),
			remedy: fmt.Sprintf("Step %s needs %s: run it where the package is installed (its SageMaker image), or use a framework this server has.", step, mod)}
	}
	if res.exitCode >= 128 {
		last += fmt.Sprintf(" (killed by signal %d)", res.exitCode-128)
	}
	return &stepFailure{field: field, reason: fmt.Sprintf("the job exited with status %d: %s", res.exitCode, last),
		remedy: fmt.Sprintf("Fix step %s's script (its log tail shows the error) or the arguments it was given.", step)}
}

var missingModule = regexp.MustCompile(`ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'`)

func isPython(s string) bool {
	switch path.Base(s) {
	case "python", "python3":
		return true
	}
	return false
}

func isShell(s string) bool {
	switch path.Base(s) {
	case "bash", "sh":
		return true
	}
	return false
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// jobName is the SageMaker job name of a step's job in this run.
func (ru *run) jobName(step string) string {
	name := "pipelines-" + ru.execID + "-" + sanitizeName(step)
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "-")
}

func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// download lays the objects of uri out at dst as SageMaker's File mode
// does: an object named exactly uri goes into dst by its base name, the
// objects under uri/ by their path below it. No objects is an error, as it
// is for a SageMaker job.
func (ru *run) download(ctx context.Context, step, field, name, uri, dst string) error {
	objs, err := ru.store.list(uri)
	if rme, ok := errors.AsType[*RemoteError](err); ok {
		return remoteFailure(field, rme)
	}
	if se, ok := errors.AsType[*StorageError](err); ok {
		return ru.fatal(step, se)
	}
	if err != nil {
		return fail(field, "Give an s3://bucket/key URI.", "input %q: %v", name, err)
	}
	if len(objs) == 0 {
		return &stepFailure{field: field, reason: fmt.Sprintf("input %q: %v", name, &NoObjectsError{URI: uri}), remedy: ru.noObjectsRemedy(step, uri, field)}
	}
	for _, o := range objs {
		if err := ctx.Err(); err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(o.Rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return ru.fatal(step, &StorageError{What: "the job's inputs", Err: err})
		}
		if err := copyFile(o.File, target); err != nil {
			return ru.fatal(step, storageErr(err))
		}
	}
	return nil
}

// noObjectsRemedy says how to fix an input with nothing at uri.
func (ru *run) noObjectsRemedy(step, uri, field string) string {
	if ru.req.Remote != nil {
		return fmt.Sprintf("Step %s reads %s, where neither the run nor the configured S3 holds an object: upload the input to %s "+
			"(or make the producing step write that output, or point %s at an output it writes).", step, uri, uri, field)
	}
	return fmt.Sprintf("Step %s reads %s, where nothing was written: make the producing step write that output (or point %s at an output it writes).", step, uri, field)
}

// upload stores every file under src at uri/<path below src>.
func (ru *run) upload(src, uri string) error {
	uri = strings.TrimSuffix(uri, "/")
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		return ru.store.putFile(uri+"/"+filepath.ToSlash(rel), p)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// runproc emulates a framework processor's generated runproc.sh: cd to
// its directory, unpack the source tarball, check requirements.txt, and
// run the script with the container arguments.
func (ru *run) runproc(ctx context.Context, j *job, script string, args []string) ([]string, error) {
	field := "Arguments.AppSpecification.ContainerEntrypoint"
	host, err := j.host(script)
	if err != nil {
		return nil, fail(field, "Point the entrypoint at the runproc.sh the compiler generates.", "%v", err)
	}
	text, err := os.ReadFile(host)
	if err != nil {
		return nil, fail(field, "Add the 'entrypoint' processing input that puts runproc.sh there (a compile with its report generates it).",
			"the entrypoint %s is not in the container", script)
	}
	m := runprocPattern.FindStringSubmatch(string(text))
	if m == nil {
		return nil, fail(field, "Use the runproc.sh the compiler generates: cd <code dir>, tar -xzf <tarball>, python <script>.",
			"%s is not a runproc.sh the local run can emulate", script)
	}
	dir, tarball, entry := m[1], m[2], unquote(m[3])
	hostDir, err := j.host(dir)
	if err != nil {
		return nil, fail(field, "Unpack the source under /opt/ml/processing/input/code.", "%v", err)
	}
	tgz := filepath.Join(hostDir, tarball)
	f, err := os.Open(tgz)
	if err != nil {
		return nil, fail("Arguments.ProcessingInputs", "Add the 'code' input with the step's sourcedir.tar.gz at "+dir+".",
			"%s has no %s to unpack", dir, tarball)
	}
	err = untar(f, hostDir, ru.room())
	f.Close()
	if err != nil {
		var se *StorageError
		if errors.As(err, &se) {
			return nil, ru.fatal(j.step, err)
		}
		return nil, fail("Arguments.ProcessingInputs", "Repack the source directory (a compile with its report does).", "unpack %s: %v", tarball, err)
	}
	if err := ru.requirements(ctx, j.step, filepath.Join(hostDir, "requirements.txt")); err != nil {
		return nil, err
	}
	j.cwd = dir
	if _, err := os.Stat(filepath.Join(hostDir, filepath.FromSlash(entry))); err != nil {
		return nil, fail(field, fmt.Sprintf("Set the step's entry point to a script of its source directory (runproc.sh runs %s).", entry),
			"the source directory has no %s", entry)
	}
	return append([]string{"python3", path.Join(dir, entry)}, args...), nil
}

var runprocPattern = regexp.MustCompile(`(?m)^cd (/opt/ml/\S+?)/?\s*$[\s\S]*?^tar -xzf (\S+)\s*$[\s\S]*?^python3? ('(?:[^']|'\\'')*'|\S+) "\$@"\s*$`)

func unquote(s string) string {
	if strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2 {
		return strings.ReplaceAll(s[1:len(s)-1], `'\''`, "'")
	}
	return s
}

// requirements checks that every package requirements.txt names is
// importable; the first that is not makes the step runtime_unavailable
// (the local run installs nothing: it has no network).
func (ru *run) requirements(ctx context.Context, step, file string) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	py, err := ru.r.interpreter(ctx)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		if line == "" || strings.HasPrefix(line, "-") {
			continue
		}
		name := requirementName.FindString(line)
		if name == "" {
			continue
		}
		mod := moduleOf(name)
		if !py.importable(ctx, mod) {
			return &stepFailure{status: StatusRuntimeUnavailable, field: "requirements.txt", missing: name,
				reason: fmt.Sprintf("requirements.txt needs %s (%q), which is not installed on this server and the local run installs nothing", name, line),
				remedy: fmt.Sprintf("Step %s needs %s: run it on SageMaker (its container installs requirements.txt) or on a server with %s installed.", step, name, name)}
		}
	}
	return nil
}

var requirementName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*`)

// moduleOf is the module a distribution name installs, for the common
// ones whose names differ.
func moduleOf(dist string) string {
	d := strings.ToLower(strings.ReplaceAll(dist, "-", "_"))
	switch d {
	case "scikit_learn":
		return "sklearn"
	case "pyyaml":
		return "yaml"
	case "pillow":
		return "PIL"
	case "beautifulsoup4":
		return "bs4"
	case "opencv_python", "opencv_python_headless":
		return "cv2"
	}
	return strings.ReplaceAll(d, ".", "_")
}

// untar unpacks a gzipped tarball into dir: regular files and directories
// only, every path inside dir, at most limit bytes in all.
func untar(r io.Reader, dir string, limit int64) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if !fs.ValidPath(name) {
			return fmt.Errorf("entry %q leaves the directory", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return storageErr(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return storageErr(err)
			}
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return storageErr(err)
			}
			n, err := io.Copy(out, io.LimitReader(tr, limit+1))
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return storageErr(err)
			}
			if limit -= n; limit < 0 {
				return &StorageError{What: "the unpacked source directory", Err: errors.New("it unpacks to more than the run may write")}
			}
		default:
			// links and devices are not unpacked
		}
	}
}
