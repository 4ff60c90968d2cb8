// Package serving emulates how SageMaker's serving containers load a
// model and answer requests, and how batch transform feeds them, so a
// pipeline's Model, Transform and RegisterModel steps can run locally
// from the compiled definition, without Docker or the real images.
//
// # API
//
//	rt := &serving.Runtime{Python: "/usr/bin/python3"}   // one per process
//	srv, err := rt.Load(ctx, serving.Model{
//		Image:       container.Image,        // picks the serving stack
//		ModelData:   modelTarGz,             // ModelDataUrl's content
//		Environment: container.Environment,
//		Fetch:       objectStore.Get,        // for an s3:// SAGEMAKER_SUBMIT_DIRECTORY
//	})
//	defer srv.Close()
//	resp, err := srv.Invoke(ctx, payload, "text/csv", "text/csv")
//
//	res, err := rt.Transform(ctx, model, serving.TransformJob{
//		Inputs: objects, ContentType: "text/csv", SplitType: "Line",
//		Accept: "text/csv", AssembleWith: "Line", BatchStrategy: "MultiRecord",
//		DataProcessing: serving.DataProcessing{InputFilter: "$[2:]", JoinSource: "Input", OutputFilter: "$[0,1,-1]"},
//	})
//	// res.Outputs[i] is Inputs[i].Key + ".out"
//
// Every failure about the model or the job is an *Error whose Kind (and
// Field, in the API's spelling) says what to fix: KindMissingCode for a
// handler the image cannot find, KindModelLoad for a model_fn or booster
// that fails, KindPayload for data the model cannot read (a CSV header,
// a label column left in), KindDataProcessing for a filter or a join
// that does not fit, KindRuntimeUnavailable for a package that is not
// installed (LightGBM), KindTimeout, and so on. Cancelling ctx stops the
// serving process and returns ctx.Err().
//
// # What each image does (facts from the containers' sources)
//
// ImageFramework reads the repository of the image URI.
//
// sagemaker-xgboost with SAGEMAKER_PROGRAM set (script mode): the source
// directory SAGEMAKER_SUBMIT_DIRECTORY names (a tar.gz on S3, or a
// directory or tarball inside the container such as a repacked model's
// /opt/ml/model/code) is unpacked to /opt/ml/code and the program's
// module imported from there. The module's model_fn, input_fn,
// predict_fn, output_fn (or transform_fn alone) are used; the image's
// defaults fill the gaps: no default model_fn; input_fn reads text/csv
// (empty cells are NaN) and text/libsvm into a DMatrix; predict_fn calls
// Booster.predict(validate_features=False); output_fn encodes JSON, CSV
// or NPY. An absent Accept (or */*) is SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT,
// default application/json.
//
// sagemaker-xgboost without SAGEMAKER_PROGRAM (algorithm mode): every
// regular, non-dot file at the top of /opt/ml/model is loaded as a
// booster (pickle first, then Booster.load_model) and the predictions
// averaged (SAGEMAKER_INFERENCE_ENSEMBLE, default true; false loads only
// the first); a file that is neither fails the load. Requests are
// text/csv (no header; the payload is stripped, empty cells NaN) or
// text/libsvm; Accept defaults to SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT
// or text/csv; a JSON answer is {"predictions":[{"score":...}]}; under
// batch transform (SAGEMAKER_BATCH) the answer is one prediction per
// line.
//
// pytorch-inference: the inference toolkit imports SAGEMAKER_PROGRAM
// (default inference.py) only from code/ inside the model archive
// (/opt/ml/model/code); SAGEMAKER_SUBMIT_DIRECTORY is not read. Without
// that module it serves with its default handler, whose model_fn loads a
// TorchScript model.pt (or the one .pt/.pth file) with torch.jit.load:
// an ordinary state_dict fails, reported as KindMissingCode naming the
// module. Defaults: input_fn decodes text/csv (numpy.genfromtxt),
// application/json, application/x-npy into a FloatTensor; predict_fn
// calls the model under no_grad; output_fn encodes the first supported
// type of Accept.
//
// sagemaker-scikit-learn: script mode only (KindNoProgram without
// SAGEMAKER_PROGRAM); defaults decode CSV/JSON/NPY to float32 arrays and
// call model.predict.
//
// A code/requirements.txt (or one in the source directory) is what the
// real container pip-installs at start: here nothing is installed, and a
// requirement that is not importable makes the model
// KindRuntimeUnavailable, naming it (version specifiers are not checked).
//
// # Batch transform
//
// Transform loads the model with the environment a transform job's
// container gets (the model's Environment, SAGEMAKER_BATCH=true,
// SAGEMAKER_BATCH_STRATEGY, SAGEMAKER_MAX_PAYLOAD_IN_MB,
// SAGEMAKER_MAX_CONCURRENT_TRANSFORMS=1, then the job's Environment) and,
// for each input object: splits it into records (SplitType Line: one
// record per line; None: the whole object), applies InputFilter to each
// record, sends mini-batches (SingleRecord: one record per request;
// MultiRecord: as many line-joined records as fit in MaxPayloadInMB,
// default 6), and assembles the answers (AssembleWith Line: one output
// record per line). With JoinSource Input every answer must have one
// line per record sent; a CSV record is joined as its input columns then
// the answer's columns, a JSON object gets the answer under
// SageMakerOutput (a non-object input becomes {"SageMakerInput": ...,
// "SageMakerOutput": ...}); OutputFilter then applies to the joined
// record. CSV with DataProcessing needs SplitType and AssembleWith Line,
// as the developer guide says. The filters' JSONPath subset, and its
// inclusive slice end, are described in jsonpath.go.
//
// # How it runs
//
// Each loaded model is one long-lived Python process in the script
// sandbox (engine/sandbox: Landlock, seccomp, rlimits, a subreaper),
// reading only the interpreter's files and its own directory, where the
// model archive is unpacked under container/opt/ml/model (container
// paths /opt/ml/... that Python opens are mapped there). It imports the
// handler and loads the model once, then answers requests framed on a
// FIFO (the sandbox gives no stdin), its answers framed on the original
// stdout; whatever the model code prints goes to the log (stderr). One
// process per model rather than per request: importing xgboost or torch
// costs seconds, a request milliseconds. Limits bound the load time,
// each request's time, request and answer sizes, the unpacked archive,
// memory (address space) and CPU time; a timeout, a cancelled context or
// an answer over the limit stops the process.
//
// Not emulated: multi-model endpoints, SAGEMAKER_INFERENCE_OUTPUT
// (selectable inference output), recordio-protobuf payloads,
// SplitType RecordIO/TFRecord, more than one request at a time.
package serving
