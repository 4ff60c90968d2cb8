#!/usr/bin/env sh
# Connect Claude Code to cursus. Pick one.
#
# Remote: the server installed by the Helm chart, behind its ingress.
# CURSUS_TOKEN is a token from the server's tokens file (auth.tokens) or
# a JWT from your OIDC issuer; drop --header when auth is off.
claude mcp add --transport http cursus https://cursus.example.com/mcp --header "Authorization: Bearer ${CURSUS_TOKEN}"

# Local: cursus on this machine over stdio, confined to the current
# project (file arguments resolve inside --workspace-root).
# claude mcp add cursus-local -- cursus mcp serve --workspace-root "$PWD"

# Project-scoped alternative: commit claude-code.mcp.json as .mcp.json.
