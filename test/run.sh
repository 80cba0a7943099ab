#!/usr/bin/env bash
# The test command (make test, .ci/run): installs what the tests need, typechecks, runs uvu, prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

make --no-print-directory install >/dev/null || { echo "npm install failed"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-gdal.sh || { echo "could not install GDAL (gdal-bin, python3-gdal)"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-python.sh || { echo "could not install python3-netcdf4 and python3-numpy (the NetCDF fixtures)"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-zarr.sh || { echo "could not install python3-xarray python3-zarr python3-fsspec python3-aiohttp (the Zarr view's reader tests)"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-command.sh chromium chromium || { echo "could not install Chromium (the explorer's browser tests)"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-command.sh nginx nginx-light || { echo "could not install nginx-light (make sync's tests serve a dist with it)"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-command.sh rclone rclone || { echo "could not install rclone (the test of README's bucket commands)"; echo "0 passed, 1 failed"; exit 1; }
bash test/ensure-command.sh bindfs bindfs || { echo "could not install bindfs (the dist lock's test of two mounts of one folder)"; echo "0 passed, 1 failed"; exit 1; }

failed_extra=0
if ! npx tsc --noEmit -p .; then
  echo "typecheck failed"
  failed_extra=1
fi

log=$(mktemp)
node_modules/.bin/uvu -r tsx test '\.test\.ts$' 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# the route suites again, against a server over the same dists served by nginx (make serve DIST=<url>)
SERVER_DIST=nginx node_modules/.bin/uvu -r tsx test 'server-(read|query|http|plans|integrity|site|series)\.test\.ts$' 2>&1 | tee -a "$log"
remote_status=${PIPESTATUS[0]}
[ "$remote_status" -ne 0 ] && status=$remote_status
total=$(sed -n 's/.*Total:[[:space:]]*\([0-9]*\).*/\1/p' "$log" | awk '{ n += $1 } END { print n + 0 }')
passed=$(sed -n 's/.*Passed:[[:space:]]*\([0-9]*\).*/\1/p' "$log" | awk '{ n += $1 } END { print n + 0 }')
rm -f "$log"
failed=$((total - passed + failed_extra))
# uvu exits non-zero without a summary when a suite crashes at load: count that as a failure too
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
