package handlers

import "github.com/cursus-dev/cursus/registry"

// Prompts lists the workflows served as MCP prompts.
func Prompts() []registry.Prompt { return nil }
