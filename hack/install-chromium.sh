#!/usr/bin/env bash
# Installs Debian's Chromium for the HTML report test (internal/report),
# which opens `kubectl sched replay --html` pages headless. Does nothing
# when a chromium is already on PATH. Needs root (CI runs as root) and
# Debian's package archive.
set -euo pipefail
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "install-chromium: not root: run 'apt-get install chromium' yourself" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium
