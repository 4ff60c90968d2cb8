package handlers

import "github.com/cursus-dev/cursus/engine/steps"

// closureGates are the tools a new step type must pass, in order, before
// it counts as closed (author.rules {"topic": "closure"} lists them).
var closureGates = []string{"validate.step_interface", "author.check_script", "author.preflight_step", "compile.validate"}

// authorRules is one topic's rules (steps.AuthorRules) with the tools
// they name: the engine's rules name no tool.
func authorRules(topic string) map[string]any {
	rules := steps.AuthorRules(topic)
	if topic == "closure" && rules != nil {
		rules["gates"] = closureGates
	}
	return rules
}
