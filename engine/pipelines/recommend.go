package pipelines

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Query describes what a user wants. Every field is optional.
type Query struct {
	Framework  string   // hard filter unless "" or "any"
	Features   []string // wanted features (e.g. calibration, registration)
	TaskType   string
	Complexity string // simple | standard | advanced | comprehensive
	// UseCase is free text ("xgboost training with calibration"); its words
	// are mapped onto features, frameworks and task types.
	UseCase string

	DataType     string // text | tabular | mixed
	HasLabels    *bool  // default true
	NeedsLLM     bool
	MultiTask    bool
	Incremental  bool
	GPUAvailable *bool // default true

	MaxResults int // default 5
}

// Component is one explained part of a recommendation score.
type Component struct {
	Name   string  `json:"name"`
	Score  float64 `json:"score"`
	Max    float64 `json:"max"`
	Detail string  `json:"detail"`
}

// Recommendation is a ranked entry with its explained score.
type Recommendation struct {
	Entry      *Entry      `json:"-"`
	Score      float64     `json:"score"`
	Match      float64     `json:"match"`  // weighted sum of the components
	Factor     float64     `json:"factor"` // product of the suitability factors
	Components []Component `json:"components"`
	Factors    []Component `json:"factors"`
	Reasoning  string      `json:"reasoning"`
	// Lacks are the requested features the DAG does not have, in the
	// order they were asked for.
	Lacks []string `json:"-"`
}

// Component weights; they sum to 1.
const (
	weightFeatures   = 0.5
	weightFramework  = 0.25
	weightTask       = 0.15
	weightComplexity = 0.1
	// MinScore drops weak matches from recommendations.
	MinScore = 0.2
	// DefaultAutoSelectScore is auto_select's default threshold.
	DefaultAutoSelectScore = 0.6
)

var complexityOrder = map[string]int{"simple": 0, "standard": 1, "advanced": 2, "comprehensive": 3}

// useCaseVocabulary maps free-text words onto catalog features.
var useCaseVocabulary = map[string]string{
	"train": "training", "training": "training", "trained": "training", "fit": "training",
	"eval": "evaluation", "evaluate": "evaluation", "evaluation": "evaluation", "evaluating": "evaluation",
	"calibrate": "calibration", "calibrated": "calibration", "calibration": "calibration", "probabilities": "calibration",
	"percentile": "percentile_calibration", "percentiles": "percentile_calibration",
	"package": "packaging", "packaging": "packaging", "packaged": "packaging",
	"payload": "payload", "payloads": "payload",
	"register": "registration", "registration": "registration", "registry": "registration", "deploy": "registration", "deployment": "registration",
	"inference": "batch_inference", "predict": "batch_inference", "predictions": "batch_inference", "scoring": "batch_inference", "score": "batch_inference", "batch": "batch_inference",
	"transform": "batch_transform",
	"metrics":   "metrics",
	"creation":  "model_creation", "create": "model_creation", "createmodel": "model_creation",
	"preprocess": "preprocessing", "preprocessing": "preprocessing",
	"impute": "imputation", "imputation": "imputation", "missing": "imputation",
	"risk": "risk_table_mapping", "categorical": "risk_table_mapping",
	"selection":  "feature_selection",
	"stratified": "stratified_sampling", "sampling": "stratified_sampling", "imbalanced": "stratified_sampling",
	"currency": "currency_conversion",
	"tune":     "tuning", "tuning": "tuning", "hyperparameter": "tuning", "hpo": "tuning",
}

var useCaseFrameworks = map[string]string{"xgboost": "xgboost", "xgb": "xgboost", "lightgbm": "lightgbm", "lgbm": "lightgbm",
	"pytorch": "pytorch", "torch": "pytorch"}

// Words too common to carry meaning in a use case.
var useCaseIgnored = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true, "with": true, "for": true,
	"of": true, "to": true, "in": true, "on": true, "my": true, "i": true, "want": true, "need": true, "model": true,
	"pipeline": true, "data": true, "using": true, "use": true, "then": true, "plus": true, "dag": true}

// parsedUseCase is what the free text contributed.
type parsedUseCase struct {
	features  []string
	framework string
	ignored   []string
}

func parseUseCase(text string) parsedUseCase {
	var p parsedUseCase
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, w := range words {
		switch {
		case useCaseFrameworks[w] != "":
			p.framework = useCaseFrameworks[w]
		case useCaseVocabulary[w] != "":
			if f := useCaseVocabulary[w]; !slices.Contains(p.features, f) {
				p.features = append(p.features, f)
			}
		case !useCaseIgnored[w] && !slices.Contains(p.ignored, w):
			p.ignored = append(p.ignored, w)
		}
	}
	return p
}

// Recommend ranks the catalog for q. The score is match × factor: match is
// 0.5·features + 0.25·framework + 0.15·task + 0.1·complexity (a component
// nobody asked about counts in full), factor multiplies the suitability
// penalties (data type, labels, LLM, multi-task, incremental, GPU). Entries
// scoring ≤ MinScore are dropped; ties go to the simpler DAG, then the
// smaller one, then the id, so the order is fully deterministic.
func (c *Catalog) Recommend(q Query) []Recommendation {
	uc := parseUseCase(q.UseCase)
	wanted := append([]string(nil), q.Features...)
	for _, f := range uc.features {
		if !slices.Contains(wanted, f) {
			wanted = append(wanted, f)
		}
	}
	framework := strings.ToLower(strings.TrimSpace(q.Framework))
	hard := framework != "" && framework != "any"
	var out []Recommendation
	for _, e := range c.entries {
		if hard && !strings.EqualFold(e.Framework, framework) {
			continue
		}
		r, keep := score(e, q, wanted, hard, uc)
		if keep && r.Score > MinScore {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if ca, cb := complexityOrder[a.Entry.Complexity], complexityOrder[b.Entry.Complexity]; ca != cb {
			return ca < cb
		}
		if a.Entry.NodeCount != b.Entry.NodeCount {
			return a.Entry.NodeCount < b.Entry.NodeCount
		}
		return a.Entry.ID < b.Entry.ID
	})
	limit := q.MaxResults
	if limit <= 0 {
		limit = 5
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// AutoSelect returns the top recommendation if it reaches minScore.
func (c *Catalog) AutoSelect(q Query, minScore float64) (Recommendation, bool) {
	q.MaxResults = 1
	recs := c.Recommend(q)
	if len(recs) == 0 || recs[0].Score < minScore {
		if len(recs) > 0 {
			return recs[0], false
		}
		return Recommendation{}, false
	}
	return recs[0], true
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func score(e *Entry, q Query, wanted []string, hardFramework bool, uc parsedUseCase) (Recommendation, bool) {
	r := Recommendation{Entry: e}
	// Features: recall of what was asked, with a little weight on
	// precision so the DAG that does just that outranks one that does it
	// among many other things.
	if len(wanted) == 0 {
		r.Components = append(r.Components, Component{"features", weightFeatures, weightFeatures, "no features requested"})
	} else {
		var hit, miss []string
		for _, f := range wanted {
			if slices.Contains(e.Features, f) {
				hit = append(hit, f)
			} else {
				miss = append(miss, f)
			}
		}
		recall := float64(len(hit)) / float64(len(wanted))
		precision := 0.0
		if len(e.Features) > 0 {
			precision = float64(len(hit)) / float64(len(e.Features))
		}
		s := weightFeatures * (0.8*recall + 0.2*precision)
		detail := fmt.Sprintf("has %d of %d requested (%s)", len(hit), len(wanted), strings.Join(hit, ", "))
		if len(miss) > 0 {
			detail += "; lacks " + strings.Join(miss, ", ")
		}
		r.Lacks = miss
		detail += fmt.Sprintf("; %d of its %d features requested", len(hit), len(e.Features))
		r.Components = append(r.Components, Component{"features", s, weightFeatures, detail})
	}
	switch {
	case hardFramework:
		r.Components = append(r.Components, Component{"framework", weightFramework, weightFramework, "framework " + e.Framework + " as requested"})
	case uc.framework != "" && uc.framework == e.Framework:
		r.Components = append(r.Components, Component{"framework", weightFramework, weightFramework, "use case names " + e.Framework})
	case uc.framework != "":
		r.Components = append(r.Components, Component{"framework", 0, weightFramework, "use case names " + uc.framework + ", this DAG is " + e.Framework})
	default:
		r.Components = append(r.Components, Component{"framework", weightFramework, weightFramework, "no framework requested"})
	}
	task := strings.ToLower(strings.TrimSpace(q.TaskType))
	switch {
	case task == "":
		r.Components = append(r.Components, Component{"task_type", weightTask, weightTask, "no task type requested"})
	case e.TaskType != "" && (strings.Contains(e.TaskType, task) || strings.Contains(task, e.TaskType)):
		r.Components = append(r.Components, Component{"task_type", weightTask, weightTask, "task type " + e.TaskType + " matches"})
	case strings.Contains(e.ID, task):
		r.Components = append(r.Components, Component{"task_type", 0.07, weightTask, "task type only appears in the id"})
	default:
		r.Components = append(r.Components, Component{"task_type", 0, weightTask, fmt.Sprintf("task type is %q", e.TaskType)})
	}
	if cx, ok := complexityOrder[strings.ToLower(q.Complexity)]; ok {
		dist := math.Abs(float64(cx - complexityOrder[e.Complexity]))
		s := weightComplexity * math.Max(0, 1-0.33*dist)
		r.Components = append(r.Components, Component{"complexity", s, weightComplexity, fmt.Sprintf("complexity %s (asked %s)", e.Complexity, q.Complexity)})
	} else {
		r.Components = append(r.Components, Component{"complexity", weightComplexity, weightComplexity, "no complexity requested"})
	}
	for _, comp := range r.Components {
		r.Match += comp.Score
	}

	r.Factor = 1
	factor := func(name string, f float64, detail string) {
		r.Factor *= f
		r.Factors = append(r.Factors, Component{Name: name, Score: f, Max: 1, Detail: detail})
	}
	req := e.InputRequirements
	textSupport, _ := req["text_support"].(bool)
	multiTask, _ := req["multi_task"].(bool)
	requiresLLM, _ := req["requires_llm"].(bool)
	requiresGPU, _ := e.Constraints["requires_gpu"].(bool)
	if q.DataType == "text" && !textSupport {
		return r, false
	}
	if q.GPUAvailable != nil && !*q.GPUAvailable && requiresGPU {
		return r, false
	}
	if q.DataType == "tabular" && e.Framework == "pytorch" && !q.NeedsLLM {
		factor("data_type", 0.5, "tabular data is usually better served by tree models than PyTorch")
	}
	if q.MultiTask && !multiTask {
		factor("multi_task", 0.3, "multi-task wanted, DAG is single-task")
	} else if !q.MultiTask && multiTask {
		factor("multi_task", 0.5, "DAG is multi-task, not wanted")
	}
	if q.NeedsLLM && !requiresLLM {
		factor("llm", 0.3, "LLM wanted, DAG has none")
	} else if !q.NeedsLLM && requiresLLM {
		factor("llm", 0.6, "DAG uses an LLM (not required)")
	}
	if q.Incremental {
		if strings.Contains(e.TaskType, "incremental") {
			factor("incremental", 1.5, "supports incremental training")
		} else {
			factor("incremental", 0.4, "no incremental training support")
		}
	}
	if q.HasLabels != nil && !*q.HasLabels && !requiresLLM {
		factor("labels", 0.3, "needs labelled data, none available")
	}
	r.Score = round3(math.Min(1, r.Match*r.Factor))
	for i := range r.Components {
		r.Components[i].Score = round3(r.Components[i].Score)
	}
	r.Match = round3(r.Match)
	r.Factor = round3(r.Factor)
	var why []string
	for _, comp := range append(append([]Component(nil), r.Components...), r.Factors...) {
		if comp.Score != comp.Max || comp.Name == "features" || comp.Name == "framework" {
			why = append(why, comp.Name+": "+comp.Detail)
		}
	}
	if len(uc.ignored) > 0 {
		why = append(why, "use-case words not used: "+strings.Join(uc.ignored, ", "))
	}
	r.Reasoning = strings.Join(why, "; ")
	return r, true
}
