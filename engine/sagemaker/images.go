package sagemaker

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Image scopes.
const (
	ScopeTraining          = "training"
	ScopeInference         = "inference"
	ScopeInferenceGraviton = "inference_graviton"
)

//go:embed images.json
var imagesJSON []byte

type imageTable struct {
	Frameworks map[string]struct {
		Scopes   map[string]imageScope `json:"scopes"`
		Accounts map[string]string     `json:"accounts"`
	} `json:"frameworks"`
}

type imageScope struct {
	Repository string            `json:"repository"`
	Tag        string            `json:"tag"`
	Processors []string          `json:"processors"`
	Aliases    map[string]string `json:"aliases"`
	Versions   map[string]struct {
		Py        string `json:"py"`
		Container string `json:"container"`
	} `json:"versions"`
}

var images = func() imageTable {
	var t imageTable
	if err := json.Unmarshal(imagesJSON, &t); err != nil {
		panic("sagemaker: embedded images.json: " + err.Error()) // a build defect, caught by every test
	}
	return t
}()

// ImageRequest names the image to look up.
type ImageRequest struct {
	Framework    string // sklearn | xgboost | pytorch
	Version      string // framework version, e.g. 1.2-1, 1.7-1, 2.3 or 2.3.0
	Region       string // AWS region name
	Scope        string // training (default) | inference | inference_graviton
	PyVersion    string // checked against the table when the image tag has one
	InstanceType string // picks cpu or gpu where the framework has both
}

// ImageError explains why no image URI exists for a request.
type ImageError struct {
	Request ImageRequest
	Reason  string
	Allowed []string
}

func (e *ImageError) Error() string {
	msg := fmt.Sprintf("no SageMaker %s image for %s %s in %s: %s", e.Request.scope(), e.Request.Framework,
		e.Request.Version, e.Request.Region, e.Reason)
	if len(e.Allowed) > 0 {
		msg += " (known: " + strings.Join(e.Allowed, ", ") + ")"
	}
	return msg + "; set image_uri in the config to use another image"
}

func (r ImageRequest) scope() string {
	if r.Scope == "" {
		return ScopeTraining
	}
	return r.Scope
}

// ImageURI returns the public framework image for the request,
// `<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>`.
func ImageURI(r ImageRequest) (string, error) {
	fw, ok := images.Frameworks[strings.ToLower(r.Framework)]
	if !ok {
		return "", &ImageError{Request: r, Reason: "unknown framework", Allowed: slices.Sorted(maps.Keys(images.Frameworks))}
	}
	sc, ok := fw.Scopes[r.scope()]
	if !ok {
		return "", &ImageError{Request: r, Reason: "unknown image scope", Allowed: slices.Sorted(maps.Keys(fw.Scopes))}
	}
	account, ok := fw.Accounts[r.Region]
	if !ok {
		return "", &ImageError{Request: r, Reason: "region not in the image table", Allowed: slices.Sorted(maps.Keys(fw.Accounts))}
	}
	version := r.Version
	if full, ok := sc.Aliases[version]; ok {
		version = full
	}
	v, ok := sc.Versions[version]
	if !ok {
		return "", &ImageError{Request: r, Reason: "unknown version", Allowed: slices.Sorted(maps.Keys(sc.Versions))}
	}
	if v.Py != "" && r.PyVersion != "" && r.PyVersion != v.Py {
		return "", &ImageError{Request: r, Reason: "py_version " + r.PyVersion + " not built for this version", Allowed: []string{v.Py}}
	}
	processor := ""
	if len(sc.Processors) > 0 {
		processor = "cpu"
		if isGPUInstance(r.InstanceType) && slices.Contains(sc.Processors, "gpu") {
			processor = "gpu"
		}
	}
	tag := strings.NewReplacer("{version}", version, "{processor}", processor, "{py}", v.Py,
		"{container}", v.Container).Replace(sc.Tag)
	return fmt.Sprintf("%s.dkr.ecr.%s.amazonaws.com/%s:%s", account, r.Region, sc.Repository, tag), nil
}

// isGPUInstance follows the SDK: ml.p* and ml.g* families are GPU.
func isGPUInstance(instanceType string) bool {
	family := strings.TrimPrefix(instanceType, "ml.")
	return strings.HasPrefix(family, "p") || strings.HasPrefix(family, "g")
}
