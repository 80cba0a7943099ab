#!/usr/bin/env bash
# Installs the NetCDF readers the series NetCDF tests compare with (ncdump from netcdf-bin, cdo), only when missing.
set -euo pipefail
if command -v ncdump >/dev/null && command -v cdo >/dev/null; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y netcdf-bin cdo >/dev/null
echo "netcdf-bin and cdo installed"
