"""Layouts xarray reads that producers write today, each written with the real writer, and read back
the way an analyst would (xarray, decoded) so tests can compare gridcast's answers on the same bytes.

usage:
  layout_stores.py write DIR        with Debian's xarray + zarr 2: DIR/<layout>.zarr for the v2 layouts
  layout_stores.py zarr3 DIR        with xarray + zarr 3 (the venv): DIR/appended.zarr, DIR/dynamical.zarr
  layout_stores.py read             queries (JSON on stdin) → answers (JSON), as producer_stores.py

Layouts (small, deterministic):
  era5_cds.zarr     the new CDS ERA5 layout: valid_time is the time dimension (no lead), pressure_level
                    in hPa, t on levels and t2m at the surface, scalar number and expver beside them.
  dateline.zarr     a regional grid across the antimeridian in -180..180: 170..178 then -180..-120.
  cmip.zarr         CMIP-style ta on plev in Pa (85000, 50000), days since 2015 (proleptic_gregorian: Debian has no cftime).
  bad_value.zarr    a time value of an absurd number of days (xarray cannot decode it either).
  gfs_buckets.zarr  cfgrib GFS: tp with GRIB_stepType accum in 6-hour buckets over 3-hourly steps.
  appended.zarr     written as v2 by xarray + zarr 3 without a fill value (fill_value null), then a time
                    appended by zarr 3 with one chunk of it never written.
  dynamical.zarr    v3, dynamical.org-style: init_time, lead_time, ingested_forecast_length saying the
                    latest run is ingested to 6 h (its later leads hold leftovers of an interrupted write).
"""
import json
import sys

import numpy as np
import pandas as pd
import xarray as xr
from xarray_read import read_isel


def field(shape, seed, lo, hi):
    rng = np.random.default_rng(seed)
    return (lo + (hi - lo) * rng.random(shape)).astype("float32")


def era5_cds(path):
    lat = np.arange(60.0, 39.9, -2.5)
    lon = np.arange(-10.0, 20.1, 2.5)
    times = pd.date_range("2024-06-01T00:00", periods=4, freq="h")
    levels = np.array([1000.0, 850.0, 500.0])
    ds = xr.Dataset(
        {
            "t": (
                ("valid_time", "pressure_level", "latitude", "longitude"),
                field((4, 3, len(lat), len(lon)), 81, 230, 300),
                {"units": "K", "GRIB_shortName": "t", "GRIB_stepType": "instant"},
            ),
            "t2m": (
                ("valid_time", "latitude", "longitude"),
                field((4, len(lat), len(lon)), 82, 260, 310),
                {"units": "K", "GRIB_shortName": "2t", "GRIB_stepType": "instant"},
            ),
        },
        coords={
            "valid_time": ("valid_time", times, {"standard_name": "time", "long_name": "time"}),
            "pressure_level": ("pressure_level", levels, {"units": "hPa", "long_name": "pressure"}),
            "latitude": ("latitude", lat, {"units": "degrees_north"}),
            "longitude": ("longitude", lon, {"units": "degrees_east"}),
            "number": 0,
            "expver": ("valid_time", np.array(["0001"] * 4)),
        },
        attrs={"GRIB_centre": "ecmf", "Conventions": "CF-1.7"},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def dateline(path):
    lat = np.arange(60.0, 49.9, -2.0)
    lon = np.concatenate([np.arange(170.0, 179.0, 2.0), np.arange(-180.0, -119.0, 2.0)])
    steps = pd.to_timedelta([0, 6], unit="h")
    dims = ("time", "step", "latitude", "longitude")
    ds = xr.Dataset(
        {"t2m": (dims, field((1, 2, len(lat), len(lon)), 91, 250, 290), {"units": "K"})},
        coords={
            "time": ("time", pd.to_datetime(["2024-06-01T00:00"])),
            "step": ("step", steps),
            "latitude": ("latitude", lat),
            "longitude": ("longitude", lon),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"t2m": {"chunks": (1, 1, 3, 20)}})


def cmip(path):
    lat = np.arange(-30.0, 30.1, 10.0)
    lon = np.arange(0.0, 360.0, 30.0)
    ds = xr.Dataset(
        {
            "ta": (
                ("time", "plev", "lat", "lon"),
                field((2, 2, len(lat), len(lon)), 101, 220, 300),
                {"units": "K", "standard_name": "air_temperature"},
            )
        },
        coords={
            "time": ("time", np.array([0.0, 0.25]), {"units": "days since 2015-01-01", "calendar": "proleptic_gregorian"}),
            "plev": ("plev", np.array([85000.0, 50000.0]), {"units": "Pa", "standard_name": "air_pressure"}),
            "lat": ("lat", lat, {"units": "degrees_north"}),
            "lon": ("lon", lon, {"units": "degrees_east"}),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def bad_value(path):
    lat = np.arange(40.0, 49.9, 2.0)
    lon = np.arange(0.0, 9.9, 2.0)
    ds = xr.Dataset(
        {"t2m": (("time", "lat", "lon"), field((2, len(lat), len(lon)), 111, 250, 300), {"units": "K"})},
        coords={
            "time": ("time", np.array([0, 10**15], dtype="int64"), {"units": "days since 2000-01-01"}),
            "lat": ("lat", lat),
            "lon": ("lon", lon),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def gfs_buckets(path):
    lat = np.arange(50.0, 39.9, -2.5)
    lon = np.arange(0.0, 20.1, 2.5)
    steps = np.arange(0, 25, 3)
    shape = (len(steps), len(lat), len(lon))
    rain = field(shape, 121, 0, 3)  # the amount falling in each 3 h step
    rain[0] = 0
    tp = np.zeros(shape, dtype="float32")
    for i, h in enumerate(steps):
        # GFS: the amount since the last multiple of 6 h before this step.
        start = 0 if h == 0 else ((h - 1) // 6) * 6
        tp[i] = sum(rain[j] for j, s in enumerate(steps) if start < s <= h)
    ds = xr.Dataset(
        {
            "tp": (
                ("step", "latitude", "longitude"),
                tp,
                {"units": "kg m**-2", "GRIB_stepType": "accum", "GRIB_shortName": "tp"},
            )
        },
        coords={
            "time": np.datetime64("2024-06-01T00:00", "ns"),
            "step": ("step", pd.to_timedelta(steps, unit="h")),
            "latitude": ("latitude", lat),
            "longitude": ("longitude", lon),
            "valid_time": ("step", np.datetime64("2024-06-01T00:00", "ns") + pd.to_timedelta(steps, unit="h")),
        },
        attrs={"GRIB_centre": "kwbc"},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


LAYOUTS = {
    "era5_cds": era5_cds,
    "dateline": dateline,
    "cmip": cmip,
    "bad_value": bad_value,
    "gfs_buckets": gfs_buckets,
}


def appended(path):
    """xarray + zarr 3: a v2 store without a fill value, appended, one chunk of the new time never written."""
    import zarr

    lat = np.linspace(50.0, 40.0, 6)
    lon = np.linspace(0.0, 10.0, 6)
    t = pd.date_range("2024-01-01", periods=2, freq="6h")
    ds = xr.Dataset(
        {"t2m": (("time", "latitude", "longitude"), field((2, 6, 6), 131, 270, 290), {"units": "K"})},
        coords={"time": ("time", t), "latitude": ("latitude", lat), "longitude": ("longitude", lon)},
    )
    enc = {"t2m": {"chunks": (1, 3, 6), "_FillValue": None}}
    ds.to_zarr(path, mode="w", zarr_format=2, consolidated=True, encoding=enc)
    more = xr.Dataset(
        {"t2m": (("time", "latitude", "longitude"), field((1, 6, 6), 132, 270, 290), {"units": "K"})},
        coords={"time": ("time", pd.to_datetime(["2024-01-01T12:00"])), "latitude": lat, "longitude": lon},
    )
    more.to_zarr(path, append_dim="time", consolidated=True)
    # A third time whose southern chunk is never written: the array grows, only the north is filled.
    arr = zarr.open_array(f"{path}/t2m", mode="r+")
    arr.resize((4, 6, 6))
    arr[3, :3, :] = field((3, 6), 133, 270, 290)
    tc = zarr.open_array(f"{path}/time", mode="r+")
    tc.resize((4,))
    tc[3] = tc[2] + (tc[2] - tc[1])
    zarr.consolidate_metadata(path, zarr_format=2)


def dynamical(path):
    """xarray + zarr 3, v3: a dynamical.org-style forecast whose latest run is ingested to 6 h only."""
    lat = np.arange(50.0, 39.9, -2.5)
    lon = np.arange(0.0, 20.1, 2.5)
    init = pd.to_datetime(["2025-01-01T00:00", "2025-01-01T06:00"])
    leads = pd.to_timedelta([0, 3, 6, 9, 12], unit="h")
    t2m = field((2, 5, len(lat), len(lon)), 141, -10, 20)
    t2m[1, 3:] = -999.0  # not ingested yet: left over from an interrupted write
    ds = xr.Dataset(
        {
            "temperature_2m": (
                ("init_time", "lead_time", "latitude", "longitude"),
                t2m,
                {"units": "degree_Celsius", "step_type": "instant"},
            ),
            "ingested_forecast_length": ("init_time", pd.to_timedelta([12, 6], unit="h")),
        },
        coords={"init_time": init, "lead_time": leads, "latitude": lat, "longitude": lon},
        attrs={"dataset_id": "noaa-gfs-forecast"},
    )
    ds.to_zarr(path, mode="w", zarr_format=3, consolidated=True)




if __name__ == "__main__":
    if sys.argv[1] == "write":
        for name, write in LAYOUTS.items():
            write(f"{sys.argv[2]}/{name}.zarr")
    elif sys.argv[1] == "zarr3":
        appended(f"{sys.argv[2]}/appended.zarr")
        dynamical(f"{sys.argv[2]}/dynamical.zarr")
    elif sys.argv[1] == "read":
        json.dump(read_isel(json.load(sys.stdin)), sys.stdout)
    else:
        sys.exit(__doc__)
