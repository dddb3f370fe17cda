"""The small layout rules producers write (issue 52), each written the way its producer writes it, and
read back the way an analyst would (xarray, decoded) so tests compare gridcast's answers on the same
bytes. Nothing is renamed after writing.

usage:
  rule_stores.py write DIR     with Debian's xarray + zarr 2: the v2 layouts below
  rule_stores.py zarr3 DIR     with xarray + zarr 3 (the venv): DIR/icon_v2.zarr
  rule_stores.py read          queries (JSON on stdin) -> answers (JSON), as layout_stores.py

Layouts (small, deterministic):
  icon_v2.zarr      zarr 3 writing zarr_format=2 (a single-run cfgrib conversion: ICON-EU, AROME, GraphCast
                    saved as v2): `time` a 1-entry axis of value 0 ("hours since" the run) and `tp` of 0 at
                    lead 0 with no fill value (Earth2Studio's tp06). zarr 3 leaves out every chunk equal to
                    its default 0, so neither the time nor tp's first lead has a stored chunk.
  meps.zarr         cf_producers.py's MEPS, unsqueezed (the reference the squeezed copy must answer as).
  meps_squeezed.zarr  MET Norway's MEPS after ds.squeeze(): height0/1/7 become scalar coordinates that
                    each variable lists in its CF `coordinates` attribute (x_wind_10m, y_wind_10m at 10 m).
  eerie.zarr        DKRZ/EERIE HEALPix output: (time, cell), no lead, crs with healpix_order "nest", a
                    scalar 2 m height; eerie_root.zarr the same opened at its own root.
  kerchunk.zarr     GRIB messages of one run concatenated along valid_time (kerchunk MultiZarrToZarr):
                    time and step are coordinates along valid_time.
  kerchunk_an.zarr  the same concat of analyses: step 0 throughout, time varying with valid_time.
  wb2_ens.zarr      WeatherBench2 IFS ENS: time, prediction_timedelta, number 1..50 (no control).
  wrfout_d01_2026-11-22_00:00:00   a store named like its wrfout file (a regular lat/lon dataset).
  plev_squeezed.zarr  cfgrib temperature on one pressure level after ds.squeeze(): isobaricInhPa = 850
                    a scalar coordinate in t's `coordinates`.
  damaged.zarr      an uncompressed v2 store (tests cut one of its chunks short).
  hrrr.zarr         Utah HRRR-Zarr: one group per level/variable, the data in a nested sub-group of the
                    same name, projection_x/y coordinates and no CRS at all.
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


LAT = np.arange(50.0, 39.9, -2.5)
LON = np.arange(0.0, 20.1, 2.5)


def icon_v2(path):
    """xarray + zarr 3 writing a v2 store, as a single-run cfgrib conversion comes out."""
    steps = pd.to_timedelta([0, 6, 12], unit="h")
    shape = (1, len(steps), len(LAT), len(LON))
    tp = np.cumsum(field(shape, 201, 0, 4), axis=1)
    tp[:, 0] = 0  # nothing has fallen at lead 0
    ds = xr.Dataset(
        {
            "t2m": (("time", "step", "latitude", "longitude"), field(shape, 202, 260, 290), {"units": "K"}),
            "tp": (("time", "step", "latitude", "longitude"), tp,
                   {"units": "kg m**-2", "GRIB_stepType": "accum", "GRIB_shortName": "tp"}),
        },
        coords={
            "time": ("time", pd.to_datetime(["2026-11-22T00:00"])),
            "step": ("step", steps),
            "latitude": ("latitude", LAT),
            "longitude": ("longitude", LON),
        },
        attrs={"GRIB_centre": "edzw"},
    )
    enc = {
        "time": {"units": "hours since 2026-11-22 00:00:00", "dtype": "int64"},
        "tp": {"_FillValue": None, "chunks": (1, 1, len(LAT), len(LON))},
        "t2m": {"_FillValue": None},
    }
    ds.to_zarr(path, mode="w", zarr_format=2, consolidated=True, encoding=enc)


def meps_squeezed(path):
    """cf_producers.py's MEPS (as MET Norway's thredds serves it, kept beside as meps.zarr), opened,
    squeezed and written again."""
    from cf_producers import meps

    src = path.replace("meps_squeezed", "meps")
    meps(src)
    ds = xr.open_zarr(src).squeeze()
    for v in ds.variables.values():
        v.encoding.pop("chunks", None)
        v.encoding.pop("preferred_chunks", None)
    ds.to_zarr(path, mode="w", consolidated=True)


def eerie(path):
    """EERIE/DKRZ HEALPix: (time, cell) daily means, crs named by grid_mapping, order spelled "nest"."""
    sys.path.insert(0, __file__.rsplit("/", 3)[0] + "/test/forecast/cells")
    from stores import healpix_nested

    nside = 8
    lat, lon = healpix_nested(nside)
    times = pd.date_range("2026-11-20", periods=3, freq="D")
    t = (273.15 + 30 * np.cos(np.radians(lat)) + 0.05 * lon + np.arange(3)[:, None]).astype("float32")
    ds = xr.Dataset(
        {"tas": (("time", "cell"), t, {"units": "K", "standard_name": "air_temperature", "grid_mapping": "crs"})},
        coords={
            "time": ("time", times),
            "height": ((), 2.0, {"standard_name": "height", "units": "m", "positive": "up"}),
            "crs": ((), 0, {"grid_mapping_name": "healpix", "healpix_nside": nside, "healpix_order": "nest"}),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"tas": {"chunks": (1, 256)}})
    ds.to_zarr(path.replace("eerie", "eerie_root"), mode="w", consolidated=True)


def kerchunk(path, analysis=False):
    """A kerchunk MultiZarrToZarr concat of GRIB messages along valid_time: time and step along it."""
    n = 4
    valid = pd.date_range("2026-11-22T00:00", periods=n, freq="6h")
    if analysis:
        times, steps = valid, pd.to_timedelta([0] * n, unit="h")
    else:
        times, steps = pd.DatetimeIndex([valid[0]] * n), valid - valid[0]
    ds = xr.Dataset(
        {"t2m": (("valid_time", "latitude", "longitude"), field((n, len(LAT), len(LON)), 211 + analysis, 260, 290),
                 {"units": "K", "GRIB_shortName": "2t", "GRIB_stepType": "instant"})},
        coords={
            "valid_time": ("valid_time", valid, {"standard_name": "time"}),
            "time": ("valid_time", times, {"standard_name": "forecast_reference_time"}),
            "step": ("valid_time", steps, {"standard_name": "forecast_period"}),
            "latitude": ("latitude", LAT, {"units": "degrees_north"}),
            "longitude": ("longitude", LON, {"units": "degrees_east"}),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def wb2_ens(path):
    """WeatherBench2's IFS ENS: members numbered 1..50, no control (member 0) among them."""
    members = np.arange(1, 51)
    leads = pd.to_timedelta([0, 24], unit="h")
    dims = ("time", "prediction_timedelta", "number", "latitude", "longitude")
    shape = (1, 2, len(members), len(LAT), len(LON))
    ds = xr.Dataset(
        {"2m_temperature": (dims, field(shape, 221, 260, 290), {"units": "K"})},
        coords={
            "time": ("time", pd.to_datetime(["2026-11-22T00:00"])),
            "prediction_timedelta": ("prediction_timedelta", leads),
            "number": ("number", members),
            "latitude": ("latitude", LAT),
            "longitude": ("longitude", LON),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def wrfout(path):
    """A store named like the wrfout file it came from (here a plain lat/lon dataset)."""
    ds = xr.Dataset(
        {"t2m": (("time", "latitude", "longitude"), field((2, len(LAT), len(LON)), 231, 260, 290), {"units": "K"})},
        coords={
            "time": ("time", pd.date_range("2026-11-22T00:00", periods=2, freq="h")),
            "latitude": ("latitude", LAT),
            "longitude": ("longitude", LON),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def hrrr(path):
    """Utah's HRRR-Zarr: <level>/<var>/<level>/<var>, projection_x/y in metres, no CRS anywhere."""
    import zarr

    x = -2697520.0 + 3000.0 * np.arange(6)
    y = -1587306.0 + 3000.0 * np.arange(5)
    root = zarr.open_group(path, mode="w")
    for level, var, units, seed in [("2m_above_ground", "TMP", "K", 241), ("surface", "PRES", "Pa", 242)]:
        inner = root.require_group(f"{level}/{var}/{level}")
        a = inner.create_dataset(var, data=field((len(y), len(x)), seed, 250, 300), chunks=(5, 6))
        a.attrs.update({"_ARRAY_DIMENSIONS": ["projection_y_coordinate", "projection_x_coordinate"],
                        "units": units, "long_name": var, "GRIB_PARAM": var})
        for name, vals in [("projection_x_coordinate", x), ("projection_y_coordinate", y)]:
            c = root.require_group(f"{level}/{var}").create_dataset(name, data=vals)
            c.attrs.update({"_ARRAY_DIMENSIONS": [name], "units": "m"})
    zarr.consolidate_metadata(path)


def damaged(path):
    """A plain v2 store without compression whose chunk a test then cuts short (a real decode failure)."""
    ds = xr.Dataset(
        {"t2m": (("time", "latitude", "longitude"), field((2, len(LAT), len(LON)), 251, 260, 290), {"units": "K"})},
        coords={
            "time": ("time", pd.date_range("2026-11-22T00:00", periods=2, freq="h")),
            "latitude": ("latitude", LAT),
            "longitude": ("longitude", LON),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"t2m": {"compressor": None, "chunks": (1, 5, 9)}})


def plev_squeezed(path):
    """cfgrib's pressure-level dataset of one level, after ds.squeeze(): isobaricInhPa becomes a scalar
    coordinate named in each variable's `coordinates`."""
    dims = ("time", "isobaricInhPa", "latitude", "longitude")
    shape = (2, 1, len(LAT), len(LON))
    ds = xr.Dataset(
        {"t": (dims, field(shape, 261, 230, 280), {"units": "K", "GRIB_shortName": "t", "GRIB_stepType": "instant"})},
        coords={
            "time": ("time", pd.date_range("2026-11-22T00:00", periods=2, freq="6h")),
            "isobaricInhPa": ("isobaricInhPa", [850.0], {"units": "hPa", "standard_name": "air_pressure"}),
            "latitude": ("latitude", LAT),
            "longitude": ("longitude", LON),
        },
    )
    ds.squeeze().to_zarr(path, mode="w", consolidated=True)


LAYOUTS = {
    "damaged": damaged,
    "plev_squeezed": plev_squeezed,
    "meps_squeezed": meps_squeezed,
    "eerie": eerie,
    "kerchunk": kerchunk,
    "kerchunk_an": lambda p: kerchunk(p, analysis=True),
    "wb2_ens": wb2_ens,
    "hrrr": hrrr,
}

if __name__ == "__main__":
    if sys.argv[1] == "write":
        for name, write in LAYOUTS.items():
            write(f"{sys.argv[2]}/{name}.zarr")
        wrfout(f"{sys.argv[2]}/wrfout_d01_2026-11-22_00:00:00")
    elif sys.argv[1] == "zarr3":
        icon_v2(f"{sys.argv[2]}/icon_v2.zarr")
    elif sys.argv[1] == "read":
        json.dump(read_isel(json.load(sys.stdin)), sys.stdout)
    else:
        sys.exit(__doc__)
