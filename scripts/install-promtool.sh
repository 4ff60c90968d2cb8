#!/usr/bin/env bash
# Unpacks promtool from Debian's prometheus package into a cache directory,
# once, without installing the package: no Prometheus service is set up,
# enabled or started, and nothing is written outside the cache. Needs
# apt-get and dpkg-deb (Debian, Ubuntu). Prints the path of the promtool
# binary on stdout; progress goes to stderr.
#
#   PROMTOOL="$(scripts/install-promtool.sh)" && "$PROMTOOL" --version
#
# apt-get download runs as the calling user. Only when the package lists
# are missing (a fresh container) does it run `apt-get update`, which needs
# root (sudo when not root).
#
# Environment:
#   CURSUS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/cursus-tools or ~/.cache/cursus-tools)
set -euo pipefail

cache_root="${CURSUS_TOOLS_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/cursus-tools}"
dir="${cache_root}/promtool-debian"
promtool_bin="${dir}/usr/bin/promtool"

if [[ ! -x "${promtool_bin}" ]]; then
	for tool in apt-get dpkg-deb; do
		if ! command -v "${tool}" >/dev/null 2>&1; then
			echo "install-promtool: ${tool} is unavailable" >&2
			exit 1
		fi
	done
	work=$(mktemp -d)
	trap 'rm -rf "${work}"' EXIT
	echo "install-promtool: unpacking promtool from Debian's prometheus package into ${dir}" >&2
	if ! (cd "${work}" && apt-get download prometheus) >&2; then
		as_root=""
		if [[ "$(id -u)" -ne 0 ]]; then as_root="sudo"; fi
		echo "install-promtool: refreshing the package lists (${as_root:-as root}: apt-get update)" >&2
		${as_root} apt-get update >&2
		(cd "${work}" && apt-get download prometheus) >&2
	fi
	mkdir -p "${cache_root}"
	dpkg-deb -x "${work}"/prometheus_*.deb "${work}/root"
	rm -rf "${dir}"
	mkdir -p "${dir}/usr/bin"
	# Only the binary: the rest of the package (the server, its service
	# unit, its web assets) is left behind.
	mv "${work}/root/usr/bin/promtool" "${promtool_bin}.tmp"
	mv "${promtool_bin}.tmp" "${promtool_bin}"
fi

echo "install-promtool: $("${promtool_bin}" --version 2>&1 | head -n1)" >&2
echo "${promtool_bin}"
