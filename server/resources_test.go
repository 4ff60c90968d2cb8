package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// readText reads uri with cs and returns its one text content and MIME type.
func readText(t *testing.T, ctx context.Context, cs *sdk.ClientSession, uri string) (string, string) {
	t.Helper()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s: contents %+v", uri, res.Contents)
	}
	return res.Contents[0].Text, res.Contents[0].MIMEType
}

// restData is the data of a successful POST /call/<tool>.
func restData(t *testing.T, base, tool, args string) map[string]any {
	t.Helper()
	status, env := postCall(t, base, tool, args)
	if status != http.StatusOK || env["ok"] != true {
		t.Fatalf("POST /call/%s %s = %d %v", tool, args, status, env)
	}
	return env["data"].(map[string]any)
}

func decodeJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, text)
	}
	return v
}

// TestResourcesServeWhatTheirToolsReturn lists and reads every kind of
// resource with the official go-sdk client over real HTTP and compares
// each document with what its tool returns over REST from the same server.
func TestResourcesServeWhatTheirToolsReturn(t *testing.T) {
	ts, _, d := surfaceEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, _ := sdkSession(t, ctx, ts.URL+"/mcp", nil)

	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var templateURIs []string
	for _, tpl := range templates.ResourceTemplates {
		templateURIs = append(templateURIs, tpl.URITemplate)
	}
	slices.Sort(templateURIs)
	if want := []string{"cursus://dags/{dag_id}", "cursus://steps/{step_type}", "cursus://steps/{step_type}/code", "cursus://workflows/{name}"}; !slices.Equal(templateURIs, want) {
		t.Fatalf("resources/templates/list = %v, want %v", templateURIs, want)
	}

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, r := range list.Resources {
		listed[r.URI] = r.MIMEType
	}
	for _, uri := range []string{"cursus://steps", "cursus://schemas/step_yaml", "cursus://schemas/config_json",
		"cursus://steps/XGBoostTraining", "cursus://steps/XGBoostTraining/code", "cursus://dags/xgboost_complete_e2e", "cursus://workflows/cursus-author-step"} {
		if _, ok := listed[uri]; !ok {
			t.Errorf("resources/list lacks %s", uri)
		}
	}

	// The step type listing names every step type resource, and each of
	// them reads as steps.source returns it.
	text, mime := readText(t, ctx, cs, "cursus://steps")
	var steps struct {
		StepTypes []struct {
			StepType string `json:"step_type"`
			URI      string `json:"uri"`
			Source   string `json:"source"`
		} `json:"step_types"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal([]byte(text), &steps); err != nil || mime != "application/json" {
		t.Fatalf("cursus://steps (%s): %v: %.200s", mime, err, text)
	}
	if steps.Count < 20 || steps.Count != len(steps.StepTypes) {
		t.Fatalf("cursus://steps lists %d step types (count %d)", len(steps.StepTypes), steps.Count)
	}
	for _, s := range steps.StepTypes {
		if _, ok := listed[s.URI]; !ok {
			t.Errorf("resources/list lacks %s, which cursus://steps names", s.URI)
		}
	}
	for _, s := range steps.StepTypes[:3] {
		yaml, mime := readText(t, ctx, cs, s.URI)
		want := restData(t, ts.URL, "steps.source", fmt.Sprintf(`{"step_name": %q}`, s.StepType))
		if yaml != want["yaml"] || mime != "application/yaml" || s.Source != want["source"] {
			t.Errorf("%s (%s, source %s) differs from steps.source (source %v)", s.URI, mime, s.Source, want["source"])
		}
	}

	text, mime = readText(t, ctx, cs, "cursus://steps/TabularPreprocessing/code")
	if got, want := decodeJSON(t, text), any(restData(t, ts.URL, "steps.code", `{"step_type": "TabularPreprocessing"}`)); !reflect.DeepEqual(got, want) || mime != "application/json" {
		t.Errorf("cursus://steps/TabularPreprocessing/code (%s) differs from steps.code", mime)
	}
	if _, ok := listed["cursus://steps/BatchTransform/code"]; ok {
		t.Error("resources/list names code for BatchTransform, which has none")
	}

	text, mime = readText(t, ctx, cs, "cursus://dags/xgboost_complete_e2e")
	if got, want := decodeJSON(t, text), any(restData(t, ts.URL, "pipeline_catalog.get_dag", `{"dag_id": "xgboost_complete_e2e"}`)); !reflect.DeepEqual(got, want) || mime != "application/json" {
		t.Errorf("cursus://dags/xgboost_complete_e2e (%s) differs from pipeline_catalog.get_dag", mime)
	}

	for _, format := range []string{"step_yaml", "config_json"} {
		text, mime := readText(t, ctx, cs, "cursus://schemas/"+format)
		want := restData(t, ts.URL, "steps.format", fmt.Sprintf(`{"format": %q}`, format))["schema"]
		if got := decodeJSON(t, text); !reflect.DeepEqual(got, want) || mime != "application/schema+json" {
			t.Errorf("cursus://schemas/%s (%s) differs from steps.format", format, mime)
		}
	}

	for _, p := range d.Prompts {
		text, mime := readText(t, ctx, cs, "cursus://workflows/"+p.Name)
		prompt, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name})
		if err != nil {
			t.Fatal(err)
		}
		if want := prompt.Messages[0].Content.(*sdk.TextContent).Text; text != want || mime != "text/markdown" {
			t.Errorf("cursus://workflows/%s (%s) differs from prompts/get:\n%s\n---\n%s", p.Name, mime, text, want)
		}
	}
}

// resourceNotFoundCode is the JSON-RPC code of "resource not found" on
// the protocol cs negotiated: -32002, and -32602 (invalid params) from
// 2026-07-28 on.
func resourceNotFoundCode(cs *sdk.ClientSession) int64 {
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		return -32602
	}
	return -32002
}

// TestUnknownResourceIsResourceNotFound: a URI that names no resource
// gets the JSON-RPC resource-not-found error with the reason, whether
// no resource has its shape or its template has no such value; on the
// newest protocol (go-sdk) and on 2025-06-18.
func TestUnknownResourceIsResourceNotFound(t *testing.T) {
	ts, _, _ := surfaceEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _ := sdkSession(t, ctx, ts.URL+"/mcp", nil)
	if resourceNotFoundCode(cs) != -32602 {
		t.Fatalf("go-sdk negotiated %s; this test expects the newest protocol", cs.InitializeResult().ProtocolVersion)
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"cursus://steps/NoSuchStep"}}`))
	for k, v := range mcpHeaders("", "") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var old struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&old); err != nil || old.Error.Code != -32002 || !strings.Contains(old.Error.Message, `no step_type "NoSuchStep"`) {
		t.Errorf("2025-06-18 resources/read of an unknown step type: %d %+v %v", resp.StatusCode, old, err)
	}
	for uri, reason := range map[string]string{
		"cursus://steps/NoSuchStep":            `no step_type "NoSuchStep"`,
		"cursus://steps/XGBoostTraining/extra": "no cursus resource has this URI",
		"cursus://dags/nope":                   `no dag_id "nope"`,
		"cursus://workflows/nope":              `no name "nope"`,
		"cursus://schemas/nope":                "no cursus resource has this URI",
		"file:///etc/passwd":                   "no cursus resource has this URI",
	} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != resourceNotFoundCode(cs) || !strings.Contains(wire.Message, uri) || !strings.Contains(wire.Message, reason) {
			t.Errorf("resources/read %s: %v, want resource not found saying %q", uri, err, reason)
		}
	}
}

// TestResourcesFollowTheCaller: a resource whose tool the deployment
// denies is neither listed, nor read, nor completed; a workflow guide
// names only the tools its reader may call.
func TestResourcesFollowTheCaller(t *testing.T) {
	ts, _, _ := surfaceEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1",
		"CURSUS_GATES_DENY": "steps.source", "CURSUS_LIMITS_RATE_PER_MINUTE": "0",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reader, _ := sdkSession(t, ctx, ts.URL+"/mcp", &http.Client{Transport: bearerTransport{readToken}})
	writer, _ := sdkSession(t, ctx, ts.URL+"/mcp", &http.Client{Transport: bearerTransport{writeToken}})

	list, err := reader.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	code := 0
	for _, r := range list.Resources {
		switch {
		case strings.HasPrefix(r.URI, "cursus://steps/") && strings.HasSuffix(r.URI, "/code"):
			code++ // steps.code, which is open
		case strings.HasPrefix(r.URI, "cursus://steps"):
			t.Errorf("resources/list shows %s although steps.source is denied", r.URI)
		}
	}
	if code == 0 {
		t.Error("resources/list hides the built-in code, whose tool steps.code is open")
	}
	if len(list.Resources) == 0 {
		t.Fatal("resources/list is empty; the DAGs, schemas and workflows should stay")
	}
	templates, err := reader.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range templates.ResourceTemplates {
		if strings.HasPrefix(tpl.URITemplate, "cursus://steps") && tpl.URITemplate != "cursus://steps/{step_type}/code" {
			t.Errorf("resources/templates/list shows %s although steps.source is denied", tpl.URITemplate)
		}
	}
	_, err = reader.ReadResource(ctx, &sdk.ReadResourceParams{URI: "cursus://steps/XGBoostTraining"})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != resourceNotFoundCode(reader) || !strings.Contains(wire.Message, "steps.source, which this server does not open to you") {
		t.Errorf("reading a denied tool's resource: %v", err)
	}
	done, err := reader.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "cursus://steps/{step_type}"},
		Argument: sdk.CompleteParamsArgument{Name: "step_type", Value: "XGB"}})
	if err != nil || len(done.Completion.Values) != 0 {
		t.Errorf("completing a denied template: %v %v", done, err)
	}

	// project.init writes only with target_dir: without it, it returns the
	// files, so both guides list it for the Scaffold stage.
	readerText, _ := readText(t, ctx, reader, "cursus://workflows/cursus-init-project")
	writerText, _ := readText(t, ctx, writer, "cursus://workflows/cursus-init-project")
	if !strings.Contains(readerText, "Tools: project.init") || !strings.Contains(writerText, "Tools: project.init") {
		t.Errorf("workflow guide does not name project.init:\nreader:\n%s\nwriter:\n%s", readerText, writerText)
	}
}

// TestCompletionCompletesPromptArgumentsAndTemplateVariables asks
// completion/complete with the go-sdk client for prompt arguments and
// every template variable, prefix-matched without regard to case.
func TestCompletionCompletesPromptArgumentsAndTemplateVariables(t *testing.T) {
	ts, _, _ := surfaceEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _ := sdkSession(t, ctx, ts.URL+"/mcp", nil)
	complete := func(ref sdk.CompleteReference, arg, value string) sdk.CompletionResultDetails {
		t.Helper()
		res, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &ref, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("completion/complete %+v %s=%q: %v", ref, arg, value, err)
		}
		return res.Completion
	}
	prompt := func(name string) sdk.CompleteReference { return sdk.CompleteReference{Type: "ref/prompt", Name: name} }
	resource := func(uri string) sdk.CompleteReference { return sdk.CompleteReference{Type: "ref/resource", URI: uri} }

	for _, c := range []struct {
		ref        sdk.CompleteReference
		arg, value string
		want       string // a value that must be offered
	}{
		{prompt("cursus-author-step"), "producer_node", "xgb", "XGBoostTraining"},
		{prompt("cursus-author-step"), "consumer_node", "Tabular", "TabularPreprocessing"},
		{prompt("cursus-init-project"), "framework", "py", "pytorch"},
		{prompt("cursus-new-project"), "dag_source", "m", "manual"},
		{prompt("cursus-configure-pipeline"), "region", "E", "EU"},
		{resource("cursus://steps/{step_type}"), "step_type", "XGBoost", "XGBoostTraining"},
		{resource("cursus://dags/{dag_id}"), "dag_id", "xgboost_", "xgboost_complete_e2e"},
		{resource("cursus://workflows/{name}"), "name", "cursus-a", "cursus-author-step"},
	} {
		got := complete(c.ref, c.arg, c.value)
		if !slices.Contains(got.Values, c.want) || got.Total != len(got.Values) || got.HasMore {
			t.Errorf("%+v %s=%q: %+v, want %s among all the values", c.ref, c.arg, c.value, got, c.want)
		}
		for _, v := range got.Values {
			if !strings.HasPrefix(strings.ToLower(v), strings.ToLower(c.value)) {
				t.Errorf("%+v %s=%q offers %q", c.ref, c.arg, c.value, v)
			}
		}
	}
	all := complete(resource("cursus://steps/{step_type}"), "step_type", "")
	if all.Total < 20 || len(all.Values) != min(all.Total, maxCompletionValues) || all.HasMore != (all.Total > maxCompletionValues) {
		t.Errorf("every step type: %d values, total %d, hasMore %v", len(all.Values), all.Total, all.HasMore)
	}
	for _, none := range []struct {
		ref        sdk.CompleteReference
		arg, value string
	}{
		{prompt("cursus-author-step"), "intent", ""},           // free text
		{prompt("cursus-author-step"), "dag_file", ""},         // a path
		{prompt("no-such-prompt"), "producer_node", ""},        // unknown prompt
		{resource("cursus://steps/{step_type}"), "dag_id", ""}, // not this template's variable
		{resource("cursus://steps/{step_type}"), "step_type", "zzz"},
	} {
		if got := complete(none.ref, none.arg, none.value); len(got.Values) != 0 || got.Total != 0 {
			t.Errorf("%+v %s=%q: %+v, want no values", none.ref, none.arg, none.value, got)
		}
	}
}

// TestCompletionIsCapped: at most maxCompletionValues values, with the
// total and hasMore telling the rest.
func TestCompletionIsCapped(t *testing.T) {
	var values []string
	for i := range 150 {
		values = append(values, fmt.Sprintf("Step%03d", i))
	}
	c := completion(values, "step")
	if len(c.Values) != maxCompletionValues || c.Total != 150 || !c.HasMore || c.Values[0] != "Step000" {
		t.Fatalf("150 matches: %d values, total %d, hasMore %v", len(c.Values), c.Total, c.HasMore)
	}
	c = completion(values, "Step14")
	if len(c.Values) != 10 || c.Total != 10 || c.HasMore {
		t.Fatalf("10 matches: %+v", c)
	}
}

// TestResourcesOverStdio: the stdio server serves the same resources and
// completions, under the deployment's gates (a denied tool's resources
// are neither listed nor read).
func TestResourcesOverStdio(t *testing.T) {
	_, _, deps := surfaceEnv(t, map[string]string{"CURSUS_GATES_DENY": "pipeline_catalog.get_dag"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := stdioSession(t, ctx, deps)
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, r := range list.Resources {
		if strings.HasPrefix(r.URI, "cursus://dags/") {
			t.Errorf("stdio resources/list shows %s although pipeline_catalog.get_dag is denied", r.URI)
		}
		if strings.HasPrefix(r.URI, "cursus://steps/") {
			steps++
		}
	}
	if steps < 20 {
		t.Errorf("stdio resources/list shows %d step types", steps)
	}
	if text, _ := readText(t, ctx, cs, "cursus://steps/XGBoostTraining"); !strings.Contains(text, "XGBoostTraining") {
		t.Errorf("cursus://steps/XGBoostTraining over stdio:\n%.300s", text)
	}
	_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "cursus://dags/xgboost_complete_e2e"})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != resourceNotFoundCode(cs) || !strings.Contains(wire.Message, "pipeline_catalog.get_dag") {
		t.Errorf("reading a denied tool's resource over stdio: %v", err)
	}
	done, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "cursus-author-step"},
		Argument: sdk.CompleteParamsArgument{Name: "producer_node", Value: "XGBoostT"}})
	if err != nil || !slices.Contains(done.Completion.Values, "XGBoostTraining") {
		t.Errorf("completing producer_node over stdio: %v %v", done, err)
	}
}
