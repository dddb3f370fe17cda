"""Groups whose variables sit on different grids, written with the real writers, and read back the way
an analyst would (xarray, decoded) so tests can compare gridcast's answers on the same bytes.

usage:
  multigrid_stores.py v2 DIR     with Debian's xarray + zarr 2: DIR/merged.zarr
  multigrid_stores.py v3 DIR     with xarray + zarr 3 (the venv): DIR/waves.zarr
  multigrid_stores.py read       queries (JSON on stdin) -> answers (JSON)

Stores (small, deterministic):
  merged.zarr  (v2) what merging cfgrib's hypercubes of one GRIB file gives once the second grid's
               coordinates are renamed apart (as GRIB-to-netCDF converters name them): t2m on a
               regional 1 degree grid (latitude 60..40 descending, longitude -10..20), msl on a global
               2.5 degree grid (lat_1 ascending -90..90, lon_1 0..357.5), one run, steps 0, 6, 12.
  two_names.zarr (v2) msl on lat/lon and t2m on latitude/longitude, an analysis (no steps).
  bad_second.zarr (v2) t2m on a good grid beside msl on lat_1/lon_1 whose latitudes repeat a value.
  waves.zarr   (v3) ECMWF open data's atmosphere and wave fields in one dataset: t2m on a 0.5 degree
               grid (latitude 50..30, longitude -20..10) and swh on the wave model's 1 degree grid
               (latitude_wave 70..20, longitude_wave -40..30), NaN over land, two runs, steps 0, 3.
"""
import json
import sys

import numpy as np
import pandas as pd
import xarray as xr
from xarray_read import jsonable, opener


def field(shape, seed, lo, hi):
    rng = np.random.default_rng(seed)
    return (lo + (hi - lo) * rng.random(shape)).astype("float32")


def merged(path):
    lat = np.arange(60.0, 39.9, -1.0)
    lon = np.arange(-10.0, 20.1, 1.0)
    lat1 = np.arange(-90.0, 90.1, 2.5)
    lon1 = np.arange(0.0, 360.0, 2.5)
    steps = pd.to_timedelta([0, 6, 12], unit="h")
    ds = xr.Dataset(
        {
            "t2m": (
                ("time", "step", "latitude", "longitude"),
                field((1, 3, len(lat), len(lon)), 201, 250, 300),
                {"units": "K", "GRIB_shortName": "2t", "GRIB_stepType": "instant"},
            ),
            "msl": (
                ("time", "step", "lat_1", "lon_1"),
                field((1, 3, len(lat1), len(lon1)), 202, 96000, 104000),
                {"units": "Pa", "GRIB_shortName": "msl", "GRIB_stepType": "instant"},
            ),
        },
        coords={
            "time": ("time", pd.to_datetime(["2024-03-01T00:00"])),
            "step": ("step", steps),
            "latitude": ("latitude", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "longitude": ("longitude", lon, {"units": "degrees_east", "standard_name": "longitude"}),
            "lat_1": ("lat_1", lat1, {"units": "degrees_north"}),
            "lon_1": ("lon_1", lon1, {"units": "degrees_east"}),
        },
        attrs={"GRIB_centre": "ecmf"},
    )
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"msl": {"chunks": (1, 1, 40, 72)}})


def bad_second(path):
    """t2m on a good grid beside msl on lat_1/lon_1 whose latitudes repeat a value (not monotonic)."""
    lat = np.arange(50.0, 39.9, -2.0)
    lon = np.arange(0.0, 10.1, 2.0)
    lat1 = np.array([40.0, 45.0, 45.0, 50.0])
    lon1 = np.array([0.0, 5.0, 10.0])
    ds = xr.Dataset(
        {
            "t2m": (("time", "latitude", "longitude"), field((1, len(lat), len(lon)), 211, 250, 300), {"units": "K"}),
            "msl": (("time", "lat_1", "lon_1"), field((1, 4, 3), 212, 96000, 104000), {"units": "Pa"}),
        },
        coords={
            "time": ("time", pd.to_datetime(["2024-03-01T00:00"])),
            "latitude": ("latitude", lat, {"units": "degrees_north"}),
            "longitude": ("longitude", lon, {"units": "degrees_east"}),
            "lat_1": ("lat_1", lat1, {"units": "degrees_north"}),
            "lon_1": ("lon_1", lon1, {"units": "degrees_east"}),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def two_names(path):
    """msl on lat/lon (2 degrees) and t2m on latitude/longitude (1 degree), 10..20 N, 100..110 E: both spellings gridcast prefers."""
    ds = xr.Dataset(
        {
            "msl": (("time", "lat", "lon"), field((2, 6, 6), 221, 96000, 104000), {"units": "Pa"}),
            "t2m": (("time", "latitude", "longitude"), field((2, 11, 11), 222, 250, 300), {"units": "K"}),
        },
        coords={
            "time": ("time", pd.to_datetime(["2024-03-01T00:00", "2024-03-01T06:00"])),
            "lat": ("lat", np.arange(10.0, 20.1, 2.0)),
            "lon": ("lon", np.arange(100.0, 110.1, 2.0)),
            "latitude": ("latitude", np.arange(20.0, 9.9, -1.0)),
            "longitude": ("longitude", np.arange(100.0, 110.1, 1.0)),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def waves(path):
    lat = np.arange(50.0, 29.9, -0.5)
    lon = np.arange(-20.0, 10.1, 0.5)
    latw = np.arange(70.0, 19.9, -1.0)
    lonw = np.arange(-40.0, 30.1, 1.0)
    init = pd.to_datetime(["2025-02-01T00:00", "2025-02-01T12:00"])
    steps = pd.to_timedelta([0, 3], unit="h")
    swh = field((2, 2, len(latw), len(lonw)), 302, 0.2, 8.0)
    # Land: the wave model has no value there (xarray writes NaN, its _FillValue).
    swh[:, :, 20:35, 45:60] = np.nan
    ds = xr.Dataset(
        {
            "t2m": (
                ("time", "step", "latitude", "longitude"),
                field((2, 2, len(lat), len(lon)), 301, 260, 300),
                {"units": "K", "GRIB_shortName": "2t", "GRIB_stepType": "instant"},
            ),
            "swh": (
                ("time", "step", "latitude_wave", "longitude_wave"),
                swh,
                {
                    "units": "m",
                    "GRIB_shortName": "swh",
                    "GRIB_stepType": "instant",
                    "long_name": "Significant height of combined wind waves and swell",
                },
            ),
        },
        coords={
            "time": ("time", init),
            "step": ("step", steps),
            "latitude": ("latitude", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "longitude": ("longitude", lon, {"units": "degrees_east", "standard_name": "longitude"}),
            "latitude_wave": ("latitude_wave", latw, {"units": "degrees_north", "standard_name": "latitude"}),
            "longitude_wave": ("longitude_wave", lonw, {"units": "degrees_east", "standard_name": "longitude"}),
        },
        attrs={"GRIB_centre": "ecmf"},
    )
    enc = {"swh": {"chunks": (1, 1, 26, 36)}, "t2m": {"chunks": (1, 1, 41, 61)}}
    ds.to_zarr(path, mode="w", zarr_format=3, consolidated=True, encoding=enc)



def read(queries):
    """Each query: store, var, and either isel (indices) or sel (nearest coordinate values)."""
    open_store = opener()
    out = []
    for q in queries:
        ds = open_store(q)
        da = ds[q["var"]]
        if q.get("isel"):
            da = da.isel(**q["isel"])
        if q.get("sel"):
            da = da.sel(**q["sel"], method="nearest")
        if q.get("slice"):
            da = da.sel(**{k: slice(*v) for k, v in q["slice"].items()})
        out.append(
            {
                "values": jsonable(da.values),
                "dims": list(da.dims),
                "shape": list(da.shape),
                "coords": {d: jsonable(da[d].values) for d in da.coords if da[d].ndim <= 1},
                "var_dims": list(ds[q["var"]].dims),
                "var_coords": {d: jsonable(ds[d].values) for d in ds[q["var"]].dims if d in ds.coords},
            }
        )
    return out


if __name__ == "__main__":
    if sys.argv[1] == "v2":
        merged(f"{sys.argv[2]}/merged.zarr")
        bad_second(f"{sys.argv[2]}/bad_second.zarr")
        two_names(f"{sys.argv[2]}/two_names.zarr")
    elif sys.argv[1] == "v3":
        waves(f"{sys.argv[2]}/waves.zarr")
    elif sys.argv[1] == "read":
        json.dump(read(json.load(sys.stdin)), sys.stdout)
    else:
        sys.exit(__doc__)
