"""Write Zarr v2 stores the way real producers lay them out, with Debian's xarray + zarr 2, and read
them back the way an analyst would (xarray, decoded), so tests can compare gridcast's answers with
xarray's on the very same stores.

usage:
  producer_stores.py write DIR      writes DIR/<layout>.zarr for every layout below
  producer_stores.py read           reads queries (JSON on stdin) and prints the answers as JSON:
      [{"store": path or URL, "headers": {...}, "var": name, "isel": {dim: index, ...}}, ...]
      → [{"values": [...], "dims": [...], "attrs": {...}, "coords": {dim: [...]}}, ...]

Layouts (all small, deterministic):
  ecmwf_oper.zarr  cfgrib single run of ECMWF open data: scalar time, step dimension (timedelta),
                   latitude 90..-90, longitude -180..175, t2m/msl/10u and tp accumulated since the run
                   start (GRIB_stepType accum), scalar number/surface and valid_time coordinates.
  gefs.zarr        cfgrib GEFS: time (2 runs), step, number (0..3) ensemble, t2m and tp in kg m**-2.
  era5.zarr        ARCO ERA5 / WeatherBench2 reanalysis: time (6 hourly times, datetime64), no lead,
                   2m_temperature, mean_sea_level_pressure, total_precipitation, plus soil_type (an
                   unregistered variable with CF metadata).
  wb2_hres.zarr    WeatherBench2 forecast: time + prediction_timedelta, 2m_temperature and
                   total_precipitation_6hr, latitude ascending, longitude 0..355.
  cosmo.zarr       COSMO/ICON-like limited area: time + step, T_2M in degC, PMSL in hPa, TOT_PREC in
                   kg m-2, CLCT in %, RELHUM_2M in an unknown unit (drawn over its own range).
  one_row.zarr     a grid with a single latitude row (refused with a reason).
  one_column.zarr  a grid with a single longitude column (refused with a reason).
  raw_datetime.zarr  zarr without xarray: time as datetime64[ns], step as timedelta64[h], no CF units.
  bad_time.zarr    garbage time units (refused with a reason; a store fault, never the client's).
"""
import json
import sys

import numpy as np
import pandas as pd
import xarray as xr
from xarray_read import read_isel


def field(shape, seed, lo, hi):
    rng = np.random.default_rng(seed)
    base = rng.random(shape)
    return (lo + (hi - lo) * base).astype("float32")


def lat_lon(nlat=19, nlon=36, descending=True, lon0=-180.0):
    lat = np.linspace(90, -90, nlat) if descending else np.linspace(-90, 90, nlat)
    lon = lon0 + np.arange(nlon) * (360.0 / nlon)
    return lat, lon


def ecmwf_oper(path):
    lat, lon = lat_lon()
    steps = pd.to_timedelta([0, 3, 6, 12], unit="h")
    dims = ("step", "latitude", "longitude")
    shape = (len(steps), len(lat), len(lon))
    tp = np.cumsum(field(shape, 3, 0, 0.002), axis=0)
    tp[0] = 0
    ds = xr.Dataset(
        {
            "t2m": (dims, field(shape, 1, 230, 310), {"units": "K", "GRIB_stepType": "instant", "GRIB_shortName": "2t"}),
            "msl": (dims, field(shape, 2, 97000, 103000), {"units": "Pa", "GRIB_stepType": "instant"}),
            "u10": (dims, field(shape, 4, -20, 20), {"units": "m s**-1", "GRIB_shortName": "10u"}),
            "i10fg": (dims, field(shape, 5, 0, 35), {"units": "m s**-1", "GRIB_shortName": "i10fg"}),
            "tp": (dims, tp, {"units": "m", "GRIB_stepType": "accum", "GRIB_shortName": "tp"}),
        },
        coords={
            "time": np.datetime64("2024-05-01T00:00", "ns"),
            "step": ("step", steps),
            "latitude": ("latitude", lat, {"units": "degrees_north"}),
            "longitude": ("longitude", lon, {"units": "degrees_east"}),
            "number": 0,
            "surface": 0.0,
            "valid_time": ("step", np.datetime64("2024-05-01T00:00", "ns") + steps),
        },
        attrs={"GRIB_centre": "ecmf", "Conventions": "CF-1.7"},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def gefs(path):
    lat, lon = lat_lon(10, 20, lon0=0.0)
    times = pd.to_datetime(["2024-05-01T00:00", "2024-05-01T06:00"])
    steps = pd.to_timedelta([0, 6, 12], unit="h")
    members = np.arange(4)
    dims = ("time", "step", "number", "latitude", "longitude")
    shape = (len(times), len(steps), len(members), len(lat), len(lon))
    tp = np.cumsum(field(shape, 13, 0, 4.0), axis=1)
    ds = xr.Dataset(
        {
            "t2m": (dims, field(shape, 11, 240, 300), {"units": "K", "GRIB_stepType": "instant"}),
            "tp": (dims, tp, {"units": "kg m**-2", "GRIB_stepType": "accum"}),
        },
        coords={
            "time": ("time", times),
            "step": ("step", steps),
            "number": ("number", members),
            "latitude": ("latitude", lat),
            "longitude": ("longitude", lon),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"t2m": {"chunks": (1, 3, 2, 10, 20)}})


def era5(path):
    lat, lon = lat_lon(19, 36, lon0=0.0)
    times = pd.date_range("2020-01-01T00:00", periods=6, freq="h")
    dims = ("time", "latitude", "longitude")
    shape = (len(times), len(lat), len(lon))
    ds = xr.Dataset(
        {
            "2m_temperature": (dims, field(shape, 21, 230, 310), {"units": "K", "long_name": "2 metre temperature"}),
            "mean_sea_level_pressure": (dims, field(shape, 22, 97000, 103000), {"units": "Pa"}),
            "total_precipitation": (dims, field(shape, 23, 0, 0.003), {"units": "m"}),
            "soil_type": (
                ("latitude", "longitude"),
                field(shape[1:], 24, 0, 7),
                {"units": "~", "long_name": "Soil type", "standard_name": "soil_type"},
            ),
        },
        coords={"time": ("time", times), "latitude": ("latitude", lat), "longitude": ("longitude", lon)},
    )
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"2m_temperature": {"chunks": (1, 19, 36)}})


def wb2_hres(path):
    lat, lon = lat_lon(19, 72, descending=False, lon0=0.0)
    times = pd.to_datetime(["2020-01-01T00:00", "2020-01-01T12:00"])
    leads = pd.to_timedelta([0, 6, 12, 18], unit="h")
    dims = ("time", "prediction_timedelta", "latitude", "longitude")
    shape = (len(times), len(leads), len(lat), len(lon))
    ds = xr.Dataset(
        {
            "2m_temperature": (dims, field(shape, 31, 230, 310), {"units": "K"}),
            "total_precipitation_6hr": (dims, field(shape, 32, 0, 0.01), {"units": "m"}),
            "10m_u_component_of_wind": (dims, field(shape, 33, -20, 20), {"units": "m/s"}),
        },
        coords={
            "time": ("time", times),
            "prediction_timedelta": ("prediction_timedelta", leads),
            "latitude": ("latitude", lat),
            "longitude": ("longitude", lon),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def cosmo(path):
    lat = np.arange(43.0, 49.01, 0.5)
    lon = np.arange(4.0, 17.01, 0.5)
    times = pd.to_datetime(["2024-05-01T00:00"])
    steps = pd.to_timedelta([0, 1, 2, 3], unit="h")
    dims = ("time", "step", "latitude", "longitude")
    shape = (len(times), len(steps), len(lat), len(lon))
    ds = xr.Dataset(
        {
            "T_2M": (dims, field(shape, 41, -10, 30), {"units": "degC"}),
            "PMSL": (dims, field(shape, 42, 990, 1030), {"units": "hPa"}),
            "TOT_PREC": (dims, np.cumsum(field(shape, 43, 0, 2), axis=1), {"units": "kg m-2"}),
            "CLCT": (dims, field(shape, 44, 0, 100), {"units": "%"}),
            "RELHUM_2M": (dims, field(shape, 45, 3, 9), {"units": "furlongs"}),
        },
        coords={
            "time": ("time", times),
            "step": ("step", steps),
            "latitude": ("latitude", lat),
            "longitude": ("longitude", lon),
        },
        attrs={"title": "COSMO-like limited area run"},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def one_row(path):
    lon = np.arange(0.0, 360.0, 10.0)
    times = pd.to_datetime(["2024-05-01T00:00"])
    dims = ("time", "latitude", "longitude")
    ds = xr.Dataset(
        {"t2m": (dims, field((1, 1, len(lon)), 51, 250, 300), {"units": "K"})},
        coords={"time": ("time", times), "latitude": ("latitude", [45.0]), "longitude": ("longitude", lon)},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def one_column(path):
    lat = np.arange(30.0, 61.0, 5.0)
    times = pd.to_datetime(["2024-05-01T00:00"])
    dims = ("time", "latitude", "longitude")
    ds = xr.Dataset(
        {"t2m": (dims, field((1, len(lat), 1), 52, 250, 300), {"units": "K"})},
        coords={"time": ("time", times), "latitude": ("latitude", lat), "longitude": ("longitude", [10.0])},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def raw_datetime(path):
    """Written by zarr itself: datetime64/timedelta64 arrays with no CF units, only their numpy dtype."""
    import zarr

    lat, lon = lat_lon(10, 20, lon0=0.0)
    root = zarr.open_group(path, mode="w")
    arrays = {
        "time": (np.array(["2024-03-01T00", "2024-03-01T12"], dtype="M8[ns]"), ["time"]),
        "step": (np.array([0, 6, 12], dtype="m8[h]"), ["step"]),
        "latitude": (lat, ["latitude"]),
        "longitude": (lon, ["longitude"]),
        "t2m": (field((2, 3, len(lat), len(lon)), 71, 250, 300), ["time", "step", "latitude", "longitude"]),
    }
    for name, (data, dims) in arrays.items():
        a = root.array(name, data, chunks=data.shape)
        a.attrs["_ARRAY_DIMENSIONS"] = dims
    root["t2m"].attrs["units"] = "K"
    zarr.consolidate_metadata(path)


def bad_time(path):
    lat, lon = lat_lon(10, 20, lon0=0.0)
    dims = ("time", "latitude", "longitude")
    ds = xr.Dataset(
        {"t2m": (dims, field((2, len(lat), len(lon)), 61, 250, 300), {"units": "K"})},
        coords={
            "time": ("time", np.array([0, 6], dtype="int64"), {"units": "fortnights after the flood"}),
            "latitude": ("latitude", lat),
            "longitude": ("longitude", lon),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


LAYOUTS = {
    "ecmwf_oper": ecmwf_oper,
    "gefs": gefs,
    "era5": era5,
    "wb2_hres": wb2_hres,
    "cosmo": cosmo,
    "one_row": one_row,
    "one_column": one_column,
    "raw_datetime": raw_datetime,
    "bad_time": bad_time,
}




if __name__ == "__main__":
    if sys.argv[1] == "write":
        for name, write in LAYOUTS.items():
            write(f"{sys.argv[2]}/{name}.zarr")
    elif sys.argv[1] == "read":
        json.dump(read_isel(json.load(sys.stdin)), sys.stdout)
    else:
        sys.exit(__doc__)
