#!/usr/bin/env bash
# Installs what the Zarr view's reader tests need (Debian's xarray, zarr, fsspec and aiohttp), only when missing.
set -euo pipefail
if /usr/bin/python3 -c 'import xarray, zarr, fsspec, aiohttp' 2>/dev/null; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update >/dev/null
$SUDO apt-get install -y python3-xarray python3-zarr python3-fsspec python3-aiohttp >/dev/null
echo "python3-xarray, python3-zarr, python3-fsspec and python3-aiohttp installed"
