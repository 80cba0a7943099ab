#!/usr/bin/env bash
# usage: ensure-command.sh <command> <debian package>...: installs the packages from Debian only when the command is
# missing (Chromium for the browser tests, wrk for make bench, R and terra for the docs' R lines).
set -euo pipefail
command -v "$1" >/dev/null && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y "${@:2}" >/dev/null
echo "${*:2} installed"
