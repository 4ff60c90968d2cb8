#!/usr/bin/env bash
# Installs helm from source through the Go module proxy (the only registry
# CI can reach for Go tools) into a versioned cache directory, once.
# Prints the path of the helm binary on stdout; progress goes to stderr.
#
#   HELM="$(scripts/install-helm.sh)" && "$HELM" version
#
# Environment:
#   CURSUS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/cursus-tools or ~/.cache/cursus-tools)
set -euo pipefail

helm_version="v3.22.0"
# The Kubernetes version helm 3.22 is built against (client-go v0.37 → 1.37).
# helm's own release build stamps it with -ldflags; without it `helm template`
# and `helm lint` would assume Kubernetes 1.20.
k8s_major="1"
k8s_minor="37"

cache_root="${CURSUS_TOOLS_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/cursus-tools}"
bin_dir="${cache_root}/helm-${helm_version}-k8s${k8s_major}.${k8s_minor}/bin"
helm_bin="${bin_dir}/helm"

if [[ ! -x "${helm_bin}" ]]; then
	echo "install-helm: building helm ${helm_version} into ${bin_dir}" >&2
	mkdir -p "${bin_dir}"
	ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${helm_version}"
	for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
		ldflags+=" -X ${pkg}.k8sVersionMajor=${k8s_major} -X ${pkg}.k8sVersionMinor=${k8s_minor}"
	done
	# Build outside any module so the project's go.mod does not constrain
	# helm's dependencies; CGO off gives a static binary.
	(
		cd "$(mktemp -d)"
		GOBIN="${bin_dir}" CGO_ENABLED=0 \
			go install -trimpath -ldflags "${ldflags}" "helm.sh/helm/v3/cmd/helm@${helm_version}"
	) >&2
fi

echo "install-helm: $("${helm_bin}" version --short)" >&2
echo "${helm_bin}"
