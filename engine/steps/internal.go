package steps

import "strings"

// InternalKind is an Amazon-internal step kind: loadable from Cursus files,
// never compiled here, with the public way to get the same result.
type InternalKind struct {
	Name string `json:"name"`
	// Replacement is the public step type to use instead; empty when the
	// node should simply be dropped.
	Replacement string `json:"replacement,omitempty"`
	Advice      string `json:"advice"`
}

// internalKinds are keyed by CanonicalKey so every spelling of a node or
// step name (CradleDataLoading_training, mims_registration, …) matches.
var internalKinds = map[string]InternalKind{
	"cradledataloading": {Name: "CradleDataLoading", Replacement: "DummyDataLoading",
		Advice: "Cradle is an Amazon-internal data service; export the data to S3 and load it with DummyDataLoading (config data_source)."},
	"redshiftdataloading": {Name: "RedshiftDataLoading", Replacement: "DummyDataLoading",
		Advice: "Redshift loading here goes through an Amazon-internal SDK; UNLOAD the query result to S3 and load it with DummyDataLoading."},
	"mimsmodelregistrationprocessing": {Name: "MimsModelRegistrationProcessing", Replacement: "Registration",
		Advice: "MIMS is Amazon-internal; Registration registers the packaged model in the public SageMaker Model Registry."},
	"mimsregistration": {Name: "MimsModelRegistrationProcessing", Replacement: "Registration",
		Advice: "MIMS is Amazon-internal; Registration registers the packaged model in the public SageMaker Model Registry."},
	"edxuploading": {Name: "EdxUploading", Replacement: "",
		Advice: "EDX is Amazon-internal; drop the node: the producing step's outputs already land in S3 under the pipeline's base path."},
	"datauploading": {Name: "DataUploading", Replacement: "",
		Advice: "Andes upload is Amazon-internal; drop the node: the producing step's outputs already land in S3 under the pipeline's base path."},
}

// LookupInternal reports whether name (a step type or a node name such as
// CradleDataLoading_training) is an Amazon-internal kind.
func LookupInternal(name string) (InternalKind, bool) {
	if k, ok := internalKinds[CanonicalKey(name)]; ok {
		return k, true
	}
	// Node names carry a job-type suffix.
	if i := strings.LastIndex(name, "_"); i > 0 {
		if k, ok := internalKinds[CanonicalKey(name[:i])]; ok {
			return k, true
		}
	}
	return InternalKind{}, false
}

// InternalReplacement maps an Amazon-internal kind to the public step to use
// instead. ok is true for every internal kind; public is empty for the
// upload sinks (EdxUploading, DataUploading), which need no replacement
// step — LookupInternal gives the advice text for those.
func InternalReplacement(stepType string) (public string, ok bool) {
	k, ok := LookupInternal(stepType)
	return k.Replacement, ok
}
