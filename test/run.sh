#!/usr/bin/env bash
# The test command (make test, .ci/run): installs what the tests need, then test/parallel.ts runs everything and prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

make --no-print-directory install >/dev/null || { echo "npm install failed"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-gdal.sh || { echo "could not install GDAL (gdal-bin, python3-gdal)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-python.sh || { echo "could not install python3-netcdf4 and python3-numpy (the NetCDF fixtures)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-zarr.sh || { echo "could not install python3-xarray python3-zarr python3-fsspec python3-aiohttp (the Zarr view's reader tests)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-netcdf-tools.sh || { echo "could not install netcdf-bin, cdo, nco, r-cran-ncdf4 and python3-scipy (the NetCDF and OPeNDAP reader tests)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-command.sh chromium chromium || { echo "could not install Chromium (the explorer's browser tests)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-command.sh nginx nginx-light || { echo "could not install nginx-light (make sync's tests serve a dist with it)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-command.sh rclone rclone || { echo "could not install rclone (the test of README's bucket commands)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-command.sh bindfs bindfs || { echo "could not install bindfs (the dist lock's test of two mounts of one folder)"; echo "0 passed, 1 failed"; exit 1; }
bash test/support/ensure-docs.sh || { echo "could not install r-base-core r-cran-terra python3-pandas systemd (the docs' R, pandas and systemd unit examples)"; echo "0 passed, 1 failed"; exit 1; }

# typecheck, the shared fixtures and every test file as parallel processes (TEST_JOBS at a time, default the
# number of cores), then the route suites again over nginx; the runner prints the last line, "N passed, N failed"
exec node_modules/.bin/tsx test/parallel.ts "$@"
