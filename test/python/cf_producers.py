"""Write stores exactly as CF-first producers lay them out, nothing renamed, and read them back with
xarray (+ pyproj for the projected ones) so tests compare gridcast's answers with the analyst's.

usage:
  cf_producers.py write DIR [LAYOUT ...]   writes DIR/<layout>.zarr (every layout when none named)
  cf_producers.py read                     queries on stdin, as producer_stores.py read

Layouts:
  meps         MET Norway MEPS as its files are opened and saved with xarray: valid times in `time`,
               the run in a scalar forecast_reference_time, size-1 height0/height1/height7/
               height_above_msl dims, Lambert conformal x/y with projection_lambert, CF names
               (air_temperature_2m, x_wind_10m/y_wind_10m, air_pressure_at_sea_level,
               precipitation_amount_acc) with standard_name and units.
  graphcast    GraphCast rollout output as saved: `time` a timedelta lead, `datetime` (batch, time)
               the valid time, a size-1 batch dim, lat ascending, ERA5 long names, no units.
  ukv          Met Office UKV-like: scalar forecast_reference_time, 1-D time with forecast_period
               along it, scalar height coordinates, Lambert azimuthal equal-area projection_x/y,
               CF names (air_temperature, wind_speed, air_pressure_at_sea_level...), precipitation
               as a rate in m s-1 (lwe_precipitation_rate).
  bom          BoM ACCESS-like on lat/lon: forecast_reference_time 1-D of one, `time` valid times,
               names temp_scrn, dewpt_scrn, mslp, uwnd10m, vwnd10m, accum_prcp (kg m-2,
               cell_methods time: sum), each with its CF standard_name.
  e2s_zarr2    Earth2Studio's Zarr IO with an ensemble: ensemble, time, lead_time, lat, lon;
               t2m, u10m, v10m, msl, tp06.
"""
import json
import sys

import numpy as np
import pandas as pd
import xarray as xr

RUN = np.datetime64("2024-05-01T06:00", "ns")


def field(shape, seed, lo, hi):
    rng = np.random.default_rng(seed)
    return (lo + (hi - lo) * rng.random(shape)).astype("float32")


def lambert_meps():
    from pyproj import CRS, Transformer

    attrs = {
        "grid_mapping_name": "lambert_conformal_conic",
        "standard_parallel": [63.3, 63.3],
        "longitude_of_central_meridian": 15.0,
        "latitude_of_projection_origin": 63.3,
        "earth_radius": 6371000.0,
        "proj4": "+proj=lcc +lat_0=63.3 +lon_0=15 +lat_1=63.3 +lat_2=63.3 +no_defs +R=6.371e+06",
    }
    crs = CRS.from_cf(attrs)
    x = -600000.0 + 50000.0 * np.arange(24)
    y = -700000.0 + 50000.0 * np.arange(30)
    xx, yy = np.meshgrid(x, y)
    lon, lat = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True).transform(xx, yy)
    return attrs, x, y, lat, lon


def meps(path):
    attrs, x, y, lat, lon = lambert_meps()
    times = RUN + np.arange(4) * np.timedelta64(1, "h")
    ny, nx = len(y), len(x)
    gm = {"grid_mapping": "projection_lambert"}

    def var(h, seed, lo, hi, a):
        return (("time", h, "y", "x"), field((len(times), 1, ny, nx), seed, lo, hi), {**a, **gm})

    acc = np.cumsum(field((len(times), 1, ny, nx), 5, 0, 2), axis=0)
    acc[0] = 0
    ds = xr.Dataset(
        {
            "air_temperature_2m": var("height1", 1, 250, 300, {"standard_name": "air_temperature", "units": "K"}),
            "x_wind_10m": var("height7", 2, -15, 15, {"standard_name": "x_wind", "units": "m/s"}),
            "y_wind_10m": var("height7", 3, -15, 15, {"standard_name": "y_wind", "units": "m/s"}),
            "air_pressure_at_sea_level": var(
                "height_above_msl", 4, 97000, 103000, {"standard_name": "air_pressure_at_sea_level", "units": "Pa"}
            ),
            "precipitation_amount_acc": (
                ("time", "height0", "y", "x"),
                acc,
                {"standard_name": "precipitation_amount", "units": "kg/m^2", "long_name": "Accumulated precipitation",
                 **gm},
            ),
            "projection_lambert": ((), np.int32(0), attrs),
        },
        coords={
            "time": ("time", times, {"standard_name": "time", "long_name": "time"}),
            "forecast_reference_time": ((), RUN, {"standard_name": "forecast_reference_time"}),
            "height0": ("height0", [0.0], {"standard_name": "height", "units": "m", "positive": "up"}),
            "height1": ("height1", [2.0], {"standard_name": "height", "units": "m", "positive": "up"}),
            "height7": ("height7", [10.0], {"standard_name": "height", "units": "m", "positive": "up"}),
            "height_above_msl": ("height_above_msl", [0.0], {"standard_name": "height", "units": "m"}),
            "x": ("x", x, {"standard_name": "projection_x_coordinate", "units": "m"}),
            "y": ("y", y, {"standard_name": "projection_y_coordinate", "units": "m"}),
            "latitude": (("y", "x"), lat, {"standard_name": "latitude", "units": "degree_north"}),
            "longitude": (("y", "x"), lon, {"standard_name": "longitude", "units": "degree_east"}),
        },
        attrs={"title": "MEPS 2.5km deterministic", "institution": "Norwegian Meteorological Institute",
               "Conventions": "CF-1.6"},
    )
    enc = {"time": {"units": "seconds since 1970-01-01 00:00:00 +00:00"},
           "forecast_reference_time": {"units": "seconds since 1970-01-01 00:00:00 +00:00"}}
    ds.to_zarr(path, mode="w", consolidated=True, encoding=enc)


def graphcast(path):
    lat = np.linspace(-90, 90, 19)
    lon = np.arange(0.0, 360.0, 10.0)
    leads = pd.to_timedelta([6, 12, 18], unit="h").values
    run = np.datetime64("2024-01-01T00:00", "ns")
    dims = ("batch", "time", "lat", "lon")
    shape = (1, len(leads), len(lat), len(lon))
    ds = xr.Dataset(
        {
            "2m_temperature": (dims, field(shape, 11, 230, 310)),
            "mean_sea_level_pressure": (dims, field(shape, 12, 97000, 103000)),
            "10m_u_component_of_wind": (dims, field(shape, 13, -20, 20)),
            "total_precipitation_6hr": (dims, field(shape, 14, 0, 0.01)),
            "temperature": (("batch", "time", "level", "lat", "lon"), field((1, len(leads), 2, len(lat), len(lon)), 15,
                                                                             200, 300)),
        },
        coords={
            "lat": lat,
            "lon": lon,
            "level": [500, 850],
            "time": ("time", leads),
            "datetime": (("batch", "time"), (run + leads)[None, :]),
        },
    )
    ds.to_zarr(path, mode="w", consolidated=True)


LAYOUTS = {"meps": meps, "graphcast": graphcast}

if __name__ == "__main__":
    if sys.argv[1] == "write":
        for name in sys.argv[3:] or LAYOUTS:
            LAYOUTS[name](f"{sys.argv[2]}/{name}.zarr")
    elif sys.argv[1] == "read":
        from xarray_read import read_isel

        json.dump(read_isel(json.load(sys.stdin)), sys.stdout)
    else:
        sys.exit(__doc__)
