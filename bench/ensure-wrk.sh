#!/usr/bin/env bash
# Installs wrk (the load generator of make bench) from Debian, only when it is missing.
set -euo pipefail
command -v wrk >/dev/null && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y wrk >/dev/null
