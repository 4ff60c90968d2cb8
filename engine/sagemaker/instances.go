package sagemaker

import (
	"slices"
	"strings"
)

// transformInstanceTypes is the TransformInstanceType enumeration of the
// SageMaker API (CreateTransformJob's TransformResources.InstanceType), by
// family: batch transform runs on these and nothing else (no Graviton, no
// t-family). Facts from the service model of the SageMaker API
// (2017-07-24).
var transformInstanceTypes = map[string][]string{
	"m4":   {"xlarge", "2xlarge", "4xlarge", "10xlarge", "16xlarge"},
	"c4":   {"xlarge", "2xlarge", "4xlarge", "8xlarge"},
	"p2":   {"xlarge", "8xlarge", "16xlarge"},
	"p3":   {"2xlarge", "8xlarge", "16xlarge"},
	"c5":   {"xlarge", "2xlarge", "4xlarge", "9xlarge", "18xlarge"},
	"m5":   {"large", "xlarge", "2xlarge", "4xlarge", "12xlarge", "24xlarge"},
	"m6i":  {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge"},
	"c6i":  {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge"},
	"r6i":  {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge"},
	"m7i":  {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"},
	"c7i":  {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"},
	"r7i":  {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"},
	"g4dn": {"xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge"},
	"g5":   {"xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"},
	"trn1": {"2xlarge", "32xlarge"},
	"inf2": {"xlarge", "8xlarge", "24xlarge", "48xlarge"},
	"g6":   {"xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"},
}

// ValidTransformInstanceType reports whether batch transform runs on the
// instance type.
func ValidTransformInstanceType(instanceType string) bool {
	family, size, ok := strings.Cut(strings.TrimPrefix(instanceType, "ml."), ".")
	return ok && strings.HasPrefix(instanceType, "ml.") && slices.Contains(transformInstanceTypes[family], size)
}

// TransformInstanceTypes lists the instance types batch transform runs on
// in the given family ("" = every family), sorted.
func TransformInstanceTypes(family string) []string {
	var out []string
	for f, sizes := range transformInstanceTypes {
		if family != "" && f != family {
			continue
		}
		for _, s := range sizes {
			out = append(out, "ml."+f+"."+s)
		}
	}
	slices.Sort(out)
	return out
}
