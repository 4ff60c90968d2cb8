#!/usr/bin/env bash
# Measures the MCP tools/list of a live cursus server, full and lean, and
# the first answers an agent reads (GET /tools, tools.help and
# config.requirements, default and full), in bytes and o200k tokens;
# writes docs/TOOLS.md and the figures of README.md between its
# tool-sizes and answer-size markers. Needs Go, Node >= 20 and npm (gpt-tokenizer, pinned
# in scripts/toolsizes/package-lock.json). Loopback only.
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

# list MODE FILE: serve with mcp.tool_list=MODE and save its tools/list;
# with MODE lean, also save the answers measured beside it in $work/answers.
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
	if [[ $1 == lean ]]; then
		answers "http://$addr"
	fi
	kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
}
# answers BASE: GET /tools, tools.help and config.requirements of the
# 12-node LightGBM end-to-end DAG (lightgbm_complete_e2e with missing-value
# imputation after each TabularPreprocessing node), default and full.
answers() {
	local a=$work/answers
	mkdir -p "$a"
	curl -fsS --max-time 10 "$1/tools" >"$a/rest_tools.default.json"
	curl -fsS --max-time 10 "$1/tools?detail=full" >"$a/rest_tools.full.json"
	curl -fsS --max-time 10 "$1/call/tools.help" -d '{}' >"$a/tools_help.default.json"
	curl -fsS --max-time 10 "$1/call/tools.help" -d '{"detail":"full"}' >"$a/tools_help.full.json"
	curl -fsS --max-time 10 "$1/call/pipeline_catalog.get_dag" -d '{"dag_id":"lightgbm_complete_e2e"}' >"$a/shared.json"
	node -e '
		const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).data;
		const nodes = [...d.nodes, "MissingValueImputation_training", "MissingValueImputation_calibration"];
		const edges = [];
		for (const [from, to] of d.edges) {
			const job = from.startsWith("TabularPreprocessing_") ? from.slice("TabularPreprocessing_".length) : "";
			if (job) edges.push([from, "MissingValueImputation_" + job], ["MissingValueImputation_" + job, to]);
			else edges.push([from, to]);
		}
		edges.push(["MissingValueImputation_training", "MissingValueImputation_calibration"]);
		process.stdout.write(JSON.stringify({nodes, edges}));
	' "$a/shared.json" >"$a/dag12.json"
	curl -fsS --max-time 30 "$1/call/config.requirements" -d "{\"dag\":$(cat "$a/dag12.json")}" >"$a/config_requirements.default.json"
	curl -fsS --max-time 30 "$1/call/config.requirements" -d "{\"detail\":\"full\",\"dag\":$(cat "$a/dag12.json")}" >"$a/config_requirements.full.json"
}

list full "$work/full.json"
list lean "$work/lean.json"
commit=$(cd "$root" && git rev-parse --short HEAD)
node "$root/scripts/toolsizes/measure.mjs" "$work/full.json" "$work/lean.json" "$commit" "$work/answers" "$root/README.md" >"$root/docs/TOOLS.md"
echo "wrote docs/TOOLS.md and the figures of README.md"
