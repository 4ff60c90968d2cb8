package steps

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/finding"
)

const demoYAML = `step_type: Demo
node_type: internal
registry:
  sagemaker_step_type: Processing
  description: demo step
compute:
  kind: sklearn
  framework_version_field: processing_framework_version
contract:
  entry_point: demo.py
  inputs:
    input_data: {path: /opt/ml/processing/input/data, required: true}
  outputs:
    processed_data: {path: /opt/ml/processing/output}
spec:
  dependencies:
    input_data: {type: processing_output, required: true}
  outputs:
    processed_data:
      type: processing_output
      property_path: "properties.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri"
      aliases: [data]
`

func mustParse(t *testing.T, doc string) *Interface {
	t.Helper()
	i, err := Parse("demo.step.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return i
}

func findRule(fs []finding.Finding, rule string) (finding.Finding, bool) {
	for _, f := range fs {
		if f.Rule == rule {
			return f, true
		}
	}
	return finding.Finding{}, false
}

func TestDemoIsClean(t *testing.T) {
	if fs := Validate(mustParse(t, demoYAML)); len(fs) != 0 {
		t.Fatalf("want no findings, got %v", fs)
	}
}

func replace(t *testing.T, doc, old, new string) string {
	t.Helper()
	if !strings.Contains(doc, old) {
		t.Fatalf("fixture does not contain %q", old)
	}
	return strings.Replace(doc, old, new, 1)
}

// Each rule of engine-core-spec §1.4 (and the §1.3 enums) with a document
// that breaks it and one that satisfies it.
func TestValidationRules(t *testing.T) {
	byo := func(extra string) string {
		return replace(t, demoYAML, "compute:\n  kind: sklearn\n  framework_version_field: processing_framework_version\n",
			"compute:\n  kind: byo_container\n"+extra)
	}
	withCompute := func(c string) string {
		return replace(t, demoYAML, "compute:\n  kind: sklearn\n  framework_version_field: processing_framework_version\n", "compute:\n"+c)
	}
	cases := []struct {
		rule, path, level string
		bad, good         string
	}{
		{"required", "step_type", "error", replace(t, demoYAML, "step_type: Demo\n", ""), demoYAML},
		{"step_type_format", "step_type", "error", replace(t, demoYAML, "step_type: Demo", "step_type: demo_step"), demoYAML},
		{"required", "contract", "error",
			replace(t, demoYAML, "contract:\n  entry_point: demo.py\n  inputs:\n    input_data: {path: /opt/ml/processing/input/data, required: true}\n  outputs:\n    processed_data: {path: /opt/ml/processing/output}\n", ""),
			demoYAML},
		{"required", "registry.sagemaker_step_type", "error", replace(t, demoYAML, "  sagemaker_step_type: Processing\n", ""), demoYAML},
		{"enum", "registry.sagemaker_step_type", "error", replace(t, demoYAML, "sagemaker_step_type: Processing", "sagemaker_step_type: Processin"), demoYAML},
		{"enum", "node_type", "error", replace(t, demoYAML, "node_type: internal", "node_type: leaf"), replace(t, demoYAML, "node_type: internal", "node_type: sink")},
		{"enum", "registry.requires", "error", replace(t, demoYAML, "  description: demo step\n", "  description: demo step\n  requires: sais\n"),
			replace(t, demoYAML, "  description: demo step\n", "  description: demo step\n  requires: none\n")},
		{"enum", "compute.kind", "error", withCompute("  kind: spark\n"), demoYAML},
		{"enum", "patterns.step_assembly", "error", demoYAML + "patterns: {step_assembly: magic}\n", demoYAML + "patterns: {step_assembly: step_args}\n"},
		{"enum", "spec.dependencies.input_data.type", "error", replace(t, demoYAML, "input_data: {type: processing_output", "input_data: {type: csv_file"), demoYAML},
		{"enum", "spec.outputs.processed_data.type", "error", replace(t, demoYAML, "      type: processing_output\n", "      type: blob\n"), demoYAML},
		{"contract_input_in_spec", "contract.inputs.extra", "error",
			replace(t, demoYAML, "  outputs:\n    processed_data: {path", "    extra: {path: /opt/ml/processing/input/extra}\n  outputs:\n    processed_data: {path"),
			demoYAML},
		{"contract_output_in_spec", "contract.outputs.other", "error",
			replace(t, demoYAML, "    processed_data: {path: /opt/ml/processing/output}\n", "    processed_data: {path: /opt/ml/processing/output}\n    other: {path: /opt/ml/processing/other}\n"),
			// matching by alias is accepted
			replace(t, demoYAML, "    processed_data: {path: /opt/ml/processing/output}\n", "    processed_data: {path: /opt/ml/processing/output}\n    data: {path: /opt/ml/processing/other}\n")},
		{"input_path_prefix", "contract.inputs.input_data.path", "error",
			replace(t, demoYAML, "/opt/ml/processing/input/data", "/tmp/data"),
			replace(t, demoYAML, "/opt/ml/processing/input/data", "/opt/ml/input/data/train")},
		{"output_path_prefix", "contract.outputs.processed_data.path", "error",
			replace(t, demoYAML, "{path: /opt/ml/processing/output}", "{path: /opt/ml/output/logs}"),
			replace(t, demoYAML, "{path: /opt/ml/processing/output}", "{path: /opt/ml/model}")},
		{"output_object_name", "contract.outputs.processed_data.object", "error",
			replace(t, demoYAML, "{path: /opt/ml/processing/output}", "{path: /opt/ml/processing/output, object: out/model.tar.gz}"),
			replace(t, demoYAML, "{path: /opt/ml/processing/output}", "{path: /opt/ml/processing/output, object: model.tar.gz}")},
		{"entry_point_py", "contract.entry_point", "error",
			replace(t, demoYAML, "entry_point: demo.py", "entry_point: demo.sh"),
			replace(t, demoYAML, "  entry_point: demo.py\n", "")},
		{"compute_requires", "compute.requires", "error", withCompute("  requires: mods_workflow_core\n"), withCompute("  requires: none\n")},
		{"compute_byo_image", "compute.image_uri_field", "error", byo(""), byo("  image_uri_field: image_uri\n")},
		{"compute_byo_forbidden", "compute.sdk_class", "error", byo("  image_uri_field: image_uri\n  sdk_class: PyTorch\n"), byo("  image_uri_field: image_uri\n")},
		{"compute_image_only_byo", "compute.image_uri_field", "error",
			withCompute("  kind: sklearn\n  framework_version_field: fv\n  image_uri_field: image_uri\n"),
			withCompute("  kind: sklearn\n  framework_version_field: fv\n")},
		{"compute_image_only_byo", "compute.container_entrypoint", "error",
			withCompute("  kind: sklearn\n  framework_version_field: fv\n  container_entrypoint: [python3]\n"),
			byo("  image_uri_field: image_uri\n  container_entrypoint: [python3]\n")},
		{"compute_sdk_class", "compute.sdk_class", "error",
			withCompute("  kind: framework\n  framework_version_field: fv\n"),
			withCompute("  kind: framework\n  sdk_class: PyTorch\n  framework_version_field: fv\n")},
		{"compute_sdk_class", "compute.sdk_class", "error",
			withCompute("  kind: sklearn\n  sdk_class: SKLearn\n  framework_version_field: fv\n"),
			withCompute("  kind: sklearn\n  framework_version_field: fv\n")},
		{"compute_framework_version", "compute.framework_version_field", "error", withCompute("  kind: xgboost\n"), withCompute("  kind: xgboost\n  framework_version_field: fv\n")},
		{"compute_py_version", "compute.py_version_field", "error",
			withCompute("  kind: sklearn\n  framework_version_field: fv\n  py_version_field: pv\n"),
			withCompute("  kind: framework\n  sdk_class: PyTorch\n  framework_version_field: fv\n  py_version_field: pv\n")},
		{"compute_framework_name", "compute.framework_name", "error",
			withCompute("  kind: model\n  sdk_class: XGBoostModel\n  framework_version_field: fv\n"),
			withCompute("  kind: model\n  sdk_class: XGBoostModel\n  framework_version_field: fv\n  framework_name: xgboost\n")},
		{"compute_kms_network", "compute.kms_network", "error",
			withCompute("  kind: sklearn\n  framework_version_field: fv\n  kms_network: true\n  requires: mods_workflow_core\n"),
			withCompute("  kind: script\n  kms_network: true\n  requires: mods_workflow_core\n")},
		{"compute_retrieve_framework", "compute.retrieve_framework", "error",
			withCompute("  kind: framework\n  sdk_class: PyTorch\n  framework_version_field: fv\n  retrieve_framework: pytorch\n"),
			withCompute("  kind: estimator\n  sdk_class: PyTorch\n  framework_version_field: fv\n  retrieve_framework: pytorch\n")},
		{"compute_network_mode", "compute.network_mode", "error",
			withCompute("  kind: sklearn\n  framework_version_field: fv\n  network_mode: config\n"),
			withCompute("  kind: estimator\n  sdk_class: PyTorch\n  framework_version_field: fv\n  network_mode: config\n  enable_network_isolation_field: iso\n")},
		{"compute_network_mode", "compute.enable_network_isolation_field", "error",
			withCompute("  kind: estimator\n  sdk_class: PyTorch\n  framework_version_field: fv\n  enable_network_isolation_field: iso\n"),
			withCompute("  kind: estimator\n  sdk_class: PyTorch\n  framework_version_field: fv\n")},
		{"spec_registration", "spec", "error",
			"step_type: Demo\nregistry: {sagemaker_step_type: Processing, description: d}\ncontract: {}\nspec: {}\n",
			"step_type: Demo\nnode_type: singular\nregistry: {sagemaker_step_type: Processing, description: d}\ncontract: {}\nspec: {}\n"},
		{"property_path_name", "spec.outputs.processed_data.property_path", "error",
			replace(t, demoYAML, "Outputs['processed_data']", "Outputs['data']"), demoYAML},
		{"property_path", "spec.outputs.processed_data.property_path", "error",
			replace(t, demoYAML, `"properties.ProcessingOutputConfig`, `"ProcessingOutputConfig`), demoYAML},
		{"alias_unique", "spec.outputs.other.aliases", "error",
			demoYAML + "    other: {type: processing_output, property_path: \"properties.ProcessingOutputConfig.Outputs['other'].S3Output.S3Uri\", aliases: [Data]}\n",
			demoYAML + "    other: {type: processing_output, property_path: \"properties.ProcessingOutputConfig.Outputs['other'].S3Output.S3Uri\", aliases: [more]}\n"},
		{"unknown_key", "contract.colour", "warning", replace(t, demoYAML, "  entry_point: demo.py\n", "  entry_point: demo.py\n  colour: blue\n"), demoYAML},
		{"config_extends", "config.extends", "error", demoYAML + "config: {extends: spark}\n", demoYAML + "config: {extends: processing}\n"},
		{"config_field_type", "config.fields.x.type", "error",
			demoYAML + "config: {fields: {x: {type: text, tier: system}}}\n", demoYAML + "config: {fields: {x: {type: string, tier: system}}}\n"},
		{"config_field_tier", "config.fields.x.tier", "error",
			demoYAML + "config: {fields: {x: {type: string, tier: optional}}}\n", demoYAML + "config: {fields: {x: {type: string, tier: essential}}}\n"},
		{"config_default_type", "config.fields.x.default", "error",
			demoYAML + "config: {fields: {x: {type: integer, tier: system, default: ten}}}\n", demoYAML + "config: {fields: {x: {type: integer, tier: system, default: 10}}}\n"},
		{"config_default_allowed", "config.fields.x.default", "error",
			demoYAML + "config: {fields: {x: {type: string, tier: system, default: TSV, allowed: [CSV, Parquet]}}}\n",
			demoYAML + "config: {fields: {x: {type: string, tier: system, default: CSV, allowed: [CSV, Parquet]}}}\n"},
		{"config_pattern", "config.fields.x.pattern", "error",
			demoYAML + "config: {fields: {x: {type: string, tier: system, pattern: '^(ml'}}}\n",
			demoYAML + "config: {fields: {x: {type: string, tier: system, pattern: '^ml\\.'}}}\n"},
		{"output_path_token", "contract.output_path_token", "error",
			replace(t, demoYAML, "  entry_point: demo.py\n", "  entry_point: demo.py\n  output_path_token: ../elsewhere\n"),
			replace(t, demoYAML, "  entry_point: demo.py\n", "  entry_point: demo.py\n  output_path_token: demo_out\n")},
		{"include_job_type_in_path", "contract.include_job_type_in_path", "warning",
			replace(t, demoYAML, "  entry_point: demo.py\n", "  entry_point: demo.py\n  include_job_type_in_path: true\n") + "patterns: {include_job_type_in_path: false}\n",
			replace(t, demoYAML, "  entry_point: demo.py\n", "  entry_point: demo.py\n  include_job_type_in_path: false\n") + "patterns: {include_job_type_in_path: false}\n"},
		{"config_range", "config.fields.x", "error",
			demoYAML + "config: {fields: {x: {type: integer, tier: system, minimum: 5, maximum: 1}}}\n",
			demoYAML + "config: {fields: {x: {type: integer, tier: system, minimum: 1, maximum: 5}}}\n"},
		{"config_default_range", "config.fields.x.default", "error",
			demoYAML + "config: {fields: {x: {type: integer, tier: system, default: 9, minimum: 1, maximum: 5}}}\n",
			demoYAML + "config: {fields: {x: {type: integer, tier: system, default: 3, minimum: 1, maximum: 5}}}\n"},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.path, func(t *testing.T) {
			bad := Validate(mustParse(t, c.bad))
			f, ok := findRule(bad, c.rule)
			if !ok {
				t.Fatalf("bad document: want rule %s, got %v", c.rule, bad)
			}
			if f.Path != c.path || string(f.Level) != c.level || f.File != "demo.step.yaml" {
				t.Fatalf("bad document: finding %+v, want path %q level %s file demo.step.yaml", f, c.path, c.level)
			}
			good := Validate(mustParse(t, c.good))
			for _, g := range good {
				if g.Rule == c.rule && g.Path == c.path {
					t.Fatalf("good document still fails %s: %v", c.rule, g)
				}
			}
		})
	}
}

func TestParseShapeErrors(t *testing.T) {
	cases := []struct{ doc, path, rule string }{
		{"step_type: [a]\n", "step_type", "type"},
		{"step_type: X\ncontract:\n  inputs: [a, b]\n", "contract.inputs", "type"},
		{"step_type: X\nspec:\n  dependencies:\n    d: {required: yes-please}\n", "spec.dependencies.d.required", "type"},
		{"step_type: X\nstep_type: Y\n", "step_type", "duplicate_key"},
		{"- a\n- b\n", "", "document_mapping"},
		{"step_type: : :\n", "", "yaml_syntax"},
	}
	for _, c := range cases {
		_, err := Parse("bad.step.yaml", []byte(c.doc))
		var le *LoadError
		if !errors.As(err, &le) {
			t.Fatalf("%q: want *LoadError, got %v", c.doc, err)
		}
		f := le.Findings[0]
		if f.Path != c.path || f.Rule != c.rule || f.File != "bad.step.yaml" {
			t.Fatalf("%q: got %+v, want path %q rule %s", c.doc, f, c.path, c.rule)
		}
	}
}

const variantYAML = demoYAML + `variants:
  training:
    step_type: Demo_Training
    spec:
      dependencies:
        input_data:
          compatible_sources: [DummyDataLoading]
          semantic_keywords: [training]
        extra_input: {type: hyperparameters, required: false}
      outputs:
        processed_data:
          aliases: [train_data]
    contract:
      inputs:
        extra_input: {path: /opt/ml/processing/input/extra, required: false}
  calibration:
    spec:
      dependencies:
        input_data: {required: false}
`

func TestVariantDeepMerge(t *testing.T) {
	base := mustParse(t, variantYAML)
	base.Spec.Dependencies.Keys() // touch
	d0, _ := base.Spec.Dependencies.Get("input_data")
	tr, warns, err := base.WithJobType("training")
	if err != nil || len(warns) != 0 {
		t.Fatalf("WithJobType: %v %v", err, warns)
	}
	if tr.JobType != "training" || tr.StepType != "Demo" {
		t.Fatalf("copy: job %q step %q (variant step_type must be ignored)", tr.JobType, tr.StepType)
	}
	d, _ := tr.Spec.Dependencies.Get("input_data")
	// maps merge key by key: type and required survive from the base
	if d.Type != TypeProcessingOutput || !d.IsRequired() {
		t.Fatalf("merged dependency lost base keys: %+v", d)
	}
	if strings.Join(d.CompatibleSources, ",") != "DummyDataLoading" || strings.Join(d.SemanticKeywords, ",") != "training" {
		t.Fatalf("variant lists not applied: %+v", d)
	}
	if got := strings.Join(tr.Spec.Dependencies.Keys(), ","); got != "input_data,extra_input" {
		t.Fatalf("dependency order %q", got)
	}
	o, _ := tr.Spec.Outputs.Get("processed_data")
	// lists replace, they do not append
	if strings.Join(o.Aliases, ",") != "train_data" || o.PropertyPath == "" {
		t.Fatalf("output merge: %+v", o)
	}
	if _, ok := tr.Contract.Inputs.Get("extra_input"); !ok {
		t.Fatal("variant contract input missing")
	}
	// the base is untouched
	if d1, _ := base.Spec.Dependencies.Get("input_data"); len(d1.CompatibleSources) != len(d0.CompatibleSources) || base.Spec.Dependencies.Len() != 1 {
		t.Fatalf("base modified: %+v", base.Spec.Dependencies.Keys())
	}
	cal, _, _ := base.WithJobType("calibration")
	if d, _ := cal.Spec.Dependencies.Get("input_data"); d.IsRequired() || d.Type != TypeProcessingOutput {
		t.Fatalf("calibration merge: %+v", d)
	}
	if _, warns, _ := base.WithJobType("delta"); len(warns) != 1 || !strings.Contains(warns[0], "no variant") {
		t.Fatalf("unknown job type warnings: %v", warns)
	}
	if tc, warns, _ := base.WithJobType("Training"); len(warns) != 1 || tc.Spec.Dependencies.Len() != 2 {
		t.Fatalf("case-folded match: %v", warns)
	}
	if fs := Validate(base); finding.AnyBlocking(fs) {
		t.Fatalf("variant doc should validate: %v", fs)
	}
}

func TestVariantFindingsArePrefixed(t *testing.T) {
	doc := variantYAML + "  testing:\n    contract:\n      inputs:\n        ghost: {path: /opt/ml/processing/input/ghost}\n"
	fs := Validate(mustParse(t, doc))
	f, ok := findRule(fs, "contract_input_in_spec")
	if !ok || f.Path != "variants.testing: contract.inputs.ghost" {
		t.Fatalf("got %v", fs)
	}
}

func TestCodeBuiltInterfaceMerges(t *testing.T) {
	parsed := mustParse(t, demoYAML)
	built := &Interface{StepType: parsed.StepType, Registry: parsed.Registry, Contract: parsed.Contract, Spec: parsed.Spec}
	c, _, err := built.WithJobType("")
	if err != nil || c.Spec.Outputs.Len() != 1 {
		t.Fatalf("clone of code-built interface: %v %+v", err, c)
	}
}

func TestParseRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("step_type: X\nvariants:\n  a0: &a0 {spec: {}}\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1)
	}
	_, err := Parse("bomb.step.yaml", []byte(b.String()))
	var le *LoadError
	if !errors.As(err, &le) || le.Findings[0].Rule != "yaml_aliases" {
		t.Fatalf("want yaml_aliases, got %v", err)
	}
	// A small, honest use of anchors still loads.
	ok := demoYAML + "variants:\n  training: &v {spec: {dependencies: {input_data: {required: false}}}}\n  testing: *v\n"
	if _, err := Parse("ok.step.yaml", []byte(ok)); err != nil {
		t.Fatalf("anchors: %v", err)
	}
	if _, err := Parse("big.step.yaml", make([]byte, MaxFileSize+1)); !errors.As(err, &le) || le.Findings[0].Rule != "file_size" {
		t.Fatalf("size: %v", err)
	}
}
