#!/usr/bin/env bash
# Runs every fuzz target for CURSUS_FUZZTIME each (default 10m), one worker
# each, one after another. Not part of scripts/test.sh: go test already runs
# every target's seed corpus (testdata/fuzz/) as a plain test, and a timed
# fuzz run on a busy machine can fail on its own deadline without finding
# anything. A failing input is written under the package's testdata/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in FuzzCallArguments:./registry FuzzRESTCall:./server FuzzParseDAG:./engine/dag \
              FuzzParseInterface:./engine/steps FuzzParseConfig:./engine/config \
              FuzzAnalyzeScript:./engine/validate; do
  printf '\n==> %s (%s)\n' "${target%%:*}" "${CURSUS_FUZZTIME:-10m}"
  go test -run='^$' -fuzz="^${target%%:*}\$" -fuzztime="${CURSUS_FUZZTIME:-10m}" -parallel=1 "${target#*:}"
done
