#!/usr/bin/env bash
# Installs Debian's Chromium for the HTML report test (docs), which opens
# `kubectl sched replay --html` pages headless. Does nothing when a chromium
# is already on PATH. Installing needs root and apt-get (CI runs as root on
# Debian); without them it says why and exits 3, which `make test-browser`
# takes as "skip the browser check" rather than a failure.
set -euo pipefail
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "install-chromium: chromium is not on PATH and installing it needs root (apt-get install chromium)" >&2
	exit 3
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: chromium is not on PATH and there is no apt-get to install it with" >&2
	exit 3
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium
