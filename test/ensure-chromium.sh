#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (driven by playwright-core), only when it is missing.
set -euo pipefail
command -v chromium >/dev/null && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y chromium >/dev/null
echo "Chromium installed: $(chromium --version)"
