#!/usr/bin/env bash
# Installs the NetCDF readers the series NetCDF tests compare with (ncdump from netcdf-bin, cdo, scipy for xarray's second engine), only when missing.
set -euo pipefail
if command -v ncdump >/dev/null && command -v cdo >/dev/null && /usr/bin/python3 -c "import scipy" 2>/dev/null; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y netcdf-bin cdo python3-scipy >/dev/null
echo "netcdf-bin, cdo and python3-scipy installed"
