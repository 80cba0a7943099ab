#!/usr/bin/env bash
# Installs GDAL (gdalinfo and Python's osgeo) for the GeoTIFF tests, only when it is missing.
set -euo pipefail
if /usr/bin/python3 -c 'from osgeo import gdal' 2>/dev/null && command -v gdalinfo >/dev/null; then
  echo "GDAL present: $(gdalinfo --version)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y gdal-bin python3-gdal
echo "GDAL installed: $(gdalinfo --version)"
