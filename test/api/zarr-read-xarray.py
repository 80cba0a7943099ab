# Reads the Zarr view with xarray + zarr (Debian's), lazily over HTTP: argv: the server's base URL, a version id, the
# variable, an output folder, a time index, then points "lon,lat" and one box "west,south,east,north". Writes float32
# LE files: xarray-map.f32 (the whole map of that day from the maps group), xarray-point-<n>.f32 (every date of
# each point from the series group), xarray-box.f32 (the box over every date, time-major, north-up); prints JSON.
import json, os, sys
import numpy as np
import xarray as xr

base, version, variable, out, index = sys.argv[1:6]
points = [tuple(map(float, p.split(","))) for p in sys.argv[6:-1]]
west, south, east, north = map(float, sys.argv[-1].split(","))
maps = xr.open_zarr(f"{base}/zarr/v2/{version}/maps", consolidated=True)
series = xr.open_zarr(f"{base}/zarr/v2/{version}/series", consolidated=True)
day = maps[variable].isel(time=int(index))
day.values.astype("<f4").tofile(os.path.join(out, "xarray-map.f32"))
for n, (lon, lat) in enumerate(points):
    series[variable].sel(lon=lon, lat=lat, method="nearest").values.astype("<f4").tofile(os.path.join(out, f"xarray-point-{n}.f32"))
# the box's edges lie on cell edges, so the cells xarray selects are those whose centres the query route selects
# (lat descends: north first)
box = series[variable].sel(lat=slice(north, south), lon=slice(west, east))
box.values.astype("<f4").tofile(os.path.join(out, "xarray-box.f32"))
print(json.dumps({
    "dtype": str(series[variable].dtype),
    "dims": list(series[variable].dims),
    "shape": list(series[variable].shape),
    "time": [str(t)[:10] for t in series["time"].values[[0, -1]]],
    "units": series[variable].attrs.get("units"),
    "standard_name": series[variable].attrs.get("standard_name"),
    "box": list(box.shape),
    "map": list(day.shape),
}))
