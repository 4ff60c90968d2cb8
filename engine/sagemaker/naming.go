package sagemaker

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// MaxPipelineNameLength is SageMaker's limit on a pipeline name.
const MaxPipelineNameLength = 255

// MaxStepNameLength is the limit the definition schema puts on step names.
const MaxStepNameLength = 64

// MaxExperimentNameLength is SageMaker's limit on experiment and trial
// names (ExperimentEntityName). A definition's PipelineExperimentConfig
// names the experiment after the pipeline, so a pipeline whose name is
// longer cannot start an execution.
const MaxExperimentNameLength = 120

// MaxJobNameLength is SageMaker's limit on processing, training, transform
// job, model and model package group names.
const MaxJobNameLength = 63

// BoundName returns name when it has at most max characters, else a
// prefix of it joined with "-" to 8 hex digits of its SHA-256: the same
// long name always gives the same bounded one, and two long names that
// share the prefix still differ. max must be at least 10.
func BoundName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	prefix := strings.TrimRight(name[:max-9], "-_")
	return prefix + "-" + hex.EncodeToString(sum[:])[:8]
}

var (
	pipelineNameRe = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,254}$`)
	stepNameRe     = regexp.MustCompile(`^[A-Za-z0-9\-_]{1,64}$`)
)

// SanitizePipelineName turns any text into a valid pipeline name: "." and
// "_" become "-", other characters outside [a-zA-Z0-9-] are dropped, a
// leading non-alphanumeric gets a "p" prefix, runs of "-" collapse, the
// result is cut to 255 characters and trailing "-" removed. Text that
// sanitises to nothing becomes "pipeline"; empty text stays empty.
func SanitizePipelineName(name string) string {
	if name == "" {
		return ""
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '.' || r == '_' || r == '-':
			b.WriteByte('-')
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s != "" && s[0] == '-' {
		s = "p" + s
	}
	s = collapseDashes(s)
	s = strings.TrimRight(s, "-")
	if s == "" {
		return "pipeline"
	}
	return BoundName(s, MaxPipelineNameLength)
}

func collapseDashes(s string) string {
	var b strings.Builder
	prev := false
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			if prev {
				continue
			}
			prev = true
		} else {
			prev = false
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// GeneratePipelineName is the Cursus default name: the sanitised
// "<base>-<version>-pipeline", bounded to MaxExperimentNameLength (with a
// hash suffix, see BoundName) so that the experiment the definition names
// after the pipeline can be created.
func GeneratePipelineName(base, version string) string {
	return BoundName(SanitizePipelineName(base+"-"+version+"-pipeline"), MaxExperimentNameLength)
}

// DAGPipelineName is the default name of one DAG's pipeline: the
// sanitised "<base>-<dag>-<version>-pipeline". The DAG part keeps DAGs
// compiled with the same base config from upserting over each other's
// pipeline; an empty dag gives GeneratePipelineName's name.
func DAGPipelineName(base, dag, version string) string {
	if dag == "" {
		return GeneratePipelineName(base, version)
	}
	return GeneratePipelineName(base+"-"+dag, version)
}

// ValidPipelineName reports whether SageMaker accepts name.
func ValidPipelineName(name string) bool {
	return len(name) >= 1 && len(name) <= MaxPipelineNameLength && pipelineNameRe.MatchString(name)
}

// ValidStepName reports whether name is a valid definition step name.
func ValidStepName(name string) bool { return stepNameRe.MatchString(name) }
