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
		f := OpenAIFunction{Name: t.WireName(), Description: t.RenderDescription(), Parameters: t.Schema()}
		if strict {
			f.Parameters, f.Strict = StrictSchema(t.Schema()), true
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
			InputSchema:  t.Schema(),
			OutputSchema: t.OutputSchema(),
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
		out = append(out, GeminiFunction{Name: t.WireName(), Description: t.RenderDescription(), Parameters: GeminiSchema(t.Schema())})
	}
	return out
}

// The lean exports are what GET /tools lists by default, as the default
// MCP tools/list does (listing.go): the lead clause and when-cue of each
// description, the input schema with only the keywords that shape a
// valid call, and no output schema. A call is still validated against
// the whole schema; tools.describe_tool serves the rest.

// ExportOpenAILean is ExportOpenAI of the lean listing.
func ExportOpenAILean(tools []*ToolDef, strict bool) []OpenAITool {
	out := ExportOpenAI(tools, false)
	for i, t := range tools {
		f := &out[i].Function
		f.Description, f.Parameters = t.Summary(), LeanSchema(t.Schema())
		if strict {
			f.Parameters, f.Strict = StrictSchema(f.Parameters), true
		}
	}
	return out
}

// MCPLeanTool is the lean MCP tools/list shape.
type MCPLeanTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations LeanHints      `json:"annotations"`
}

// ExportMCPLean is ExportMCP of the lean listing.
func ExportMCPLean(tools []*ToolDef) []MCPLeanTool {
	out := make([]MCPLeanTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, MCPLeanTool{Name: t.WireName(), Description: t.Summary(), InputSchema: LeanSchema(t.Schema()), Annotations: t.LeanAnnotations()})
	}
	return out
}

// ExportGeminiLean is ExportGemini of the lean listing.
func ExportGeminiLean(tools []*ToolDef) []GeminiFunction {
	out := make([]GeminiFunction, 0, len(tools))
	for _, t := range tools {
		out = append(out, GeminiFunction{Name: t.WireName(), Description: t.Summary(), Parameters: GeminiSchema(LeanSchema(t.Schema()))})
	}
	return out
}
