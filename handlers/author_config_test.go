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
	data := answer[authorConfigConstraintsOut](t, call(t, reg, "author.config_constraints", `{"step_name":"TabularPreprocessing"}`))
	if got := strings.Join(data.RequiredNoDefault, ","); !strings.Contains(got, "author") || !strings.Contains(got, "job_type") {
		t.Errorf("required = %s", got)
	}
	found := false
	for _, cf := range data.ConstrainedFields {
		if cf.Name == "output_format" {
			found = true
			if len(cf.AllowedValues) != 3 || !cf.CaseSensitive {
				t.Errorf("output_format = %+v", cf)
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
	d := failure[preflightConfigDetails](t, res, registry.CodeConfigInvalid)
	if d.Valid || d.ConfigClass != "XGBoostTrainingConfig" {
		t.Errorf("details = %+v", d)
	}
	missing := 0
	for _, e := range d.Errors {
		if e.Type == "missing" && e.Kind == "missing" && e.Field != "" {
			missing++
		}
	}
	if missing != len(d.Errors) || missing < 6 { // six base essentials (hyperparameters are optional, as in Cursus)
		t.Errorf("errors = %+v", d.Errors)
	}

	base := `"author":"jdoe","bucket":"my-bucket","role":"arn:aws:iam::123456789012:role/R","region":"EU","service_name":"svc","pipeline_version":"1.0"`
	pre := answer[authorPreflightConfigOut](t, call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel","values":{`+base+`}}`))
	if !pre.Valid || pre.Derived["aws_region"] != "eu-west-1" {
		t.Errorf("data = %+v", pre)
	}
	// A node name supplies the job type.
	pre = answer[authorPreflightConfigOut](t, call(t, reg, "author.preflight_config", `{"step_name":"TabularPreprocessing_calibration","values":{`+base+`,"label_field":"y"}}`))
	if pre.ConfigKey != "TabularPreprocessing_calibration" {
		t.Errorf("key = %v", pre.ConfigKey)
	}
	mars := strings.Replace(base, `"region":"EU"`, `"region":"Mars"`, 1)
	res = call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel","values":{`+mars+`}}`)
	if errs := failure[preflightConfigDetails](t, res, registry.CodeConfigInvalid).Errors; len(errs) == 0 ||
		!strings.Contains(errs[0].Message, "NA, EU, FE") || !strings.Contains(errs[0].Message, "us-east-1") {
		t.Errorf("region errors = %+v", errs)
	}
	mustFail(t, call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.preflight_config", `{"step_name":"XGBoostModel","values":[1]}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "author.preflight_config", `{"step_name":"Nope","values":{}}`), registry.CodeNotFound)
}

// preflightConfigDetails is author.preflight_config's failure details.
type preflightConfigDetails struct {
	StepName    string                 `json:"step_name"`
	ConfigClass string                 `json:"config_class"`
	Valid       bool                   `json:"valid"`
	Errors      []preflightConfigError `json:"errors"`
}
