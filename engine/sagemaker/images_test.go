package sagemaker

import (
	"errors"
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
		{ImageRequest{Framework: "pytorch", Version: "2.4.0", Region: "us-east-1", Scope: ScopeInferenceGraviton}, "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference-graviton:2.4.0-cpu-py311-ubuntu22.04"},
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
		{ImageRequest{Framework: "xgboost", Version: "1.7-1", Region: "ap-south-1"}, "region"},
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
