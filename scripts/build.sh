#!/usr/bin/env bash
# The one build command for the cursus binary, used by the Dockerfile build
# stage and by CI, so what CI tests is what the image ships.
#
#   scripts/build.sh OUTPUT_PATH
#
# Produces a static (CGO_ENABLED=0), trimmed binary with the version baked in.
# Environment:
#   VERSION   version string (default: `git describe`, else "dev")
#   GOOS, GOARCH   cross-compile target (default: the host's)
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
	echo "usage: scripts/build.sh OUTPUT_PATH" >&2
	exit 2
fi
out="$1"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"

version="${VERSION:-}"
if [[ -z "${version}" ]]; then
	version="$(git describe --tags --always --dirty 2>/dev/null || true)"
fi
version="${version:-dev}"

mkdir -p "$(dirname "${out}")"
CGO_ENABLED=0 go build \
	-trimpath \
	-ldflags "-s -w -X github.com/cursus-dev/cursus.Version=${version}" \
	-o "${out}" \
	./cmd/cursus
echo "built ${out} (version ${version})" >&2
