package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// treeHash hashes every path, mode and file content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// answers fills config.requirements' template: one value per field name
// it asks for. A field without an answer fails the test, so a new
// requirement shows up here.
var answers = map[string]any{
	"author": "jdoe", "bucket": "my-bucket", "pipeline_version": "1.0.0", "region": "NA",
	"role": "arn:aws:iam::123456789012:role/SageMakerRole", "service_name": "fraud",
	"data_source": "s3://my-bucket/data/tabular.csv", "label_field": "label", "label_name": "label", "id_name": "id",
	"hyperparameters": map[string]any{"label_name": "label", "id_name": "id", "tab_field_list": []string{"f1", "f2"},
		"full_field_list": []string{"id", "f1", "f2", "label"}, "cat_field_list": []string{}, "num_round": 50},
	"expected_tps": 2, "max_latency_in_millisecond": 800, "model_package_group_name": "fraud-lightgbm",
	"clip_columns": []string{"f1", "f2"},
}

// fillTemplate answers every field of config.requirements' template.
func fillTemplate(t *testing.T, base map[string]any, perNode map[string]map[string]any) {
	t.Helper()
	fill := func(fields map[string]any) {
		for k := range fields {
			v, ok := answers[k]
			if !ok {
				t.Fatalf("config.requirements asks for %q, which the test has no answer for", k)
			}
			fields[k] = v
		}
	}
	fill(base)
	for _, fields := range perNode {
		fill(fields)
	}
}

// withImputation puts MissingValueImputation_<job> after each
// TabularPreprocessing_<job> node, the calibration one fed the fitted
// values of the training one.
func withImputation(nodes []string, edges [][2]string) ([]string, [][2]string) {
	var out [][2]string
	for _, job := range []string{"training", "calibration"} {
		nodes = append(nodes, "MissingValueImputation_"+job)
	}
	for _, e := range edges {
		if job, ok := strings.CutPrefix(e[0], "TabularPreprocessing_"); ok {
			out = append(out, [2]string{e[0], "MissingValueImputation_" + job}, [2]string{"MissingValueImputation_" + job, e[1]})
			continue
		}
		out = append(out, e)
	}
	return nodes, append(out, [2]string{"MissingValueImputation_training", "MissingValueImputation_calibration"})
}

// agent is an MCP session of the official go-sdk client with a test
// server, calling tools as a new agent would.
type agent struct {
	t   *testing.T
	ctx context.Context
	cs  *sdk.ClientSession
}

func newAgent(t *testing.T, env *testEnv) *agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cl := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &agent{t: t, ctx: ctx, cs: cs}
}

// call returns the envelope of one tool call, ok or not.
func (a *agent) call(name string, args map[string]any) map[string]any {
	a.t.Helper()
	res, err := a.cs.CallTool(a.ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	return envelopeOf(a.t, res.Content[0].(*sdk.TextContent).Text, res.StructuredContent)
}

// data is the data of a call that must succeed.
func (a *agent) data(name string, args map[string]any) map[string]any {
	a.t.Helper()
	envl := a.call(name, args)
	if envl["ok"] != true {
		a.t.Fatalf("%s failed: %v", name, envl)
	}
	return envl["data"].(map[string]any)
}

// decode re-decodes a JSON value into a typed one.
func (a *agent) decode(v any, into any) {
	a.t.Helper()
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, into); err != nil {
		a.t.Fatal(err)
	}
}

// TestPipelineFromInlineContentOnTheDefaultServer walks a new agent's way
// over MCP (the official go-sdk client) against the default read-only
// server and an empty workspace: recommend a LightGBM DAG, add missing-
// value imputation, check it, ask for its config, fill it, and compile it
// with the config and DAG inline. The definition validates against the
// SageMaker schema and the workspace is byte-for-byte unchanged.
func TestPipelineFromInlineContentOnTheDefaultServer(t *testing.T) {
	env := newTestEnv(t, nil)
	workspace := env.cfg.Workspace.Root
	before := treeHash(t, workspace)

	ag := newAgent(t, env)
	data, decode := ag.data, ag.decode

	rec := data("pipeline_catalog__recommend", map[string]any{"framework": "lightgbm", "features": []string{"calibration", "registration"}})
	var recs []struct {
		DAGID string `json:"dag_id"`
	}
	decode(rec["recommendations"], &recs)
	if len(recs) == 0 || recs[0].DAGID != "lightgbm_complete_e2e" {
		t.Fatalf("recommendations %v, want lightgbm_complete_e2e first", recs)
	}
	var shared struct {
		Nodes []string    `json:"nodes"`
		Edges [][2]string `json:"edges"`
	}
	decode(data("pipeline_catalog__get_dag", map[string]any{"dag_id": recs[0].DAGID}), &shared)
	for _, n := range []string{"LightGBMTraining", "ModelCalibration_calibration", "Registration"} {
		if !slices.Contains(shared.Nodes, n) {
			t.Fatalf("the shared DAG has no %s: %v", n, shared.Nodes)
		}
	}
	nodes, edges := withImputation(shared.Nodes, shared.Edges)
	dag := map[string]any{"nodes": nodes, "edges": edges}
	data("dag__validate_integrity", map[string]any{"dag": dag})

	var template struct {
		Base    map[string]any            `json:"base"`
		PerNode map[string]map[string]any `json:"per_node"`
	}
	decode(data("config__requirements", map[string]any{"dag": dag})["template"], &template)
	fillTemplate(t, template.Base, template.PerNode)
	if _, ok := template.PerNode["MissingValueImputation_calibration"]; !ok {
		t.Fatalf("no requirements for the added imputation node: %v", template.PerNode)
	}
	mergeArgs := map[string]any{"dag": dag, "base": template.Base, "per_node": template.PerNode, "created_at": "2026-01-01T00:00:00Z"}
	// Without output_file config.merge_save only returns the document,
	// which a read-only caller may ask for.
	merged := ag.call("config__merge_save", mergeArgs)
	if merged["ok"] != true {
		t.Fatalf("config.merge_save: %v", merged)
	}
	config := merged["data"].(map[string]any)["document"]

	report := data("compile__with_report", map[string]any{"config": config, "dag": dag})
	var steps []struct {
		Node string `json:"node"`
	}
	decode(report["steps"], &steps)
	var built []string
	for _, s := range steps {
		built = append(built, s.Node)
	}
	for _, n := range nodes {
		if !slices.Contains(built, n) {
			t.Errorf("node %s is not in the compiled steps %v", n, built)
		}
	}
	if after := treeHash(t, workspace); after != before {
		t.Errorf("the workspace changed: %s → %s", before, after)
	}
	def, err := json.Marshal(report["definition"])
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, def)
}
