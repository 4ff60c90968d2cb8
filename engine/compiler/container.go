package compiler

import (
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/steps"
)

// Container is what a step's container is started with, as the pipeline
// definition says: validate.run_scripts starts scripts with the same
// values, so a local run sees what SageMaker will.
type Container struct {
	// Environment holds every contract variable that has a value.
	Environment map[string]string
	// Arguments are the contract's job arguments as flag, value pairs in
	// contract order.
	Arguments []string
	// Unset names the required variables no config value supplies.
	Unset []string
}

// ContainerFor fills iface's contract from cfg. A variable takes the config
// field named like it in lower case (or its other Cursus spelling, see
// config.FieldAlias), else the hyperparameter of that name,
// else (optional variables) the contract default. A job argument takes its
// source field; unset fields are left out.
func ContainerFor(iface *steps.Interface, cfg *config.Config) Container {
	c := Container{Environment: map[string]string{}}
	lookup := func(name string) (string, bool) {
		if v, ok := cfg.Get(strings.ToLower(name)); ok && v != nil {
			return formatEnv(v)
		}
		// A config passed through unchecked may carry the field under its
		// other Cursus spelling (LABEL_FIELD from label_name).
		if alias, ok := config.FieldAlias(strings.ToLower(name)); ok {
			if v, ok := cfg.Get(alias); ok && v != nil {
				return formatEnv(v)
			}
		}
		if hp := getMap(cfg, "hyperparameters"); hp != nil {
			if v, ok := hp[strings.ToLower(name)]; ok && v != nil {
				return formatEnv(v)
			}
		}
		return "", false
	}
	for _, name := range iface.Contract.EnvVars.Required {
		if v, ok := lookup(name); ok {
			c.Environment[name] = v
			continue
		}
		c.Unset = append(c.Unset, name)
	}
	for _, name := range iface.Contract.EnvVars.Optional.Keys() {
		if v, ok := lookup(name); ok {
			c.Environment[name] = v
			continue
		}
		c.Environment[name], _ = iface.Contract.EnvVars.Optional.Get(name)
	}
	for _, ja := range iface.Contract.JobArguments {
		v, ok := cfg.Get(ja.Source)
		if !ok || v == nil {
			continue
		}
		if s, ok := formatEnv(v); ok && s != "" {
			c.Arguments = append(c.Arguments, ja.Flag, s)
		}
	}
	return c
}

// definitionParts converts c to the definition's JSON shapes, with a
// warning for each required variable left unset.
func (c Container) definitionParts() (env map[string]any, args []any, warns []string) {
	env = make(map[string]any, len(c.Environment))
	for k, v := range c.Environment {
		env[k] = v
	}
	for _, a := range c.Arguments {
		args = append(args, a)
	}
	for _, name := range c.Unset {
		warns = append(warns, fmt.Sprintf("required environment variable %s has no value (set config field %s)", name, strings.ToLower(name)))
	}
	return env, args, warns
}
