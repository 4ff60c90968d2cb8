#!/usr/bin/env bash
# Measures the MCP tools/list of a live cursus server, full and lean, in
# bytes and o200k tokens, and writes docs/TOOLS.md. Needs Go, Node >= 20
# and npm (gpt-tokenizer, pinned in scripts/toolsizes/package-lock.json).
# Loopback only.
#
# Usage: scripts/tool-sizes.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server_pid=""
cleanup() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/cursus" ./cmd/cursus)
(cd "$root/scripts/toolsizes" && npm ci --no-audit --no-fund --silent)
mkdir -p "$work/workspace"

# list MODE FILE: serve with mcp.tool_list=MODE and save its tools/list.
list() {
	local logf=$work/server-$1.log addr=""
	CURSUS_MCP_TOOL_LIST=$1 "$work/cursus" serve --addr 127.0.0.1:0 --workspace-root "$work/workspace" 2>"$logf" &
	server_pid=$!
	for _ in $(seq 1 100); do
		addr=$(grep '"listening"' "$logf" | sed -n 's/.*"addr":"\(127\.0\.0\.1:[0-9]*\)".*/\1/p' | head -n1 || true)
		if [[ -n $addr ]] && curl -fsS --max-time 2 "http://$addr/readyz" >/dev/null 2>&1; then
			break
		fi
		sleep 0.1
	done
	curl -fsS --max-time 10 "http://$addr/mcp" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' >"$2"
	kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
}
list full "$work/full.json"
list lean "$work/lean.json"
commit=$(cd "$root" && git rev-parse --short HEAD)
node "$root/scripts/toolsizes/measure.mjs" "$work/full.json" "$work/lean.json" "$commit" >"$root/docs/TOOLS.md"
echo "wrote docs/TOOLS.md"
