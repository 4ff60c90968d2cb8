package steps

import (
	"regexp"
	"strings"
	"unicode"
)

// compoundAcronyms are product names whose inner capitals are not word
// boundaries: XGBoostTraining is xgboost_training, not x_g_boost_training.
// Longest first so LightGBMMT wins over LightGBM.
var compoundAcronyms = []string{"LightGBMMT", "LightGBM", "XGBoost", "PyTorch", "TensorFlow", "SageMaker", "MLFlow", "AutoML"}

var (
	acronymBoundary = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`)
	lowerBoundary   = regexp.MustCompile(`([a-z\d])([A-Z])`)
)

// CanonicalToSnake turns a canonical step name into its snake-case token
// (XGBoostTraining → xgboost_training, GraphStormGNNTraining →
// graph_storm_gnn_training). Used for S3 path tokens and script names.
func CanonicalToSnake(name string) string {
	s := protectAcronyms(name)
	s = acronymBoundary.ReplaceAllString(s, "${1}_${2}")
	s = lowerBoundary.ReplaceAllString(s, "${1}_${2}")
	return strings.ToLower(s)
}

// protectAcronyms lowers the inner capitals of compound product names.
func protectAcronyms(name string) string {
	for _, a := range compoundAcronyms {
		name = strings.ReplaceAll(name, a, a[:1]+strings.ToLower(a[1:]))
	}
	return name
}

// ConventionStem is the file stem the loader tries first for a step type:
// protect the product names, then put "_" before every other capital
// (PyTorchTraining → pytorch_training). Names with acronyms (TSAModelEval)
// miss the convention and are found by the CanonicalKey fallback.
func ConventionStem(stepType string) string {
	s := protectAcronyms(stepType)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// CanonicalKey reduces a name to lowercase letters and digits: the universal
// comparator (XGBoostTraining, xgboost_training and "XGBoost-Training" all
// give "xgboosttraining").
func CanonicalKey(name string) string {
	// ASCII names (all real ones) in one pass, and no allocation when the
	// name is already its key; others as below (strings.ToLower maps a
	// few non-ASCII letters, such as the Kelvin sign, to ASCII ones).
	canonical, ascii := true, true
	for j := 0; j < len(name); j++ {
		c := name[j]
		if c >= 0x80 {
			ascii = false
			break
		}
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			canonical = false
		}
	}
	if ascii {
		if canonical {
			return name
		}
		out := make([]byte, 0, len(name))
		for j := 0; j < len(name); j++ {
			switch c := name[j]; {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				out = append(out, c)
			case c >= 'A' && c <= 'Z':
				out = append(out, c+'a'-'A')
			}
		}
		return string(out)
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Capitalize is Python's str.capitalize: first letter upper, the rest lower.
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(strings.ToLower(s))
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// PipelineStepName is the name a step gets in the SageMaker definition:
// the step type, plus "-" and the capitalized job type when there is one
// (TabularPreprocessing-Training). It is never the DAG node name.
func PipelineStepName(stepType, jobType string) string {
	if jobType == "" {
		return stepType
	}
	return stepType + "-" + Capitalize(jobType)
}

// SplitJobType splits a DAG node name into a known step type and the
// job-type suffix. It tries "_"-joined prefixes from longest to shortest and
// takes the first one known reports true for (known receives the prefix as
// written in the node; compare it with CanonicalKey). suffix is "" when the
// whole node is a step type; ok is false when no prefix is known.
func SplitJobType(node string, known func(string) bool) (stepType, suffix string, ok bool) {
	parts := strings.Split(node, "_")
	for i := len(parts); i > 0; i-- {
		prefix := strings.Join(parts[:i], "_")
		if prefix == "" {
			continue
		}
		if known(prefix) {
			return prefix, strings.Join(parts[i:], "_"), true
		}
	}
	return "", "", false
}

// DefaultConfigClass is the config class name a step gets unless its
// registry block overrides it.
func DefaultConfigClass(stepType string) string { return stepType + "Config" }

// DefaultBuilderName is the builder name a step gets unless its registry
// block overrides it.
func DefaultBuilderName(stepType string) string { return stepType + "StepBuilder" }

// ConfigClass is the step's config class name (registry.config_class wins).
func (i *Interface) ConfigClass() string {
	if i.Registry.ConfigClass != "" {
		return i.Registry.ConfigClass
	}
	return DefaultConfigClass(i.StepType)
}

// BuilderName is the step's builder name (registry.builder_step_name wins).
func (i *Interface) BuilderName() string {
	if i.Registry.BuilderStepName != "" {
		return i.Registry.BuilderStepName
	}
	return DefaultBuilderName(i.StepType)
}

// legacyAliases are old step names that still resolve to today's names.
var legacyAliases = map[string]string{
	"MIMSPackaging":     "Package",
	"MIMSPayload":       "Payload",
	"ModelRegistration": "Registration",
	"PytorchTraining":   "PyTorchTraining",
	"PytorchModel":      "PyTorchModel",
}

// LegacyAlias maps an old step name to its current name.
func LegacyAlias(name string) (string, bool) {
	v, ok := legacyAliases[name]
	return v, ok
}

// SourceStepType is the step type a compatible_sources entry names: Cursus
// files sometimes add the producer's job type (MissingValueImputation_Training,
// TabularPreprocessing-Training), which matches no step type as written.
func SourceStepType(source string) string {
	if i := strings.IndexAny(source, "_-"); i > 0 {
		return source[:i]
	}
	return source
}
