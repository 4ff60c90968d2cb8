package localrun

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/serving"
)

type containerDef struct {
	Image        string            `json:"Image"`
	ModelDataUrl string            `json:"ModelDataUrl"`
	Environment  map[string]string `json:"Environment"`
}

type modelArgs struct {
	PrimaryContainer *containerDef  `json:"PrimaryContainer"`
	Containers       []containerDef `json:"Containers"`
}

// servingModel builds the model a container definition describes;
// field is where the container is in the step's arguments.
func (ru *run) servingModel(ctx context.Context, c containerDef, field string) (serving.Model, error) {
	m := serving.Model{Image: c.Image, Environment: c.Environment, Fetch: func(_ context.Context, uri string) ([]byte, error) { return ru.store.get(uri) }}
	if c.ModelDataUrl != "" {
		data, err := ru.store.get(c.ModelDataUrl)
		if err != nil {
			return m, &stepFailure{field: field + ".ModelDataUrl", reason: fmt.Sprintf("the model archive: %v", err),
				remedy: fmt.Sprintf("Point %s.ModelDataUrl at the model.tar.gz a training or packaging step wrote (its output prefix joined with model.tar.gz).", field)}
		}
		m.ModelData = data
	}
	return m, nil
}

// servingFailure turns a serving error into the step's failure, naming
// the field of the step's arguments at fault.
func servingFailure(step, field string, err error) error {
	var se *serving.Error
	if !errors.As(err, &se) {
		return err
	}
	f := field
	switch {
	case se.Field != "":
		f = field + "." + se.Field
	case se.Kind == serving.KindModelLoad || se.Kind == serving.KindArchive:
		f = field + ".ModelDataUrl"
	}
	out := &stepFailure{field: f, reason: firstLines(se.Error(), 3)}
	switch se.Kind {
	case serving.KindRuntimeUnavailable:
		out.status = StatusRuntimeUnavailable
		out.missing = runtimeMissing(se.Message)
		out.remedy = fmt.Sprintf("Step %s serves with a package this server does not have; run it on SageMaker or on a server with it installed.", step)
	case serving.KindMissingCode, serving.KindNoProgram:
		out.remedy = fmt.Sprintf("Put the inference handler where the image loads it (%s): code/inference.py inside model.tar.gz for PyTorch, SAGEMAKER_PROGRAM in the source directory for XGBoost script mode.", f)
	case serving.KindModelLoad:
		out.remedy = fmt.Sprintf("Point %s at a model.tar.gz that holds the model file the image (or the handler's model_fn) loads, and nothing else it would try to load.", f)
	case serving.KindDataProcessing:
		out.remedy = fmt.Sprintf("Fix %s: the filters must select inside each record and a joined answer needs one line per record.", f)
	case serving.KindImage:
		out.remedy = fmt.Sprintf("Use a serving image the local run emulates at %s (sagemaker-xgboost, pytorch-inference, sagemaker-scikit-learn).", f)
	case serving.KindTimeout:
		out.remedy = fmt.Sprintf("Make step %s's model load and answer faster on the sample data.", step)
	default:
		out.remedy = fmt.Sprintf("Fix %s (see the error): the records sent to the model must be what its handler reads — for a transform, DataProcessing.InputFilter drops the columns the model was not trained on (id, label).", f)
	}
	return out
}

// servingLog is the serving process's log an error carries, as a
// result's log tail.
func (ru *run) servingLog(err error) *stepResult {
	var se *serving.Error
	if errors.As(err, &se) {
		return &stepResult{logTail: tail(se.Error()+"\n"+se.Log, ru.r.set.LogTailBytes)}
	}
	return nil
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// runtimeMissing picks the package name out of a runtime_unavailable
// message.
func runtimeMissing(msg string) string {
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool {
		return r == ' ' || r == '\'' || r == '"' || r == ',' || r == ':' || r == '(' || r == ')'
	}) {
		if w == "lightgbm" || w == "xgboost" || w == "torch" || w == "sklearn" {
			return w
		}
	}
	return "serving runtime"
}

// model emulates CreateModel; the model is also loaded as its image
// would load it, so a model the container cannot serve fails here.
func (ru *run) model(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	var a modelArgs
	if err := decode(args, &a); err != nil || a.PrimaryContainer == nil {
		return nil, fail("Arguments.PrimaryContainer", "Give the model a PrimaryContainer (Image, ModelDataUrl, Environment).", "the model has no PrimaryContainer")
	}
	field := "Arguments.PrimaryContainer"
	m, err := ru.servingModel(ctx, *a.PrimaryContainer, field)
	if err != nil {
		return nil, err
	}
	srv, err := ru.r.serving().Load(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return ru.servingLog(err), servingFailure(s.Name, field, err)
	}
	log := srv.Log()
	srv.Close()
	name := ru.jobName(s.Name)
	ru.models[name] = m
	props := copyMap(args)
	props["ModelName"] = name
	props["ModelArn"] = "arn:aws:sagemaker:local:000000000000:model/" + name
	return &stepResult{props: props, logTail: tail(log, ru.r.set.LogTailBytes)}, nil
}

type transformArgs struct {
	ModelName      string `json:"ModelName"`
	BatchStrategy  string `json:"BatchStrategy"`
	MaxPayloadInMB int    `json:"MaxPayloadInMB"`
	TransformInput struct {
		DataSource struct {
			S3DataSource struct {
				S3Uri string `json:"S3Uri"`
			} `json:"S3DataSource"`
		} `json:"DataSource"`
		ContentType     string `json:"ContentType"`
		SplitType       string `json:"SplitType"`
		CompressionType string `json:"CompressionType"`
	} `json:"TransformInput"`
	TransformOutput struct {
		S3OutputPath string `json:"S3OutputPath"`
		Accept       string `json:"Accept"`
		AssembleWith string `json:"AssembleWith"`
	} `json:"TransformOutput"`
	DataProcessing *struct {
		InputFilter  string `json:"InputFilter"`
		JoinSource   string `json:"JoinSource"`
		OutputFilter string `json:"OutputFilter"`
	} `json:"DataProcessing"`
	Environment map[string]string `json:"Environment"`
}

// transform emulates a batch transform job: the model of ModelName
// answers the records under the input prefix, split, filtered, joined and
// assembled as SageMaker does; the outputs go to S3OutputPath.
func (ru *run) transform(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	var a transformArgs
	if err := decode(args, &a); err != nil {
		return nil, fail("Arguments", "Regenerate the definition: compile it again with its report.", "the transform arguments do not decode: %v", err)
	}
	m, ok := ru.models[a.ModelName]
	if !ok {
		return nil, fail("Arguments.ModelName", "Set ModelName to a Model step's ModelName property ({\"Get\": \"Steps.<model step>.ModelName\"}).",
			"model %q was not created by a step of this run", a.ModelName)
	}
	inField := "Arguments.TransformInput.DataSource.S3DataSource.S3Uri"
	objs, err := ru.store.list(a.TransformInput.DataSource.S3DataSource.S3Uri)
	if rme, ok := errors.AsType[*RemoteError](err); ok {
		return nil, remoteFailure(inField, rme)
	}
	if se, ok := errors.AsType[*StorageError](err); ok {
		return nil, ru.fatal(s.Name, se)
	}
	if err != nil {
		return nil, fail(inField, "Give an s3://bucket/key URI.", "%v", err)
	}
	if len(objs) == 0 {
		return nil, &stepFailure{field: inField, reason: (&NoObjectsError{URI: a.TransformInput.DataSource.S3DataSource.S3Uri}).Error(),
			remedy: ru.noObjectsRemedy(s.Name, a.TransformInput.DataSource.S3DataSource.S3Uri, inField)}
	}
	job := serving.TransformJob{ContentType: a.TransformInput.ContentType, CompressionType: a.TransformInput.CompressionType,
		SplitType: a.TransformInput.SplitType, Accept: a.TransformOutput.Accept, AssembleWith: a.TransformOutput.AssembleWith,
		BatchStrategy: a.BatchStrategy, MaxPayloadInMB: a.MaxPayloadInMB, Environment: a.Environment}
	if dp := a.DataProcessing; dp != nil {
		job.DataProcessing = serving.DataProcessing{InputFilter: dp.InputFilter, JoinSource: dp.JoinSource, OutputFilter: dp.OutputFilter}
	}
	for _, o := range objs {
		data, err := ru.store.get(o.URI)
		if err != nil {
			return nil, err
		}
		job.Inputs = append(job.Inputs, serving.Object{Key: o.Rel, Data: data})
	}
	res, err := ru.r.serving().Transform(ctx, m, job)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return ru.servingLog(err), servingFailure(s.Name, "Arguments", err)
	}
	out := strings.TrimSuffix(a.TransformOutput.S3OutputPath, "/")
	for _, o := range res.Outputs {
		if err := ru.store.put(out+"/"+o.Key, o.Data); err != nil {
			return nil, ru.fatal(s.Name, err)
		}
	}
	name := ru.jobName(s.Name)
	props := copyMap(args)
	props["TransformJobName"] = name
	props["TransformJobArn"] = "arn:aws:sagemaker:local:000000000000:transform-job/" + name
	props["TransformJobStatus"] = "Completed"
	return &stepResult{props: props, logTail: tail(fmt.Sprintf("%d records in %d requests\n%s", res.Records, res.Requests, res.Log), ru.r.set.LogTailBytes)}, nil
}

type registerArgs struct {
	InferenceSpecification struct {
		Containers                 []containerDef `json:"Containers"`
		SupportedContentTypes      []string       `json:"SupportedContentTypes"`
		SupportedResponseMIMETypes []string       `json:"SupportedResponseMIMETypes"`
	} `json:"InferenceSpecification"`
	SamplePayloadUrl string `json:"SamplePayloadUrl"`
}

// registerModel emulates CreateModelPackage: each container's model is
// loaded as its image would, and the package answers every request of
// its sample payload (payload.tar.gz) through them.
func (ru *run) registerModel(ctx context.Context, s rawStep, args map[string]any) (*stepResult, error) {
	var a registerArgs
	if err := decode(args, &a); err != nil {
		return nil, fail("Arguments", "Regenerate the definition: compile it again with its report.", "the model package arguments do not decode: %v", err)
	}
	spec := a.InferenceSpecification
	if len(spec.Containers) == 0 {
		return nil, fail("Arguments.InferenceSpecification.Containers", "Give the package a container (Image, ModelDataUrl).", "the model package has no container")
	}
	var servers []*serving.Server
	defer func() {
		for _, srv := range servers {
			srv.Close()
		}
	}()
	for i, c := range spec.Containers {
		field := fmt.Sprintf("Arguments.InferenceSpecification.Containers[%d]", i)
		m, err := ru.servingModel(ctx, c, field)
		if err != nil {
			return nil, err
		}
		srv, err := ru.r.serving().Load(ctx, m)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return ru.servingLog(err), servingFailure(s.Name, field, err)
		}
		servers = append(servers, srv)
	}
	var log strings.Builder
	if a.SamplePayloadUrl != "" {
		field := "Arguments.SamplePayloadUrl"
		data, err := ru.store.get(a.SamplePayloadUrl)
		if err != nil {
			return nil, &stepFailure{field: field, reason: fmt.Sprintf("the sample payload: %v", err),
				remedy: "Point SamplePayloadUrl at the payload.tar.gz the payload step wrote (its output prefix joined with payload.tar.gz)."}
		}
		samples, err := payloadFiles(data)
		if err != nil || len(samples) == 0 {
			return nil, fail(field, "Make the payload step write payload.tar.gz holding one sample request per file.", "the sample payload holds no requests (%v)", err)
		}
		accept := first(spec.SupportedResponseMIMETypes, "")
		for _, name := range sortedKeys(samples) {
			ct := contentTypeOf(name, first(spec.SupportedContentTypes, "text/csv"))
			body := samples[name]
			for i, srv := range servers {
				acc := accept
				if i < len(servers)-1 {
					acc = ct
				}
				resp, err := srv.Invoke(ctx, body, ct, acc)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					return ru.servingLog(err), servingFailure(s.Name, fmt.Sprintf("Arguments.InferenceSpecification.Containers[%d]", i), fmt.Errorf("sample %s: %w", name, err))
				}
				body, ct = resp.Body, resp.ContentType
			}
			fmt.Fprintf(&log, "sample %s answered (%s): %s\n", name, ct, strings.TrimSpace(truncate(string(body), 200)))
		}
	}
	name := ru.jobName(s.Name)
	props := copyMap(args)
	props["ModelPackageArn"] = "arn:aws:sagemaker:local:000000000000:model-package/" + name
	props["ModelPackageStatus"] = "Completed"
	return &stepResult{props: props, logTail: tail(log.String(), ru.r.set.LogTailBytes)}, nil
}

// payloadFiles reads the request files of a payload.tar.gz (metadata
// files aside).
func payloadFiles(data []byte) (map[string][]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	for len(out) < 100 {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		base := path.Base(h.Name)
		if h.Typeflag != tar.TypeReg || strings.HasPrefix(base, ".") || strings.HasPrefix(strings.ToLower(base), "metadata") {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 6<<20))
		if err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(h.Name, "./")] = b
	}
	return out, nil
}

// contentTypeOf is a sample file's content type by its extension.
func contentTypeOf(name, def string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return "text/csv"
	case ".json":
		return "application/json"
	}
	return def
}

func first(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
