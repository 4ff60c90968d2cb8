package steps

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/engine/finding"
)

// FileSuffix is the extension every step interface file carries.
const FileSuffix = ".step.yaml"

// LoadError says why a file could not be read as a step interface. Every
// finding names the file, the key path and the rule.
type LoadError struct {
	File     string
	Findings []finding.Finding
}

func (e *LoadError) Error() string {
	if len(e.Findings) == 0 {
		return e.File + ": cannot load step interface"
	}
	msg := e.Findings[0].String()
	if n := len(e.Findings) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Parse reads one step interface file. file names it in findings. Unknown
// keys are ignored here and reported by Validate as warnings; keys of the
// wrong shape (a list where a map belongs, a word where a boolean belongs)
// stop the load with a *LoadError.
func Parse(file string, data []byte) (*Interface, error) {
	if len(data) > MaxFileSize {
		return nil, &LoadError{File: file, Findings: []finding.Finding{{
			Level: finding.Error, File: file, Rule: "file_size",
			Message: fmt.Sprintf("file is %d bytes; step interface files are limited to %d", len(data), MaxFileSize),
		}}}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &LoadError{File: file, Findings: []finding.Finding{{
			Level: finding.Error, File: file, Path: "", Rule: "yaml_syntax", Message: err.Error(),
		}}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &LoadError{File: file, Findings: []finding.Finding{{
			Level: finding.Error, File: file, Path: "", Rule: "document_mapping",
			Message: "a step interface file must be a YAML mapping of sections",
		}}}
	}
	// Anchors and aliases are legal YAML, but a few nested aliases expand
	// to billions of nodes; refuse documents that grow past a sane size
	// before anything walks or copies them.
	if expandedSize(root, map[*yaml.Node]int{}) > maxExpandedNodes {
		return nil, &LoadError{File: file, Findings: []finding.Finding{{
			Level: finding.Error, File: file, Rule: "yaml_aliases",
			Message: fmt.Sprintf("the document expands to more than %d nodes through aliases", maxExpandedNodes),
		}}}
	}
	w := shapeWalker{file: file}
	w.walk(root, interfaceShape, "")
	if len(w.errs) > 0 {
		return nil, &LoadError{File: file, Findings: w.errs}
	}
	iface, err := decodeInterface(root)
	if err != nil {
		return nil, &LoadError{File: file, Findings: []finding.Finding{{
			Level: finding.Error, File: file, Rule: "decode", Message: err.Error(),
		}}}
	}
	iface.Source = file
	iface.raw = root
	iface.text = data
	iface.digest = sha256.Sum256(data)
	iface.unknown = w.unknown
	for _, k := range []string{"step_type", "contract", "registry"} {
		if mapValue(root, k) == nil {
			iface.missing = append(iface.missing, k)
		}
	}
	return iface, nil
}

func decodeInterface(root *yaml.Node) (*Interface, error) {
	var iface Interface
	if err := root.Decode(&iface); err != nil {
		return nil, err
	}
	return &iface, nil
}

// MaxFileSize bounds an interface file; real ones are a few kilobytes.
const MaxFileSize = 1 << 20

// maxExpandedNodes bounds a document's size with aliases expanded.
const maxExpandedNodes = 200_000

// expandedSize counts the nodes of n with aliases expanded, saturating just
// above maxExpandedNodes. memo makes it linear in the written document.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int) int {
	if n == nil {
		return 0
	}
	if v, ok := memo[n]; ok {
		return v
	}
	memo[n] = maxExpandedNodes + 1 // an alias cycle counts as too big
	size := 1
	if n.Kind == yaml.AliasNode {
		size += expandedSize(n.Alias, memo)
	}
	for _, c := range n.Content {
		size += expandedSize(c, memo)
		if size > maxExpandedNodes {
			break
		}
	}
	size = min(size, maxExpandedNodes+1)
	memo[n] = size
	return size
}

// --- shape checking -------------------------------------------------------

// shape describes what a key may hold. A nil shape accepts anything.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // for kindObject: known keys
	elem   *shape            // for kindMapOf / kindList: the value shape
}

type shapeKind int

const (
	kindAny shapeKind = iota
	kindString
	kindBool
	kindNumber
	kindObject // fixed keys
	kindMapOf  // user-chosen keys, each value of elem shape
	kindList
)

var (
	anyS    = &shape{kind: kindAny}
	strS    = &shape{kind: kindString}
	boolS   = &shape{kind: kindBool}
	numS    = &shape{kind: kindNumber}
	strList = &shape{kind: kindList, elem: strS}
	strMap  = &shape{kind: kindMapOf, elem: strS}
)

func obj(fields map[string]*shape) *shape { return &shape{kind: kindObject, fields: fields} }
func mapOf(elem *shape) *shape            { return &shape{kind: kindMapOf, elem: elem} }
func listOf(elem *shape) *shape           { return &shape{kind: kindList, elem: elem} }

var (
	registryShape = obj(map[string]*shape{
		"sagemaker_step_type": strS, "description": strS, "requires": strS, "config_class": strS,
		"builder_step_name": strS, "step_assembly": strS,
	})
	computeShape = obj(map[string]*shape{
		"kind": strS, "sdk_class": strS, "framework_version_field": strS, "framework_version_default": strS,
		"py_version_field": strS, "framework_name": strS, "model_family": strS, "image_uri_field": strS, "container_entrypoint": strList,
		"lock_training_region": boolS, "retrieve_image": strS, "retrieve_framework": strS, "kms_network": boolS,
		"network_mode": strS, "requires": strS, "subnets_field": strS, "security_group_ids_field": strS,
		"enable_network_isolation_field": strS, "instance_size_mode": strS, "locked_region": strS,
	})
	patternsShape = obj(map[string]*shape{
		"step_assembly": strS, "direct_input_keys": strList, "include_job_type_in_path": boolS,
	})
	contractShape = obj(map[string]*shape{
		"entry_point": strS, "description": strS,
		"inputs":  mapOf(obj(map[string]*shape{"path": strS, "required": boolS, "channels": strList})),
		"outputs": mapOf(obj(map[string]*shape{"path": strS, "object": strS})),
		"env_vars": obj(map[string]*shape{
			"required": strList, "optional": strMap,
		}),
		"job_arguments":          listOf(obj(map[string]*shape{"flag": strS, "source": strS})),
		"arguments":              strMap,
		"framework_requirements": strMap,
		"source_dir":             strS, "include_job_type_in_path": boolS, "skip_inputs": strList,
		"input_source_overrides": strMap, "circular_ref_check": boolS, "runtime_requires": strList,
		"computed_env_paths": mapOf(strList), "output_path_token": strS, "sink": boolS,
	})
	dependencyShape = obj(map[string]*shape{
		"type": strS, "required": boolS, "data_type": strS, "compatible_sources": strList,
		"semantic_keywords": strList, "description": strS,
	})
	outputShape = obj(map[string]*shape{
		"type": strS, "property_path": strS, "job_artifact": strS, "data_type": strS, "aliases": strList,
		"semantic_keywords": strList, "description": strS,
	})
	specShape = obj(map[string]*shape{
		"dependencies": mapOf(dependencyShape), "outputs": mapOf(outputShape),
		// Older files repeat the step type here; it is ignored.
		"step_type": strS,
	})
	fieldShape = obj(map[string]*shape{
		"type": strS, "tier": strS, "default": anyS, "description": strS, "allowed": listOf(anyS),
		"pattern": strS, "minimum": numS, "maximum": numS, "items": strS, "rule": strS,
	})
	interfaceShape = obj(map[string]*shape{
		"step_type": strS, "node_type": strS, "registry": registryShape, "compute": computeShape,
		"patterns": patternsShape, "contract": contractShape, "spec": specShape,
		"variants": mapOf(obj(map[string]*shape{
			// The variant-level step_type (RiskTableMapping_Training) is
			// ignored by design: spec.step_type is always the base name.
			"step_type": strS, "spec": specShape, "contract": contractShape, "patterns": patternsShape,
		})),
		"config": obj(map[string]*shape{"extends": strS, "fields": mapOf(fieldShape)}),
	})
)

type shapeWalker struct {
	file    string
	errs    []finding.Finding
	unknown []string
}

func joinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

func (w *shapeWalker) bad(p, rule, msg string, n *yaml.Node) {
	w.errs = append(w.errs, finding.Finding{
		Level: finding.Error, File: w.file, Path: p, Rule: rule,
		Message: fmt.Sprintf("%s (line %d)", msg, n.Line),
	})
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (w *shapeWalker) walk(n *yaml.Node, s *shape, p string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if s == nil || s.kind == kindAny {
		return
	}
	if isNull(n) {
		return // a bare key means "empty" everywhere
	}
	switch s.kind {
	case kindString:
		if n.Kind != yaml.ScalarNode {
			w.bad(p, "type", "expected a string", n)
		}
	case kindBool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			w.bad(p, "type", "expected true or false", n)
		}
	case kindNumber:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			w.bad(p, "type", "expected a number", n)
		}
	case kindList:
		if n.Kind != yaml.SequenceNode {
			w.bad(p, "type", "expected a list", n)
			return
		}
		for i, c := range n.Content {
			w.walk(c, s.elem, fmt.Sprintf("%s[%d]", p, i))
		}
	case kindObject, kindMapOf:
		if n.Kind != yaml.MappingNode {
			w.bad(p, "type", "expected a mapping", n)
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				w.bad(p, "type", "mapping keys must be plain strings", k)
				continue
			}
			kp := joinPath(p, k.Value)
			if seen[k.Value] {
				w.bad(kp, "duplicate_key", "key appears twice", k)
				continue
			}
			seen[k.Value] = true
			if s.kind == kindMapOf {
				if strings.TrimSpace(k.Value) == "" {
					w.bad(kp, "type", "names must not be blank", k)
					continue
				}
				w.walk(v, s.elem, kp)
				continue
			}
			fs, ok := s.fields[k.Value]
			if !ok {
				w.unknown = append(w.unknown, kp)
				continue
			}
			w.walk(v, fs, kp)
		}
	}
}

// mapValue returns the value under key of a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
