#!/usr/bin/env bash
# Runs the race-detector suite several times in a row with CPU-burning
# processes beside it, to show the tests do not depend on a quiet machine
# (no sleep racing a deadline, no timing that a busy core breaks).
#
# Usage: scripts/race-under-load.sh [RUNS] [BURNERS]
#   RUNS     how many `go test -race -count=1 ./...` runs in a row (default 5)
#   BURNERS  busy-loop processes kept running throughout (default 2)
# Stops at the first failing run and exits with its status. Prints each
# run's wall time and result; the burners end with the script.
# Needs what the test command installs (scripts/test.sh) for the tests
# that use Python, nginx, haproxy or redis-server; without them those skip.
set -euo pipefail

cd "$(dirname "$0")/.."
runs=${1:-5}
burners=${2:-2}

pids=()
stop_burners() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null || true; }
trap stop_burners EXIT
for ((b = 0; b < burners; b++)); do
	sh -c 'while :; do :; done' &
	pids+=("$!")
done
echo "$burners CPU burners running (pids ${pids[*]:-none}); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

for ((r = 1; r <= runs; r++)); do
	start=$(date +%s)
	status=0
	go test -race -count=1 -timeout 30m ./... >"${TMPDIR:-/tmp}/race-under-load.$r.log" 2>&1 || status=$?
	took=$(($(date +%s) - start))
	packages=$(grep -c '^ok ' "${TMPDIR:-/tmp}/race-under-load.$r.log" || true)
	if ((status != 0)); then
		grep -E '^(--- FAIL|FAIL|panic:)' "${TMPDIR:-/tmp}/race-under-load.$r.log" | head -20
		echo "run $r/$runs: FAILED after ${took}s (log: ${TMPDIR:-/tmp}/race-under-load.$r.log)"
		exit "$status"
	fi
	echo "run $r/$runs: passed, $packages packages ok, ${took}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
