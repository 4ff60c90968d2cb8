package serving

import (
	"strings"
)

// Framework is the serving stack an image runs.
type Framework string

const (
	// XGBoost is sagemaker-xgboost: user code through SAGEMAKER_PROGRAM
	// (script mode), or the built-in algorithm's scoring service when no
	// program is set.
	XGBoost Framework = "xgboost"
	// PyTorch is pytorch-inference (and its Graviton variant): TorchServe
	// with the inference toolkit, handlers from code/ inside the model.
	PyTorch Framework = "pytorch"
	// SKLearn is sagemaker-scikit-learn: user code through
	// SAGEMAKER_PROGRAM only.
	SKLearn Framework = "sklearn"
)

// servingRepos maps an ECR repository name to the framework it serves.
var servingRepos = map[string]Framework{
	"sagemaker-xgboost":          XGBoost,
	"pytorch-inference":          PyTorch,
	"pytorch-inference-graviton": PyTorch,
	"sagemaker-scikit-learn":     SKLearn,
}

// trainingRepos are images that exist but hold no model server.
var trainingRepos = map[string]bool{"pytorch-training": true}

// ImageFramework says which serving stack an image URI names, from its
// repository: <account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>.
func ImageFramework(image string) (Framework, error) {
	repo := imageRepository(image)
	if f, ok := servingRepos[repo]; ok {
		return f, nil
	}
	if trainingRepos[repo] {
		return "", errorf(KindImage, "Image", "%s is a training image: it has no model server, so a model on it cannot answer requests (use the %s-inference image of the same version)", image, strings.TrimSuffix(repo, "-training"))
	}
	return "", errorf(KindImage, "Image", "image %q (repository %q) is not one of the serving images emulated here: sagemaker-xgboost, pytorch-inference, pytorch-inference-graviton, sagemaker-scikit-learn", image, repo)
}

// imageRepository is the repository part of an image URI: after the
// registry host, before the tag or digest.
func imageRepository(image string) string {
	rest := image
	if i := strings.IndexByte(rest, '/'); i >= 0 && strings.ContainsAny(rest[:i], ".:") {
		rest = rest[i+1:]
	}
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
