package serving

import "fmt"

// Kind names what went wrong, so a caller (the local pipeline run) can
// turn an error into a remedy without parsing messages.
type Kind string

const (
	// KindImage: the image URI names no serving image this package
	// emulates (or a training image, which cannot serve).
	KindImage Kind = "image"
	// KindArchive: the model archive is not a gzip tar, or holds a path
	// that escapes it, a link or a special file, or is too large.
	KindArchive Kind = "archive"
	// KindMissingCode: the handler module the image would import is not
	// where the image looks for it (code/inference.py inside a PyTorch
	// model archive; SAGEMAKER_PROGRAM in SAGEMAKER_SUBMIT_DIRECTORY).
	KindMissingCode Kind = "missing_code"
	// KindNoProgram: the image serves only through user code and the
	// model's Environment has no SAGEMAKER_PROGRAM.
	KindNoProgram Kind = "no_program"
	// KindModelLoad: model_fn (or the algorithm-mode loader) failed, e.g.
	// no model file or one the framework cannot read.
	KindModelLoad Kind = "model_load"
	// KindHandler: input_fn, predict_fn, output_fn or transform_fn raised
	// while answering a request.
	KindHandler Kind = "handler"
	// KindPayload: the request body does not parse as its content type,
	// or does not fit the model (a CSV header row, a label column left in,
	// the wrong number of features).
	KindPayload Kind = "payload"
	// KindContentType: the request's content type or accept type is not
	// one the handler (or the default handler) supports.
	KindContentType Kind = "content_type"
	// KindRuntimeUnavailable: python3, the sandbox or a package the model
	// needs (a framework, a requirements.txt entry) is not installed.
	KindRuntimeUnavailable Kind = "runtime_unavailable"
	// KindTimeout: loading or a request took longer than its limit.
	KindTimeout Kind = "timeout"
	// KindLimit: a response, archive or record exceeded a size limit.
	KindLimit Kind = "limit"
	// KindWorker: the serving process died (killed, out of memory).
	KindWorker Kind = "worker"
	// KindDataProcessing: an InputFilter/OutputFilter is not a JSONPath
	// SageMaker accepts or selects outside a record, or a joined answer
	// does not have one record per input record.
	KindDataProcessing Kind = "data_processing"
	// KindInvalid: a Model or TransformJob field has a value SageMaker
	// refuses (an unknown SplitType, BatchStrategy, ...).
	KindInvalid Kind = "invalid"
)

// Error is every error this package returns about a model or a job
// (context cancellation comes back as ctx.Err()).
type Error struct {
	Kind Kind
	// Field is the request field at fault when one is, in the API's
	// spelling: "Environment.SAGEMAKER_PROGRAM", "ModelDataUrl",
	// "DataProcessing.InputFilter", "TransformInput.SplitType", ...
	Field string
	// Message says what happened, in terms of what the container does.
	Message string
	// Log is the tail of the serving process's output, when there is one.
	Log string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%s): %s", e.Kind, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func errorf(kind Kind, field, format string, args ...any) *Error {
	return &Error{Kind: kind, Field: field, Message: fmt.Sprintf(format, args...)}
}
