package sagemakertest

import (
	"strings"
	"testing"
)

// registerModel is a minimal definition with one RegisterModel step whose
// container carries extra (a JSON object member list).
func registerModel(extra string) []byte {
	return []byte(`{"Version":"2020-12-01","Metadata":{},"Parameters":[],"Steps":[{"Name":"Reg","Type":"RegisterModel","Arguments":{
"ModelPackageGroupName":"g","ModelApprovalStatus":"PendingManualApproval","InferenceSpecification":{"Containers":[{"Image":"i","ModelDataUrl":"s3://b/m.tar.gz"` +
		extra + `}],"SupportedContentTypes":["text/csv"],"SupportedResponseMIMETypes":["text/csv"]}}}]}`)
}

// The patches admit exactly what they list: a container Environment of
// strings validates; a non-string value or an unknown key still fails.
func TestPatchesAdmitOnlyWhatTheyList(t *testing.T) {
	if err := Validate(t, registerModel(``)); err != nil {
		t.Fatalf("base definition: %v", err)
	}
	if err := Validate(t, registerModel(`,"Environment":{"SAGEMAKER_PROGRAM":"inference.py"}`)); err != nil {
		t.Errorf("Environment rejected: %v", err)
	}
	if err := Validate(t, registerModel(`,"Environment":{"SAGEMAKER_PROGRAM":7}`)); err == nil {
		t.Error("a non-string environment value validates")
	}
	if err := Validate(t, registerModel(`,"Bogus":"x"`)); err == nil || !strings.Contains(err.Error(), "Bogus") {
		t.Errorf("an unknown container key: %v", err)
	}
	if len(Patches) != 5 {
		t.Errorf("%d patches; update the list in docs/SDK_PARITY.md with them", len(Patches))
	}
}
