package server

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestMCPResultsMatchTheirOutputSchema: with the full tool list every
// listed tool has an outputSchema, and the structuredContent of a call (a
// success and a failure) validates against the schema the client was
// given. (The lean default advertises none: TestLeanToolListFitsBudget.)
func TestMCPResultsMatchTheirOutputSchema(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_MCP_TOOL_LIST": "full"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, list := sdkSession(t, ctx, env.ts.URL+"/mcp", nil)
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range list.Tools {
		if tool.OutputSchema == nil {
			t.Errorf("%s has no outputSchema", tool.Name)
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mcp:///"+tool.Name, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = c.Compile("mcp:///" + tool.Name); err != nil {
			t.Fatalf("%s: outputSchema does not compile: %v", tool.Name, err)
		}
	}
	for _, call := range []struct {
		tool    string
		args    map[string]any
		isError bool
	}{
		{"tools__help", map[string]any{"namespace": "catalog"}, false},
		{"tools__help", map[string]any{"namespace": "nope"}, true},
		{"tools__describe_tool", map[string]any{"name": "tools.help"}, false},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != call.isError {
			t.Fatalf("%s %v: isError = %v", call.tool, call.args, res.IsError)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err := schemas[call.tool].Validate(doc); err != nil {
			t.Errorf("%s %v: structuredContent does not match the outputSchema: %v", call.tool, call.args, err)
		}
	}
}
