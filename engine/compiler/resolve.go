package compiler

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
)

// Resolution methods, strongest first.
const (
	MethodExactKey      = "exact_key"
	MethodCaseKey       = "case_insensitive_key"
	MethodUniqueStep    = "unique_step_type"
	MethodStepAndJob    = "step_and_job_type"
	MethodJobType       = "job_type"
	MethodSemantic      = "semantic"
	MethodPattern       = "pattern"
	LowConfidence       = 0.8 // below: the preview recommends renaming
	AcceptedConfidence  = 0.7 // below: a warning
	unresolvedClassName = "UNRESOLVED"
)

// NodeResolution binds one DAG node to a config.
type NodeResolution struct {
	Node        string   `json:"node"`
	ConfigKey   string   `json:"config_key"`
	ConfigClass string   `json:"config_class"`
	StepType    string   `json:"step_type"`
	JobType     string   `json:"job_type,omitempty"`
	Confidence  float64  `json:"confidence"`
	Method      string   `json:"method"`
	Reasons     []string `json:"reasons"`
	// Alternatives are other configs that scored the same as the winner.
	Alternatives []string `json:"alternatives,omitempty"`
}

// NodeError says why a node has no config.
type NodeError struct {
	Node    string   `json:"node"`
	Message string   `json:"message"`
	Keys    []string `json:"available_keys,omitempty"`
}

func (e *NodeError) Error() string { return e.Message }

// ResolutionError lists every node that could not be bound, or step-name
// collisions between nodes.
type ResolutionError struct {
	Failures   []NodeError
	Collisions []string
}

func (e *ResolutionError) Error() string {
	var parts []string
	if len(e.Failures) > 0 {
		msgs := make([]string, len(e.Failures))
		for i, f := range e.Failures {
			msgs[i] = f.Message
		}
		parts = append(parts, fmt.Sprintf("could not resolve %d DAG node(s) to a configuration: %s", len(e.Failures), strings.Join(msgs, "; ")))
	}
	if len(e.Collisions) > 0 {
		parts = append(parts, "duplicate pipeline step name(s): "+strings.Join(e.Collisions, "; "))
	}
	return strings.Join(parts, "; ")
}

type candidate struct {
	cfg        *config.Config
	confidence float64
	method     string
	reasons    []string
}

// configIndex holds a compile's configs sorted by key and the position of
// each key in that order (the first, should a key repeat), so that binding
// a node to the config of its own name, and finding the config a
// resolution names, take one lookup rather than a scan of every config
// (which made binding quadratic in the number of nodes).
type configIndex struct {
	configs []config.Config
	at      map[string]int
}

func indexConfigs(cs []config.Config) configIndex {
	configs := append([]config.Config(nil), cs...)
	sort.SliceStable(configs, func(i, j int) bool { return configs[i].Key < configs[j].Key })
	at := make(map[string]int, len(configs))
	for i := range configs {
		if _, dup := at[configs[i].Key]; !dup {
			at[configs[i].Key] = i
		}
	}
	return configIndex{configs: configs, at: at}
}

// get is the config saved under key, or nil.
func (ix configIndex) get(key string) *config.Config {
	if i, ok := ix.at[key]; ok {
		return &ix.configs[i]
	}
	return nil
}

// resolveNode binds node to one of the indexed configs: a direct match
// first (confidence 1.0), otherwise the best of the job-type, semantic and
// pattern strategies; the first maximum in key order wins.
// nodeStep/nodeJob are the node's step type and suffix as the catalog
// splits them ("" when the node names no step type).
func resolveNode(node, nodeStep, nodeJob string, ix configIndex) (NodeResolution, error) {
	res := func(c *config.Config, conf float64, method string, reasons ...string) NodeResolution {
		return NodeResolution{Node: node, ConfigKey: c.Key, ConfigClass: c.ConfigClass, StepType: c.StepType,
			JobType: c.JobType, Confidence: conf, Method: method, Reasons: reasons}
	}
	if c := ix.get(node); c != nil {
		return res(c, 1, MethodExactKey, fmt.Sprintf("config key %q equals the node name", node)), nil
	}
	configs := ix.configs
	for i := range configs {
		if strings.EqualFold(configs[i].Key, node) {
			return res(&configs[i], 1, MethodCaseKey, fmt.Sprintf("config key %q equals the node name ignoring case", configs[i].Key)), nil
		}
	}
	if nodeStep != "" {
		var same []int
		for i := range configs {
			if steps.CanonicalKey(configs[i].StepType) == steps.CanonicalKey(nodeStep) {
				same = append(same, i)
			}
		}
		if nodeJob == "" && len(same) == 1 {
			c := &configs[same[0]]
			return res(c, 1, MethodUniqueStep, fmt.Sprintf("the only %s config is %q", nodeStep, c.Key)), nil
		}
		// Not in the reference: a node <Step>_<job> with exactly one config
		// of that step and job type is an unambiguous match even when the
		// key was spelt differently.
		var hits []int
		for _, i := range same {
			if nodeJob != "" && strings.EqualFold(configs[i].JobType, nodeJob) {
				hits = append(hits, i)
			}
		}
		if len(hits) == 1 {
			c := &configs[hits[0]]
			return res(c, 0.95, MethodStepAndJob, fmt.Sprintf("only %s config with job_type %q", nodeStep, c.JobType)), nil
		}
	}
	var cands []candidate
	cands = append(cands, jobTypeCandidates(node, configs)...)
	cands = append(cands, semanticCandidates(node, nodeStep, configs)...)
	cands = append(cands, patternCandidates(node, configs)...)
	if len(cands) == 0 {
		keys := make([]string, len(configs))
		for i, c := range configs {
			keys[i] = c.Key
		}
		return NodeResolution{}, &NodeError{Node: node, Keys: keys,
			Message: fmt.Sprintf("no configuration found for node %q (config keys: %s)", node, strings.Join(keys, ", "))}
	}
	best := 0
	for i, c := range cands {
		if c.confidence > cands[best].confidence {
			best = i
		}
	}
	b := cands[best]
	r := res(b.cfg, b.confidence, b.method, b.reasons...)
	seen := map[string]bool{b.cfg.Key: true}
	for _, c := range cands {
		if c.confidence == b.confidence && !seen[c.cfg.Key] {
			seen[c.cfg.Key] = true
			r.Alternatives = append(r.Alternatives, c.cfg.Key)
		}
	}
	sort.Strings(r.Alternatives)
	return r, nil
}

var jobTypeKeywords = []struct {
	group    string
	keywords []string
}{
	{"training", []string{"training", "train"}},
	{"calibration", []string{"calibration", "calib"}},
	{"evaluation", []string{"evaluation", "eval", "test"}},
	{"inference", []string{"inference", "infer", "predict"}},
}

func jobGroup(s string) (int, bool) {
	s = strings.ToLower(s)
	for i, g := range jobTypeKeywords {
		for _, k := range g.keywords {
			if strings.Contains(s, k) {
				return i, true
			}
		}
	}
	return 0, false
}

func classBase(class string) string {
	b := strings.ToLower(class)
	b = strings.ReplaceAll(b, "config", "")
	return strings.ReplaceAll(b, "step", "")
}

func jobTypeCandidates(node string, configs []config.Config) []candidate {
	g, ok := jobGroup(node)
	if !ok {
		return nil
	}
	lower := strings.ToLower(node)
	var out []candidate
	for i := range configs {
		c := &configs[i]
		if c.JobType == "" {
			continue
		}
		cg, ok := jobGroup(c.JobType)
		if !ok || cg != g {
			continue
		}
		base := classBase(c.ConfigClass)
		if j := strings.LastIndex(node, "_"); j >= 0 {
			prefix := strings.ToLower(node[:j])
			if !strings.Contains(prefix, base) && !strings.Contains(base, prefix) {
				continue
			}
		}
		ctc := 0.0
		if strings.Contains(lower, base) {
			ctc = 0.8
		} else {
			for _, part := range strings.Split(base, "_") {
				if part != "" && strings.Contains(lower, part) {
					ctc = 0.8
					break
				}
			}
		}
		if ctc == 0 {
			// The reference takes difflib's ratio of the raw strings; the
			// matcher's string component (ratio of normalised names) is the
			// closest public measure.
			ctc = deps.Explain(lower, base).String
		}
		out = append(out, candidate{cfg: c, confidence: 0.7 + 0.3*ctc, method: MethodJobType,
			reasons: []string{fmt.Sprintf("node and config job_type %q share the %s keywords", c.JobType, jobTypeKeywords[g].group)}})
	}
	return out
}

var semanticCategories = [][]string{
	{"loading", "load", "cradle"},
	{"preprocessing", "tabular"},
	{"training", "xgboost", "pytorch"},
	{"evaluation", "eval", "test"},
	{"transformation", "batch"},
}

func semanticCandidates(node, nodeStep string, configs []config.Config) []candidate {
	lower := strings.ToLower(node)
	var out []candidate
	for i := range configs {
		c := &configs[i]
		if nodeStep == "" || !strings.EqualFold(c.StepType, nodeStep) {
			continue
		}
		key := strings.ToLower(c.Key)
		for _, cat := range semanticCategories {
			if anyIn(lower, cat) && anyIn(key, cat) {
				out = append(out, candidate{cfg: c, confidence: 0.7, method: MethodSemantic,
					reasons: []string{fmt.Sprintf("node and config key %q share a keyword of %v and the step type %s", c.Key, cat, c.StepType)}})
				break
			}
		}
	}
	return out
}

func anyIn(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

var namePatterns = []struct {
	re    *regexp.Regexp
	steps []string
}{
	{regexp.MustCompile(`data_load`), []string{"CradleDataLoading", "DummyDataLoading"}},
	{regexp.MustCompile(`preprocess`), []string{"TabularPreprocessing"}},
	{regexp.MustCompile(`train`), []string{"XGBoostTraining", "PyTorchTraining", "LightGBMTraining", "DummyTraining"}},
	{regexp.MustCompile(`eval`), []string{"XGBoostModelEval", "PyTorchModelEval", "LightGBMModelEval"}},
	{regexp.MustCompile(`model`), []string{"XGBoostModel", "PyTorchModel"}},
	{regexp.MustCompile(`calibrat`), []string{"ModelCalibration", "PercentileModelCalibration"}},
	{regexp.MustCompile(`packag`), []string{"Package"}},
	{regexp.MustCompile(`payload`), []string{"Payload"}},
	{regexp.MustCompile(`regist`), []string{"Registration"}},
	{regexp.MustCompile(`transform`), []string{"BatchTransform"}},
	{regexp.MustCompile(`currency`), []string{"CurrencyConversion"}},
	{regexp.MustCompile(`risk`), []string{"RiskTableMapping"}},
}

func patternCandidates(node string, configs []config.Config) []candidate {
	lower := strings.ToLower(node)
	wanted := map[string]bool{}
	for _, p := range namePatterns {
		if p.re.MatchString(lower) {
			for _, s := range p.steps {
				wanted[s] = true
			}
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	ng, nodeHasGroup := jobGroup(lower)
	var out []candidate
	for i := range configs {
		c := &configs[i]
		if !wanted[c.StepType] {
			continue
		}
		boost := 0.0
		if cg, ok := jobGroup(c.JobType); ok && nodeHasGroup && cg == ng {
			boost = 1
		}
		conf := 0.6 + 0.2*boost
		if conf > 0.9 {
			conf = 0.9
		}
		out = append(out, candidate{cfg: c, confidence: conf, method: MethodPattern,
			reasons: []string{fmt.Sprintf("node name pattern suggests %s", c.StepType)}})
	}
	return out
}
