package handlers

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/registry"
)

func cfgDAG(nodes []string) *dag.DAG { return dag.New(nodes, nil) }

func TestAuthorConfigConstraints(t *testing.T) {
	reg, _ := configEnv(t)
	data := cfgOK(t, call(t, reg, "author.config_constraints", `{"step_name":"TabularPreprocessing"}`))
	req := data["required_no_default"].([]any)
	var names []string
	for _, r := range req {
		names = append(names, r.(string))
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "author") || !strings.Contains(got, "job_type") {
		t.Errorf("required = %s", got)
	}
	found := false
	for _, c := range data["constrained_fields"].([]any) {
		cf := c.(map[string]any)
		if cf["name"] == "output_format" {
			found = true
			if len(cf["allowed_values"].([]any)) != 3 || cf["case_sensitive"] != true {
				t.Errorf("output_format = %v", cf)
			}
		}
	}
	if !found {
		t.Error("output_format not listed as constrained")
	}
	mustOK(t, call(t, reg, "author.config_constraints", `{"step_name":"BatchTransformStepConfig"}`))
	mustFail(t, call(t, reg, "author.config_constraints", `{"step_name":"NoSuchStep"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "author.config_constraints", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.config_constraints", `{"step_name":["x"]}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.config_constraints", `{"step_name":"x","more":1}`), registry.CodeInvalidInput)
}

func TestAuthorPreflightConfig(t *testing.T) {
	reg, _ := configEnv(t)
	res := call(t, reg, "author.preflight_config", `{"step_name":"XGBoostTraining","values":{}}`)
	mustFail(t, res, registry.CodeConfigInvalid)
	d := cfgDetails(t, res)
	if d["valid"] != false || d["config_class"] != "XGBoostTrainingConfig" {
		t.Errorf("details = %v", d)
	}
	errs := d["errors"].([]any)
	missing := 0
	for _, e := range errs {
		em := e.(map[string]any)
		if em["type"] == "missing" && em["kind"] == "missing" && em["field"] != "" {
			missing++
		}
	}
	if missing != len(errs) || missing < 6 { // six base essentials (hyperparameters are optional, as in Cursus)
		t.Errorf("errors = %v", errs)
	}

	base := `"author":"jdoe","bucket":"my-bucket","role":"arn:aws:iam::123456789012:role/R","region":"EU","service_name":"svc","pipeline_version":"1.0"`
	data := cfgOK(t, call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel","values":{`+base+`}}`))
	if data["valid"] != true || data["derived"].(map[string]any)["aws_region"] != "eu-west-1" {
		t.Errorf("data = %v", data)
	}
	// A node name supplies the job type.
	data = cfgOK(t, call(t, reg, "author.preflight_config", `{"step_name":"TabularPreprocessing_calibration","values":{`+base+`,"label_field":"y"}}`))
	if data["config_key"] != "TabularPreprocessing_calibration" {
		t.Errorf("key = %v", data["config_key"])
	}
	mars := strings.Replace(base, `"region":"EU"`, `"region":"Mars"`, 1)
	res = call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel","values":{`+mars+`}}`)
	mustFail(t, res, registry.CodeConfigInvalid)
	msg := cfgDetails(t, res)["errors"].([]any)[0].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "NA, EU, FE") || !strings.Contains(msg, "us-east-1") {
		t.Errorf("region message = %s", msg)
	}
	mustFail(t, call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel","values":[1]}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.preflight_config", `{"step_name":"Nope","values":{}}`), registry.CodeNotFound)
}
