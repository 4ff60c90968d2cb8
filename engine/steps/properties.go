package steps

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/internal/textdist"
)

// propertiesJSON lists, per SageMaker step type, every property path a
// pipeline may read from the step at run time: the scalar members of the
// response of the Describe* operation the step's properties come from (a
// Tuning step's also from ListTrainingJobsForHyperParameterTuningJob, as in
// the SageMaker Python SDK). It is generated from the AWS SDK's response
// types (TestPropertyTableMatchesAWSShapes); list elements and map values
// are written [*].
//
//go:embed properties.json
var propertiesJSON []byte

// PropertyTable is the decoded properties.json.
type PropertyTable struct {
	About     string                        `json:"about"`
	StepTypes map[string]StepTypeProperties `json:"step_types"`
}

// StepTypeProperties are the readable properties of one SageMaker step type.
type StepTypeProperties struct {
	// Operations are the API operations whose responses the paths come from.
	Operations []string `json:"operations"`
	Paths      []string `json:"paths"`
}

var propertyTable, propertySets = mustPropertyTable()

func mustPropertyTable() (PropertyTable, map[string]map[string]bool) {
	var t PropertyTable
	if err := json.Unmarshal(propertiesJSON, &t); err != nil {
		panic(fmt.Sprintf("properties.json: %v", err))
	}
	sets := map[string]map[string]bool{}
	for st, p := range t.StepTypes {
		sets[st] = map[string]bool{}
		for _, path := range p.Paths {
			sets[st][path] = true
		}
	}
	return t, sets
}

// PropertyOperations names the API operations a SageMaker step type's
// properties come from; nil when the table has no entry for it.
func PropertyOperations(smType string) []string {
	return propertyTable.StepTypes[smType].Operations
}

// elementAccess is a list index ([0]) or a map key / processing output name
// (['train']) in a property path.
var elementAccess = regexp.MustCompile(`\[(\d+|'[^']*'|"[^"]*")\]`)

// NormalizePropertyPath drops a leading "properties." and writes every
// element access as [*], the form of the table.
func NormalizePropertyPath(path string) string {
	return elementAccess.ReplaceAllString(strings.TrimPrefix(path, "properties."), "[*]")
}

// CheckPropertyPath says whether path (with or without "properties.")
// exists in the response shape of smType. known is false when the table
// has no entry for smType (then nothing is checked). When the path does not
// exist, nearest lists up to three valid paths, closest first.
func CheckPropertyPath(smType, path string) (known, ok bool, nearest []string) {
	paths, known := propertySets[smType]
	if !known {
		return false, true, nil
	}
	norm := NormalizePropertyPath(path)
	if paths[norm] {
		return true, true, nil
	}
	return true, false, nearestPaths(paths, norm, 3)
}

// nearestPaths ranks candidates by how many leading and trailing segments
// they share with path, then by edit distance, so a wrong leaf under a valid
// parent suggests that parent's members, and a valid tail under the wrong
// parent suggests where that tail lives.
func nearestPaths(paths map[string]bool, path string, n int) []string {
	segs := strings.Split(path, ".")
	type cand struct {
		path   string
		shared int
		dist   int
	}
	var cands []cand
	for p := range paths {
		ps := strings.Split(p, ".")
		lead := 0
		for lead < len(segs) && lead < len(ps) && segs[lead] == ps[lead] {
			lead++
		}
		trail := 0
		for trail < len(segs)-lead && trail < len(ps)-lead && segs[len(segs)-1-trail] == ps[len(ps)-1-trail] {
			trail++
		}
		cands = append(cands, cand{p, lead + trail, textdist.Distance(path, p)})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.shared != b.shared {
			return b.shared - a.shared
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.path, b.path)
	})
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, "properties."+c.path)
	}
	return out
}
