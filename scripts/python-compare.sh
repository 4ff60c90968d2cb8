#!/usr/bin/env bash
# Compares cursus with the Python project whose design it follows, running
# that project's own code, in alternating rounds of one run:
#   start-up: `cursus mcp list-tools` ÷ the Python project's import + tool list;
#   wiring:   wiring its Cursus-format shared DAGs in-process (BenchmarkWireShared
#             with BENCH_WIRE_DAGS) ÷ the Python project wiring the same files.
# (Not CURSUS_* names: cursus refuses unknown CURSUS_ variables.) Nothing is
# installed: when the Python project is not on this machine the
# script says so and exits 0 without measuring.
#
# Environment:
#   PYPROJECT_DIR  a checkout of the Python project (put on PYTHONPATH
#                          as itself and its src/); required
#   PYPROJECT_LIST         Python code that imports the project and builds its
#                          tool list (timed as a whole process); required
#   PYPROJECT_WIRE         Python code that wires every *.dag.json under the
#                          directory sys.argv[1] once, after its imports, and
#                          prints the seconds the wiring took; required
#   PYPROJECT_DAGS         the project's shared-DAG directory
#                          (default $PYPROJECT_DIR/src/cursus/pipeline_catalog/shared_dags)
#   PYTHON                 interpreter (default /usr/bin/python3)
#   ROUNDS                 alternating rounds (default 5)
#
# Usage: PYPROJECT_DIR=... PYPROJECT_LIST=... PYPROJECT_WIRE=... scripts/python-compare.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-/usr/bin/python3}
proj=${PYPROJECT_DIR:-}
rounds=${ROUNDS:-5}

skip() {
	echo "skip: $*; nothing measured"
	exit 0
}
[[ -n $proj && -d $proj ]] || skip "the Python project is not available (set PYPROJECT_DIR to a checkout)"
export PYTHONPATH="$proj/src:$proj${PYTHONPATH:+:$PYTHONPATH}"
"$py" -c 'import cursus' 2>/dev/null || skip "the Python project at $proj does not import with $py"
[[ -n ${PYPROJECT_LIST:-} && -n ${PYPROJECT_WIRE:-} ]] || skip "set PYPROJECT_LIST and PYPROJECT_WIRE (see the header of this script)"
dags=${PYPROJECT_DAGS:-$proj/src/cursus/pipeline_catalog/shared_dags}
[[ -d $dags ]] || skip "no shared-DAG directory at $dags (set PYPROJECT_DAGS)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && scripts/build.sh "$work/cursus" && go test -c -o "$work/deps.test" ./engine/deps)

now() { date +%s.%N; }
for ((r = 1; r <= rounds; r++)); do
	t0=$(now)
	(cd "$work" && ./cursus mcp list-tools >/dev/null)
	t1=$(now)
	"$py" -c "$PYPROJECT_LIST" >/dev/null
	t2=$(now)
	go_wire=$(cd "$root/engine/deps" && BENCH_WIRE_DAGS="$dags" "$work/deps.test" -test.run '^$' \
		-test.bench 'WireShared/fresh' -test.benchtime 5x | awk '/WireShared/ {print $3 / 1e9}')
	py_wire=$("$py" -c "$PYPROJECT_WIRE" "$dags" | tail -1)
	echo "$t0 $t1 $t2 $go_wire $py_wire" | awk '{printf "round: start-up %.4f s / %.4f s = %.3f; wiring %.5f s / %.5f s = %.3f\n",
		$2-$1, $3-$2, ($2-$1)/($3-$2), $4, $5, $4/$5}' | tee -a "$work/rounds.txt"
done
"$py" - "$work/rounds.txt" <<'EOF2'
import statistics, sys
s, w = [], []
for line in open(sys.argv[1]):
    parts = line.split("= ")
    s.append(float(parts[1].split(";")[0]))
    w.append(float(parts[2]))
print(f"median start-up ratio {statistics.median(s):.3f}, wiring ratio {statistics.median(w):.3f} over {len(s)} rounds")
EOF2
