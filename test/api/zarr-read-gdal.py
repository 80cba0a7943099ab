# Reads maps of the Zarr view with GDAL alone (never beside numcodecs in one process: loading both crashed here):
# argv: the view's URL (.../zarr/v2/<id>/maps), the variable, an output folder, then time indices. For each index,
# writes <folder>/gdal-<index>.f32 (the whole map, float32 LE, north-up) and prints one JSON line of what GDAL found.
import json, os, sys
os.environ.setdefault("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")
from osgeo import gdal

gdal.UseExceptions()
url, variable, out = sys.argv[1], sys.argv[2], sys.argv[3]
for index in sys.argv[4:]:
    ds = gdal.Open(f'ZARR:"/vsicurl/{url}":/{variable}:{index}')
    band = ds.GetRasterBand(1)
    values = band.ReadAsArray()
    with open(os.path.join(out, f"gdal-{index}.f32"), "wb") as f:
        f.write(values.astype("<f4").tobytes())
    srs = ds.GetSpatialRef()
    print(json.dumps({
        "index": int(index),
        "size": [ds.RasterXSize, ds.RasterYSize],
        "geotransform": list(ds.GetGeoTransform()),
        "epsg": srs.GetAuthorityCode(None) if srs else None,
        "nodata": str(band.GetNoDataValue()),
        "unit": band.GetUnitType(),
        "block": band.GetBlockSize(),
    }))
