#!/usr/bin/env bash
# Installs the NetCDF readers the series NetCDF and OPeNDAP tests compare with (ncdump and nccopy from netcdf-bin, cdo,
# NCO's ncks, R's ncdf4, scipy for xarray's second engine), only when missing.
set -euo pipefail
missing=()
command -v ncdump >/dev/null || missing+=(netcdf-bin)
command -v cdo >/dev/null || missing+=(cdo)
command -v ncks >/dev/null || missing+=(nco)
/usr/bin/python3 -c "import scipy" 2>/dev/null || missing+=(python3-scipy)
Rscript -e 'library(ncdf4)' >/dev/null 2>&1 || missing+=(r-cran-ncdf4)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y "${missing[@]}" >/dev/null
echo "${missing[*]} installed"
