package registry

// OpenAITool is the OpenAI / Claude function-calling shape.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function part of OpenAITool.
type OpenAIFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	// Strict marks parameters in OpenAI's strict mode (StrictSchema).
	Strict   bool            `json:"strict,omitempty"`
	Metadata *OpenAIMetadata `json:"metadata,omitempty"`
}

// OpenAIMetadata carries the phase tags.
type OpenAIMetadata struct {
	Tags []string `json:"tags"`
}

// MCPTool is the MCP tools/list shape.
type MCPTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	Annotations  Annotations    `json:"annotations"`
}

// ExportOpenAI converts tools to the OpenAI function shape; with strict,
// their parameters are in strict mode (StrictSchema), and arguments
// written against them go through FromVariantArgs before a call.
func ExportOpenAI(tools []*ToolDef, strict bool) []OpenAITool {
	out := make([]OpenAITool, 0, len(tools))
	for _, t := range tools {
		f := OpenAIFunction{Name: t.WireName(), Description: t.RenderDescription(), Parameters: t.Schema}
		if strict {
			f.Parameters, f.Strict = StrictSchema(t.Schema), true
		}
		if len(t.Tags) > 0 {
			f.Metadata = &OpenAIMetadata{Tags: t.Tags}
		}
		out = append(out, OpenAITool{Type: "function", Function: f})
	}
	return out
}

// ExportMCP converts tools to the MCP shape.
func ExportMCP(tools []*ToolDef) []MCPTool {
	out := make([]MCPTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, MCPTool{
			Name:         t.WireName(),
			Description:  t.RenderDescription(),
			InputSchema:  t.Schema,
			OutputSchema: t.OutputSchema,
			Annotations:  t.Annotations(),
		})
	}
	return out
}

// GeminiFunction is a Gemini function declaration.
type GeminiFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

// ExportGemini converts tools to Gemini function declarations
// (GeminiSchema parameters; arguments written against them go through
// FromVariantArgs before a call).
func ExportGemini(tools []*ToolDef) []GeminiFunction {
	out := make([]GeminiFunction, 0, len(tools))
	for _, t := range tools {
		out = append(out, GeminiFunction{Name: t.WireName(), Description: t.RenderDescription(), Parameters: GeminiSchema(t.Schema)})
	}
	return out
}
