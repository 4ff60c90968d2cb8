#!/usr/bin/env bash
# Measures start-up, compile and idle memory of this tree, and optionally
# of a baseline tree, in alternating rounds of one run, and prints the
# medians of each benchmark's metrics (the numbers of docs/PERFORMANCE.md's
# "Lean and fast" table). Every benchmark interleaves ours and its floor
# (`cursus version`, or json.Marshal of the compiled definitions) in the
# same process, so the ratios hold up on a busy machine better than the
# absolute times do.
#
# Usage: [BENCHTIME=10x] scripts/perf-rounds.sh [ROUNDS] [BASELINE_DIR]
#   ROUNDS        alternating rounds (default 5)
#   BASELINE_DIR  an extracted older tree (git archive <commit> | tar -x -C DIR);
#                 this script copies the start-up and shared-DAG compile
#                 benchmarks into it when it lacks them.
# Output: one file per tree and benchmark under $PERF_OUT (default a temp dir),
# then the medians. Loopback only; needs Go and Linux /proc.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
base=${2:-}
out=${PERF_OUT:-$(mktemp -d)}
mkdir -p "$out"

build() { # build TREE NAME: the test binaries of one tree
	local tree=$1 name=$2
	if [[ $tree != "$root" ]]; then
		cp "$root/cmd/cursus/startup_bench_test.go" "$tree/cmd/cursus/"
		grep -q BenchmarkCompileShared "$tree/engine/compiler/bench_test.go" ||
			cp "$root/engine/compiler/bench_test.go" "$tree/engine/compiler/"
	fi
	(cd "$tree" && go test -c -o "$out/$name-cmd.test" ./cmd/cursus &&
		go test -c -o "$out/$name-server.test" ./server &&
		go test -c -o "$out/$name-compiler.test" ./engine/compiler &&
		scripts/build.sh "$out/$name-cursus")
}

# idle TREE NAME: VmRSS, RssAnon and RssFile (kB) of `cursus serve` after 3 s idle.
idle() {
	local name=$1 ws
	ws=$(mktemp -d)
	"$out/$name-cursus" serve --addr 127.0.0.1:0 --workspace-root "$ws" 2>/dev/null &
	local pid=$!
	sleep 3
	awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %s ", $1, $2} END {print ""}' "/proc/$pid/status" >>"$out/$name-idle.txt"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -rf "$ws"
}

trees=("$root:new")
[[ -n $base ]] && trees+=("$base:base")
for t in "${trees[@]}"; do build "${t%%:*}" "${t##*:}"; done

for ((r = 1; r <= rounds; r++)); do
	for t in "${trees[@]}"; do
		tree=${t%%:*} name=${t##*:}
		(cd "$tree/server" && "$out/$name-server.test" -test.run '^$' -test.bench 'ColdStart' -test.benchtime "${BENCHTIME:-10x}") >>"$out/$name-coldstart.txt"
		(cd "$tree/cmd/cursus" && "$out/$name-cmd.test" -test.run '^$' -test.bench 'StdioInitialize|ListTools|BuildApp' -test.benchtime "${BENCHTIME:-10x}" -test.benchmem) >>"$out/$name-startup.txt"
		(cd "$tree/engine/compiler" && "$out/$name-compiler.test" -test.run '^$' -test.bench 'CompileShared' -test.benchtime "${BENCHTIME:-10x}") >>"$out/$name-compile.txt"
		idle "$name"
	done
done

# Medians of every metric of every benchmark line, per file.
/usr/bin/python3 - "$out" <<'EOF'
import collections, glob, os, statistics, sys
out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "*.txt"))):
    vals = collections.defaultdict(list)
    for line in open(f):
        p = line.split()
        if p and p[0].startswith("Benchmark"):
            for v, unit in zip(p[2::2], p[3::2]):
                vals[(p[0], unit)].append(float(v))
        elif p and p[0] == "VmRSS:":
            for k, v in zip(p[0::2], p[1::2]):
                vals[("idle", k.rstrip(":") + "-kB")].append(float(v))
    print(os.path.basename(f))
    for (bench, unit), v in vals.items():
        print(f"  {bench:40s} {unit:12s} median {statistics.median(v):14.4g}  (min {min(v):.4g}, max {max(v):.4g}, n={len(v)})")
EOF
echo "raw results in $out"
