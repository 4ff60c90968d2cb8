package registry

import "context"

// Prompt is a reusable workflow offered to MCP clients as a prompt.
type Prompt struct {
	Name        string
	Description string
	Arguments   []PromptArgument
	// Render returns the prompt text for the given arguments, for a
	// caller that may call the tools open reports true for (dotted
	// names): the text names no other tool.
	Render func(args map[string]string, open func(tool string) bool) string
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
	// Values lists the values a client may complete the argument from,
	// in order (nil: no completion).
	Values func(ctx context.Context) []string
}
