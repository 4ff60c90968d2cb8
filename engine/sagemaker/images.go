package sagemaker

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Image scopes.
const (
	ScopeTraining          = "training"
	ScopeInference         = "inference"
	ScopeInferenceGraviton = "inference_graviton"
)

// Processors an instance type runs images for.
const (
	ProcessorCPU      = "cpu"
	ProcessorGPU      = "gpu"
	ProcessorGraviton = "graviton" // arm64 CPU (ml.c6g, ml.c7g, ml.m7g, …)
	ProcessorInf      = "inf"      // AWS Inferentia
	ProcessorTrn      = "trn"      // AWS Trainium
)

//go:embed images.json
var imagesJSON []byte

// imageTable is images.json: per framework, scope and version the
// repository, tag form, processors, Python versions and the ECR account of
// every region the SDK knows (registries, shared between versions).
type imageTable struct {
	Frameworks map[string]map[string]imageScope `json:"frameworks"`
	Registries map[string]map[string]string     `json:"registries"`
}

type imageScope struct {
	Tag        string                  `json:"tag"`
	Processors []string                `json:"processors"`
	Aliases    map[string]string       `json:"aliases"`
	Versions   map[string]imageVersion `json:"versions"`
}

type imageVersion struct {
	Repository string   `json:"repository"`
	Registries string   `json:"registries"`
	Py         []string `json:"py"`
	Processors []string `json:"processors"`
	Container  string   `json:"container"`
	Tag        string   `json:"tag"`
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
	Framework string // sklearn | xgboost | pytorch
	Version   string // framework version, e.g. 1.2-1, 1.7-1, 2.3 or 2.3.0
	Region    string // AWS region name
	Scope     string // training (default) | inference; inference on a Graviton instance uses inference_graviton
	PyVersion string // checked against the table when the image tag has one
	// InstanceType is the instance of the job that RUNS the image: it
	// picks cpu, gpu or the Graviton (arm64) image.
	InstanceType string
}

// ImageError explains why no image URI exists for a request.
type ImageError struct {
	Request ImageRequest
	Reason  string
	Allowed []string
}

func (e *ImageError) Error() string {
	msg := fmt.Sprintf("no SageMaker %s image for %s %s in %s", e.Request.scope(), e.Request.Framework, e.Request.Version, e.Request.Region)
	if e.Request.InstanceType != "" {
		msg += " on " + e.Request.InstanceType
	}
	msg += ": " + e.Reason
	if len(e.Allowed) > 0 {
		msg += " (valid: " + strings.Join(e.Allowed, ", ") + ")"
	}
	return msg + "; set image_uri in the config to use another image"
}

func (r ImageRequest) scope() string {
	if r.Scope == "" {
		return ScopeTraining
	}
	return r.Scope
}

var familyRe = regexp.MustCompile(`^ml\.([a-z0-9-]+)\.[a-z0-9]+$`)

// InstanceFamily is the family of an instance type ("c7g" of
// "ml.c7g.xlarge"), "" when it is not an ml.<family>.<size> name.
func InstanceFamily(instanceType string) string {
	m := familyRe.FindStringSubmatch(instanceType)
	if m == nil {
		return ""
	}
	return m[1]
}

// gravitonFamilyRe: AWS names Graviton (arm64) families with a "g" after
// the generation (m6g, c6gn, c7g, m7g, r7gd, c8g). GPU families start with
// "g" or "p" (g5, g6e, p4d) and never match.
var gravitonFamilyRe = regexp.MustCompile(`^[cmrtx][0-9]+g[a-z]*$`)

// Processor is what an instance type runs: cpu, gpu, graviton, inf or
// trn. GPU follows the SDK (families starting with g or p); Graviton
// families are arm64 CPUs that need arm64 images.
func Processor(instanceType string) string {
	family := InstanceFamily(instanceType)
	switch {
	case family == "":
		return ProcessorCPU
	case gravitonFamilyRe.MatchString(family):
		return ProcessorGraviton
	case strings.HasPrefix(family, "inf"):
		return ProcessorInf
	case strings.HasPrefix(family, "trn"):
		return ProcessorTrn
	case family[0] == 'g' || family[0] == 'p':
		return ProcessorGPU
	}
	return ProcessorCPU
}

// ImageURI returns the public framework image for the request,
// `<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>`: one
// function of framework, version, Python version, processor (from the
// instance type) and region, over the SDK's table of every region.
func ImageURI(r ImageRequest) (string, error) {
	fw, ok := images.Frameworks[strings.ToLower(r.Framework)]
	if !ok {
		return "", &ImageError{Request: r, Reason: "unknown framework", Allowed: slices.Sorted(maps.Keys(images.Frameworks))}
	}
	processor := Processor(r.InstanceType)
	scopeName := r.scope()
	if processor == ProcessorGraviton {
		if scopeName != ScopeInference {
			return "", &ImageError{Request: r, Reason: "Graviton (arm64) instances have no " + scopeName + " image; use an x86 instance type (e.g. ml.m5 or ml.c5)"}
		}
		scopeName = ScopeInferenceGraviton
	}
	sc, ok := fw[scopeName]
	if !ok {
		return "", &ImageError{Request: r, Reason: "unknown image scope " + scopeName, Allowed: slices.Sorted(maps.Keys(fw))}
	}
	version := r.Version
	if full, ok := sc.Aliases[version]; ok {
		version = full
	}
	v, ok := sc.Versions[version]
	if !ok {
		reason := "unknown version"
		if scopeName == ScopeInferenceGraviton {
			reason = "no Graviton (arm64) image for this version"
		}
		return "", &ImageError{Request: r, Reason: reason, Allowed: sortedVersions(sc.Versions)}
	}
	registries := images.Registries[v.Registries]
	account, ok := registries[r.Region]
	if !ok {
		return "", &ImageError{Request: r, Reason: "the image is not published in this region", Allowed: slices.Sorted(maps.Keys(registries))}
	}
	py := ""
	if len(v.Py) > 0 {
		py = v.Py[len(v.Py)-1]
		if r.PyVersion != "" {
			if !slices.Contains(v.Py, r.PyVersion) {
				return "", &ImageError{Request: r, Reason: "py_version " + r.PyVersion + " not built for this version", Allowed: v.Py}
			}
			py = r.PyVersion
		}
	}
	tag := sc.Tag
	if v.Tag != "" {
		tag = v.Tag
	}
	tagProcessor := ""
	if strings.Contains(tag, "{processor}") {
		available := sc.Processors
		if len(v.Processors) > 0 {
			available = v.Processors
		}
		tagProcessor = processor
		if processor == ProcessorGraviton {
			tagProcessor = ProcessorCPU
		}
		if !slices.Contains(available, tagProcessor) {
			return "", &ImageError{Request: r, Reason: "no " + processor + " image (instance type " + r.InstanceType + ")", Allowed: available}
		}
	} else if processor == ProcessorInf || processor == ProcessorTrn {
		return "", &ImageError{Request: r, Reason: "no " + processor + " image (instance type " + r.InstanceType + ")", Allowed: []string{ProcessorCPU, ProcessorGPU}}
	}
	tag = strings.NewReplacer("{version}", version, "{processor}", tagProcessor, "{py}", py, "{container}", v.Container).Replace(tag)
	return fmt.Sprintf("%s.dkr.ecr.%s%s/%s:%s", account, r.Region, ecrDomain(r.Region), v.Repository, tag), nil
}

// ecrDomain is the ECR host suffix of a region's partition.
func ecrDomain(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return ".amazonaws.com.cn"
	case strings.HasPrefix(region, "us-iso-"):
		return ".c2s.ic.gov"
	case strings.HasPrefix(region, "us-isob-"):
		return ".sc2s.sgov.gov"
	}
	return ".amazonaws.com"
}

func sortedVersions(m map[string]imageVersion) []string {
	return slices.Sorted(maps.Keys(m))
}
