#!/usr/bin/env bash
# Installs what the NetCDF fixtures need (python3-netcdf4, python3-numpy, with GDAL's python3-gdal), only when missing.
set -euo pipefail
if /usr/bin/python3 -c 'import netCDF4, numpy; from osgeo import gdal' 2>/dev/null; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y python3-netcdf4 python3-numpy python3-gdal >/dev/null
echo "python3-netcdf4 and python3-numpy installed"
