package registry

// Prompt is a reusable workflow offered to MCP clients as a prompt.
type Prompt struct {
	Name        string
	Description string
	Arguments   []PromptArgument
	// Render returns the prompt text for the given arguments.
	Render func(args map[string]string) string
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}
