#!/usr/bin/env bash
# Installs what the docs' examples need beyond the other ensure scripts (R with terra, pandas, systemd-analyze), only when missing.
set -euo pipefail
missing=()
Rscript -e 'library(terra)' >/dev/null 2>&1 || missing+=(r-base-core r-cran-terra)
/usr/bin/python3 -c 'import pandas' 2>/dev/null || missing+=(python3-pandas)
command -v systemd-analyze >/dev/null || missing+=(systemd)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y "${missing[@]}" >/dev/null
echo "${missing[*]} installed"
