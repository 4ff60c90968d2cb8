#!/usr/bin/env bash
# The one test command (README, CI): formatting, vet, staticcheck, the Go test suite with
# the race detector (including the Helm chart checks and every fuzz target's
# seed corpus) and the MCP conformance and interop checks. Timed fuzzing is
# scripts/fuzz.sh.
# Installs what it needs: staticcheck and helm built from source through the
# Go module proxy into ~/.cache/cursus-tools, promtool unpacked there from
# Debian's prometheus package (not installed: no service), the Debian
# packages python3-pandas, python3-sklearn, python3-xgboost, python3-torch,
# nginx and redis-server (apt-get, as root or through sudo), and npm
# packages from the committed lock files. Set CURSUS_SKIP_INTEROP=1 to skip the Node-based
# interop checks on a machine without Node.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

step "staticcheck"
tools_dir="${CURSUS_TOOLS_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/cursus-tools}/staticcheck-v0.8.2"
if [ ! -x "$tools_dir/staticcheck" ]; then
  (cd "$(mktemp -d)" && GOBIN="$tools_dir" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2)
fi
"$tools_dir/staticcheck" ./...

if [ -x scripts/install-helm.sh ]; then
  step "helm (for the chart tests)"
  helm_bin=$(scripts/install-helm.sh)
  export PATH="$(dirname "$helm_bin"):$PATH"
fi

step "promtool (for the alert-rule and dashboard-query tests)"
# A promtool on PATH is used as is; otherwise it is unpacked from Debian's
# prometheus package into the tools cache (scripts/install-promtool.sh): the
# package is not installed, so no Prometheus service is set up or started.
# Without apt-get the promtool tests skip with a message (and fail in CI,
# where CI is set).
if ! command -v promtool >/dev/null 2>&1; then
  if promtool_bin=$(scripts/install-promtool.sh); then
    export PATH="$(dirname "$promtool_bin"):$PATH"
  else
    echo "promtool is not on PATH and could not be unpacked: the promtool tests will skip"
  fi
fi

step "Debian packages for the local pipeline run and the multi-replica tests"
# The local run of compiled pipelines executes its scripts with Debian's
# /usr/bin/python3 and these libraries; the multi-replica tests put nginx
# and redis-server in front of and beside several servers on loopback.
# Installing them needs root: the script uses sudo when not run as root.
# On Debian, installing nginx and redis-server also enables and starts
# their services; stop and disable them afterwards on a workstation
# (the tests start their own instances on loopback).
debian_pkgs=(python3-pandas python3-sklearn python3-xgboost python3-torch nginx redis-server)
missing_pkgs=()
for p in "${debian_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_pkgs+=("$p")
done
if [ ${#missing_pkgs[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    as_root=""
    if [ "$(id -u)" -ne 0 ]; then as_root="sudo"; fi
    echo "installing as root${as_root:+ through sudo} with apt-get: ${missing_pkgs[*]} (a first run takes several minutes; python3-torch is large)"
    $as_root apt-get install -y --no-install-recommends "${missing_pkgs[@]}" >&2 ||
      { $as_root apt-get update >&2 && $as_root apt-get install -y --no-install-recommends "${missing_pkgs[@]}" >&2; }
  else
    echo "apt-get is unavailable: the tests that need ${missing_pkgs[*]} will skip"
  fi
fi

step "go test -race"
go test -race -count=1 -timeout 20m ./...

# The fair-share latency promise cannot be measured under the race
# detector, where its test skips: it runs once more without it, -short.
step "go test (fair-share latency, without the race detector)"
go test -short -count=1 -timeout 5m -run 'TestHeavyCallerCannotStarveALightOne' ./server

if [ -x scripts/interop.sh ] && [ "${CURSUS_SKIP_INTEROP:-}" != "1" ]; then
  step "MCP conformance and interop (Node)"
  scripts/interop.sh
fi

step "all checks passed"
