package sagemaker

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestImageURI(t *testing.T) {
	cases := []struct {
		req  ImageRequest
		want string
	}{
		{ImageRequest{Framework: "sklearn", Version: "1.2-1", Region: "us-west-2"}, "246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"},
		{ImageRequest{Framework: "sklearn", Version: "1.2-1", Region: "us-east-1", Scope: ScopeInference}, "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"},
		{ImageRequest{Framework: "xgboost", Version: "1.7-1", Region: "eu-west-1"}, "141502667606.dkr.ecr.eu-west-1.amazonaws.com/sagemaker-xgboost:1.7-1"},
		{ImageRequest{Framework: "pytorch", Version: "2.3.0", Region: "us-west-2", InstanceType: "ml.g5.xlarge"}, "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3.0-gpu-py311"},
		{ImageRequest{Framework: "pytorch", Version: "2.3", Region: "us-west-2", Scope: ScopeInference, InstanceType: "ml.m5.large"}, "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference:2.3.0-cpu-py311"},
		{ImageRequest{Framework: "pytorch", Version: "2.1.0", Region: "us-east-1", PyVersion: "py310"}, "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.1.0-cpu-py310"},
		{ImageRequest{Framework: "pytorch", Version: "2.4.0", Region: "us-east-1", Scope: ScopeInferenceGraviton}, "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference-graviton:2.4.0-cpu-py311-ubuntu22.04-sagemaker"},
		// Every region of the SDK table, not only three.
		{ImageRequest{Framework: "xgboost", Version: "1.7-1", Region: "ap-south-1"}, "720646828776.dkr.ecr.ap-south-1.amazonaws.com/sagemaker-xgboost:1.7-1"},
		{ImageRequest{Framework: "sklearn", Version: "1.2-1", Region: "eu-central-1"}, "492215442770.dkr.ecr.eu-central-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"},
		{ImageRequest{Framework: "xgboost", Version: "1.7-1", Region: "cn-north-1"}, "450853457545.dkr.ecr.cn-north-1.amazonaws.com.cn/sagemaker-xgboost:1.7-1"},
		// The instance type that runs the image picks its processor: Graviton
		// inference uses the arm64 image where the SDK has one.
		{ImageRequest{Framework: "pytorch", Version: "2.1.0", Region: "us-west-2", Scope: ScopeInference, InstanceType: "ml.c7g.xlarge"}, "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference-graviton:2.1.0-cpu-py310-ubuntu20.04-sagemaker"},
		{ImageRequest{Framework: "xgboost", Version: "1.5-1", Region: "us-west-2", Scope: ScopeInference, InstanceType: "ml.m6g.large"}, "246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-xgboost:1.5-1-arm64"},
		{ImageRequest{Framework: "pytorch", Version: "2.1.0", Region: "us-west-2", Scope: ScopeInference, InstanceType: "ml.g5.xlarge"}, "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference:2.1.0-gpu-py310"},
	}
	for _, c := range cases {
		got, err := ImageURI(c.req)
		if err != nil {
			t.Errorf("%+v: %v", c.req, err)
			continue
		}
		if got != c.want {
			t.Errorf("%+v: got %s, want %s", c.req, got, c.want)
		}
	}
}

func TestImageURIErrors(t *testing.T) {
	cases := []struct {
		req     ImageRequest
		mention string
	}{
		{ImageRequest{Framework: "tensorflow", Version: "2", Region: "us-east-1"}, "unknown framework"},
		{ImageRequest{Framework: "xgboost", Version: "0.9", Region: "us-east-1"}, "1.7-1"},
		{ImageRequest{Framework: "xgboost", Version: "1.7-1", Region: "mx-central-1"}, "eu-west-1"},
		{ImageRequest{Framework: "xgboost", Version: "1.7-1", Region: "us-west-2", Scope: ScopeInference, InstanceType: "ml.c7g.xlarge"}, "no Graviton (arm64) image for this version (valid: 1.3-1, 1.5-1)"},
		{ImageRequest{Framework: "pytorch", Version: "2.1.0", Region: "us-west-2", InstanceType: "ml.m7g.xlarge"}, "Graviton (arm64) instances have no training image"},
		{ImageRequest{Framework: "sklearn", Version: "1.2-1", Region: "us-west-2", InstanceType: "ml.g5.xlarge"}, "no gpu image"},
		{ImageRequest{Framework: "pytorch", Version: "2.3.0", Region: "us-east-1", PyVersion: "py38"}, "py311"},
		{ImageRequest{Framework: "pytorch", Version: "2.8.0", Region: "us-east-1", Scope: ScopeInference}, "unknown version"},
	}
	for _, c := range cases {
		_, err := ImageURI(c.req)
		var ie *ImageError
		if !errors.As(err, &ie) {
			t.Errorf("%+v: want *ImageError, got %v", c.req, err)
			continue
		}
		if !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), "image_uri") {
			t.Errorf("%+v: error %q should mention %q and image_uri", c.req, err, c.mention)
		}
	}
}

func TestProcessor(t *testing.T) {
	for it, want := range map[string]string{
		"ml.m5.large": ProcessorCPU, "ml.c7g.xlarge": ProcessorGraviton, "ml.m7g.large": ProcessorGraviton, "ml.c6gn.large": ProcessorGraviton,
		"ml.r7gd.large": ProcessorGraviton, "ml.g5.xlarge": ProcessorGPU, "ml.g4dn.xlarge": ProcessorGPU, "ml.p4d.24xlarge": ProcessorGPU,
		"ml.inf2.xlarge": ProcessorInf, "ml.trn1.2xlarge": ProcessorTrn, "ml.c5.xlarge": ProcessorCPU, "": ProcessorCPU,
	} {
		if got := Processor(it); got != want {
			t.Errorf("Processor(%q) = %s, want %s", it, got, want)
		}
	}
}

func TestTransformInstanceTypes(t *testing.T) {
	for it, want := range map[string]bool{"ml.m5.large": true, "ml.g5.xlarge": true, "ml.c7g.xlarge": false, "ml.m5.3xlarge": false,
		"ml.t3.medium": false, "ml.m5": false, "m5.large": false} {
		if got := ValidTransformInstanceType(it); got != want {
			t.Errorf("ValidTransformInstanceType(%q) = %v", it, got)
		}
	}
	if got := TransformInstanceTypes("g5"); len(got) != 8 || got[0] != "ml.g5.12xlarge" {
		t.Errorf("g5 family: %v", got)
	}
}

// The embedded table holds the SDK's image URI config facts: every
// repository and every region's account of every version of the three
// frameworks' training, inference and inference_graviton scopes.
func TestImageTableMatchesSDKConfig(t *testing.T) {
	for _, fw := range []string{"sklearn", "xgboost", "pytorch"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "sagemaker", "image-uri-config", fw+".json"))
		if errors.Is(err, os.ErrNotExist) && os.Getenv("CI") == "" {
			t.Skip("no ../shared/sagemaker/image-uri-config")
		}
		if err != nil {
			t.Fatal(err)
		}
		var sdk map[string]struct {
			Versions map[string]struct {
				Repository string            `json:"repository"`
				Registries map[string]string `json:"registries"`
				PyVersions []string          `json:"py_versions"`
			} `json:"versions"`
		}
		if err := json.Unmarshal(data, &sdk); err != nil {
			t.Fatal(err)
		}
		for _, scope := range []string{ScopeTraining, ScopeInference, ScopeInferenceGraviton} {
			ours := images.Frameworks[fw][scope]
			if len(ours.Versions) != len(sdk[scope].Versions) {
				t.Errorf("%s %s: %d versions, the SDK has %d", fw, scope, len(ours.Versions), len(sdk[scope].Versions))
			}
			for v, e := range sdk[scope].Versions {
				o, ok := ours.Versions[v]
				if !ok {
					t.Errorf("%s %s %s missing", fw, scope, v)
					continue
				}
				if o.Repository != e.Repository || !maps.Equal(images.Registries[o.Registries], e.Registries) || !slices.Equal(o.Py, e.PyVersions) {
					t.Errorf("%s %s %s differs from the SDK config", fw, scope, v)
				}
			}
		}
	}
}
