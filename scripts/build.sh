#!/usr/bin/env bash
# The one build command for the cursus binary, used by the Dockerfile build
# stage and by CI, so what CI tests is what the image ships.
#
#   scripts/build.sh OUTPUT_PATH
#
# Produces a static (CGO_ENABLED=0), trimmed binary with the version baked in.
# The grpcnotrace tag keeps golang.org/x/net/trace out: gRPC (which the
# OTLP/HTTP trace exporter imports for its shared configuration) would
# otherwise link it, and its HTML templates make the linker keep every
# exported method of every type: 43 MB instead of 27, and as much more
# resident memory. cmd/cursus's TestReleaseBuildDropsUnusedMethods keeps
# it so.
# Environment:
#   VERSION   version string (default: `git describe`, else "dev")
#   GOOS, GOARCH   cross-compile target (default: the host's)
#   EXTRA_LDFLAGS  more linker flags (the test above adds -dumpdep)
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
	-tags grpcnotrace \
	-ldflags "-s -w -X github.com/cursus-dev/cursus.Version=${version}${EXTRA_LDFLAGS:+ ${EXTRA_LDFLAGS}}" \
	-o "${out}" \
	./cmd/cursus
echo "built ${out} (version ${version})" >&2
