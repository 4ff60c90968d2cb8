package sagemakertest

import "testing"

// The shared schema itself accepts an expression as a create-model
// container's ModelDataUrl (nothing is patched in memory any more), and
// still checks the literal form.
func TestSharedSchemaAcceptsModelDataURLExpressions(t *testing.T) {
	model := func(url string) []byte {
		return []byte(`{"Version": "2020-12-01", "Metadata": {}, "Parameters": [], "Steps": [{"Name": "Train", "Type": "Training", "Arguments": {}},
			{"Name": "M", "Type": "Model", "Arguments": {"ExecutionRoleArn": "arn:aws:iam::123456789012:role/R",
			"PrimaryContainer": {"Image": "img", "Environment": {}, "ModelDataUrl": ` + url + `}}}]}`)
	}
	for _, url := range []string{`{"Get": "Steps.Train.ModelArtifacts.S3ModelArtifacts"}`,
		`{"Std:Join": {"On": "/", "Values": [{"Get": "Steps.Train.ModelArtifacts.S3ModelArtifacts"}, "model.tar.gz"]}}`,
		`"s3://bucket/model.tar.gz"`} {
		if err := Validate(t, model(url)); err != nil {
			t.Errorf("ModelDataUrl %s rejected: %v", url, err)
		}
	}
	if err := Validate(t, model(`"ftp://bucket/model.tar.gz"`)); err == nil {
		t.Error("a literal ModelDataUrl that is not an s3:// or https:// URL was accepted")
	}
}
