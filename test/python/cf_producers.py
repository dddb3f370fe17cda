"""Write stores exactly as CF-first producers lay them out, nothing renamed, and read them back with
xarray (+ pyproj for the projected ones) so tests compare gridcast's answers with the analyst's.

usage:
  cf_producers.py write DIR [LAYOUT ...]   writes DIR/<layout>.zarr (every layout when none named)
  cf_producers.py read                     queries on stdin, as producer_stores.py read
  cf_producers.py project                  [{store, var, lat, lon}]: the projected node's values
  cf_producers.py at                       [{store, var, iy, ix, isel}]: a node's lat/lon (pyproj for a
                                           projected grid) and its values (the dims left, C order)
  cf_producers.py box                      [{store, var, isel, ys, xs}]: the values at those y/x (or
                                           lat/lon) coordinates, row by row
  cf_producers.py winds                    [{store, u, v, isel, ys, xs}]: grid-relative components in an
                                           index window turned to east/north by pyproj's bearing of grid north
  cf_producers.py positions                [{store, var, points}]: each point's fractional (x, y) index
  cf_producers.py plane                    [{store, var, isel, headers}]: a 2-D field, rows south to north

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
  e2s_zarr2    Earth2Studio's Zarr IO with an ensemble, zarr 2 (Debian's zarr): ensemble, time,
               lead_time, lat, lon as numpy datetime64/timedelta64 arrays; t2m, u10m, v10m, msl, tp06.
  twice        two arrays meaning 2 m air temperature by their CF description, two aliases of msl
               (both refused, named), sp named exactly beside surface_pressure (sp served).
  e2s_zarr3    the same with zarr 3 (the venv): numpy.datetime64/numpy.timedelta64 data types.
  ens_<name>   a small ensemble whose member dimension is named <name> (member, number, realization,
               ensemble, ensemble_member), with no attribute saying so.
  fp_axis      CF run × forecast_period axes (as Iris saves a stack of runs): forecast_reference_time
               and forecast_period dimensions, the valid time a 2-D `time` coordinate on both.
  flat         a field flattened onto a `values` cell axis with nothing saying where the cells lie (a
               layout gridcast recognises as cells but cannot place: refused by name).
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


def ukv(path):
    from pyproj import CRS

    attrs = {
        "grid_mapping_name": "lambert_azimuthal_equal_area",
        "longitude_of_projection_origin": -2.5,
        "latitude_of_projection_origin": 54.9,
        "false_easting": 0.0,
        "false_northing": 0.0,
        "semi_major_axis": 6378137.0,
        "inverse_flattening": 298.257222101,
    }
    CRS.from_cf(attrs)  # the mapping is one pyproj reads
    x = -400000.0 + 40000.0 * np.arange(20)
    y = -500000.0 + 40000.0 * np.arange(26)
    times = RUN + np.arange(3) * np.timedelta64(1, "h")
    dims = ("time", "projection_y_coordinate", "projection_x_coordinate")
    shape = (len(times), len(y), len(x))
    gm = {"grid_mapping": "lambert_azimuthal_equal_area"}
    ds = xr.Dataset(
        {
            "air_temperature": (dims, field(shape, 21, 260, 300), {"standard_name": "air_temperature", "units": "K",
                                                                    **gm}),
            "air_pressure_at_sea_level": (dims, field(shape, 22, 98000, 103000),
                                          {"standard_name": "air_pressure_at_sea_level", "units": "Pa", **gm}),
            "wind_speed": (dims, field(shape, 23, 0, 20), {"standard_name": "wind_speed", "units": "m s-1", **gm}),
            "precipitation_rate": (dims, field(shape, 24, 0, 3e-6),
                                   {"standard_name": "lwe_precipitation_rate", "units": "m s-1", **gm}),
            "lambert_azimuthal_equal_area": ((), np.int32(0), attrs),
        },
        coords={
            "time": ("time", times, {"standard_name": "time", "axis": "T"}),
            "forecast_reference_time": ((), RUN, {"standard_name": "forecast_reference_time"}),
            "forecast_period": ("time", (times - RUN).astype("timedelta64[s]"), {"standard_name": "forecast_period"}),
            "height": ((), 1.5, {"standard_name": "height", "units": "m", "positive": "up"}),
            "projection_x_coordinate": ("projection_x_coordinate", x,
                                        {"standard_name": "projection_x_coordinate", "units": "m", "axis": "X"}),
            "projection_y_coordinate": ("projection_y_coordinate", y,
                                        {"standard_name": "projection_y_coordinate", "units": "m", "axis": "Y"}),
        },
        attrs={"source": "Met Office Unified Model", "Conventions": "CF-1.7, UKMO-1.0"},
    )
    # Only the surface fields carry the 1.5 m height coordinate, as the Met Office files do.
    for v in ("air_temperature",):
        ds[v].encoding["coordinates"] = "forecast_period forecast_reference_time height"
    for v in ("air_pressure_at_sea_level", "wind_speed", "precipitation_rate"):
        ds[v].encoding["coordinates"] = "forecast_period forecast_reference_time"
    ds.to_zarr(path, mode="w", consolidated=True)


def bom(path):
    lat = np.arange(-44.0, -9.9, 2.0)
    lon = np.arange(112.0, 154.1, 2.0)
    times = RUN + np.arange(0, 13, 3) * np.timedelta64(1, "h")
    members = np.arange(3)
    dims = ("time", "ens", "lat", "lon")
    shape = (len(times), len(members), len(lat), len(lon))
    acc = np.cumsum(field(shape, 36, 0, 3), axis=0)
    scrn = {"coordinates": "height"}
    ds = xr.Dataset(
        {
            "temp_scrn": (dims, field(shape, 31, 280, 310), {"standard_name": "air_temperature", "units": "K"}),
            "dewpt_scrn": (dims, field(shape, 32, 270, 295), {"standard_name": "dew_point_temperature", "units": "K"}),
            "mslp": (dims, field(shape, 33, 99000, 103000), {"standard_name": "air_pressure_at_sea_level",
                                                             "units": "Pa"}),
            "uwnd10m": (dims, field(shape, 34, -15, 15), {"standard_name": "eastward_wind", "units": "m s-1"}),
            "ttl_cld": (dims, field(shape, 35, 0, 1), {"standard_name": "cloud_area_fraction", "units": "1"}),
            "accum_prcp": (dims, acc, {"standard_name": "precipitation_amount", "units": "kg m-2",
                                       "cell_methods": "time: sum"}),
            "av_temp_scrn": (dims, field(shape, 37, 280, 310), {"standard_name": "air_temperature", "units": "K",
                                                                "cell_methods": "time: mean"}),
            "topog": (("lat", "lon"), field(shape[2:], 38, 0, 2000), {"standard_name": "surface_altitude",
                                                                      "units": "m"}),
        },
        coords={
            "time": ("time", times, {"standard_name": "time"}),
            "forecast_reference_time": ("forecast_reference_time", [RUN],
                                        {"standard_name": "forecast_reference_time"}),
            "ens": ("ens", members, {"standard_name": "realization"}),
            "height": ((), 1.5, {"standard_name": "height", "units": "m"}),
            "lat": ("lat", lat, {"standard_name": "latitude", "units": "degrees_north"}),
            "lon": ("lon", lon, {"standard_name": "longitude", "units": "degrees_east"}),
        },
        attrs={"institution": "Bureau of Meteorology (BoM-like test layout)"},
    )
    for v in ("temp_scrn", "dewpt_scrn", "av_temp_scrn"):
        ds[v].encoding["coordinates"] = "height"
    ds.to_zarr(path, mode="w", consolidated=True)


def e2s(path, fmt):
    """Earth2Studio's ZarrBackend: zarr itself writes every array, times as numpy datetime64 and
    timedelta64 (zarr 3: its numpy.datetime64/numpy.timedelta64 data types), no CF attributes."""
    import zarr

    lat = np.linspace(90, -90, 19)
    lon = np.arange(0.0, 360.0, 10.0)
    coords = {
        "ensemble": np.arange(3),
        "time": np.array(["2024-06-01T00:00", "2024-06-01T12:00"], dtype="datetime64[ns]"),
        "lead_time": np.array([0, 6, 12], dtype="timedelta64[h]").astype("timedelta64[ns]"),
        "lat": lat,
        "lon": lon,
    }
    dims = list(coords)
    shape = tuple(len(c) for c in coords.values())
    ranges = {"t2m": (240, 310), "u10m": (-20, 20), "v10m": (-20, 20), "msl": (97000, 103000), "tp06": (0, 0.01)}
    root = zarr.open_group(path, mode="w", **({"zarr_format": fmt} if fmt == 3 else {}))

    def put(name, data, names):
        if fmt == 3:
            a = root.create_array(name, shape=data.shape, chunks=data.shape, dtype=data.dtype, dimension_names=names)
            a[...] = data
        else:
            a = root.create_dataset(name, data=data, chunks=data.shape)
            a.attrs["_ARRAY_DIMENSIONS"] = names

    for name, values in coords.items():
        put(name, values, [name])
    for k, (name, (lo, hi)) in enumerate(ranges.items()):
        put(name, field(shape, 60 + k, lo, hi), dims)
    zarr.consolidate_metadata(path)


def e2s_zarr2(path):
    e2s(path, 2)


def e2s_zarr3(path):
    e2s(path, 3)


def twice(path):
    """Two arrays whose CF meaning is the same variable (2 m air temperature), two aliases of msl
    (refused, each naming the other), and sp beside an alias of it (the exact name is served)."""
    lat = np.arange(40.0, 50.1, 1.0)
    lon = np.arange(0.0, 10.1, 1.0)
    times = RUN + np.arange(2) * np.timedelta64(1, "h")
    dims = ("time", "lat", "lon")
    shape = (len(times), len(lat), len(lon))
    t = {"standard_name": "air_temperature", "units": "K"}
    ds = xr.Dataset(
        {
            "screen_temperature": (dims, field(shape, 81, 270, 300), t),
            "temperature_bias_corrected": (dims, field(shape, 82, 270, 300), t),
            "mslp": (dims, field(shape, 83, 98000, 103000), {"units": "Pa"}),
            "prmsl": (dims, field(shape, 84, 98000, 103000), {"units": "Pa"}),
            "sp": (dims, field(shape, 85, 90000, 103000), {"units": "Pa"}),
            "surface_pressure": (dims, field(shape, 86, 90000, 103000), {"units": "Pa"}),
        },
        coords={
            "time": ("time", times, {"standard_name": "time"}),
            "forecast_reference_time": ((), RUN, {"standard_name": "forecast_reference_time"}),
            "height": ((), 2.0, {"standard_name": "height", "units": "m"}),
            "lat": lat,
            "lon": lon,
        },
    )
    for v in ("screen_temperature", "temperature_bias_corrected"):
        ds[v].encoding["coordinates"] = "forecast_reference_time height"
    ds.to_zarr(path, mode="w", consolidated=True)


def flat(path):
    times = RUN + np.arange(2) * np.timedelta64(1, "h")
    ds = xr.Dataset(
        {"t2m": (("time", "values"), field((2, 50), 91, 260, 300), {"units": "K"})},
        coords={"time": ("time", times)},
    )
    ds.to_zarr(path, mode="w", consolidated=True)


def fp_axis(path):
    runs = RUN + np.arange(2) * np.timedelta64(6, "h")
    fp = np.array([0, 3, 6], dtype="timedelta64[h]").astype("timedelta64[ns]")
    lat = np.arange(50.0, 56.1, 2.0)
    lon = np.arange(0.0, 8.1, 2.0)
    dims = ("forecast_reference_time", "forecast_period", "lat", "lon")
    ds = xr.Dataset(
        {"air_temperature": (dims, field((2, 3, len(lat), len(lon)), 97, 260, 300),
                             {"standard_name": "air_temperature", "units": "K"})},
        coords={
            "forecast_reference_time": ("forecast_reference_time", runs, {"standard_name": "forecast_reference_time"}),
            "forecast_period": ("forecast_period", fp, {"standard_name": "forecast_period"}),
            "time": (dims[:2], runs[:, None] + fp[None, :], {"standard_name": "time"}),
            "height": ((), 2.0, {"standard_name": "height", "units": "m"}),
            "lat": ("lat", lat, {"standard_name": "latitude", "units": "degrees_north"}),
            "lon": ("lon", lon, {"standard_name": "longitude", "units": "degrees_east"}),
        },
    )
    ds["air_temperature"].encoding["coordinates"] = "height time"
    ds.to_zarr(path, mode="w", consolidated=True)


ENSEMBLE_DIMS = ["member", "number", "realization", "ensemble", "ensemble_member"]


def ensemble_named(dim):
    def write(path):
        lat = np.arange(40.0, 46.1, 2.0)
        lon = np.arange(0.0, 8.1, 2.0)
        times = RUN + np.arange(2) * np.timedelta64(1, "h")
        shape = (len(times), 3, len(lat), len(lon))
        ds = xr.Dataset(
            {"t2m": (("time", dim, "lat", "lon"), field(shape, 95, 260, 300), {"units": "K"})},
            coords={"time": ("time", times), "forecast_reference_time": ((), RUN), dim: (dim, np.arange(3)),
                    "lat": lat, "lon": lon},
        )
        ds.to_zarr(path, mode="w", consolidated=True)

    return write


def project(queries):
    """Each query: store, var and a node's lat/lon; pyproj projects it into the variable's grid
    mapping and xarray reads the values at the node it lands on, with how far (m) it lands from it."""
    from pyproj import CRS, Transformer

    out = []
    for q in queries:
        ds = xr.open_zarr(q["store"], consolidated=True)
        da = ds[q["var"]]
        crs = CRS.from_cf(ds[da.attrs.get("grid_mapping") or da.encoding["grid_mapping"]].attrs)
        ydim, xdim = da.dims[-2], da.dims[-1]
        x, y = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(q["lon"], q["lat"])
        ix = int(np.argmin(np.abs(ds[xdim].values - x)))
        iy = int(np.argmin(np.abs(ds[ydim].values - y)))
        miss = float(np.hypot(ds[xdim].values[ix] - x, ds[ydim].values[iy] - y))
        values = da.isel({xdim: ix, ydim: iy}).values.astype("float64").ravel().tolist()
        out.append({"ix": ix, "iy": iy, "miss_m": miss, "values": values})
    return out


def crs_of(ds, da):
    from pyproj import CRS

    gm = da.attrs.get("grid_mapping") or da.encoding.get("grid_mapping")
    return CRS.from_cf(ds[gm].attrs) if gm else None


def at(queries):
    from pyproj import Transformer

    out = []
    for q in queries:
        ds = xr.open_zarr(q["store"], consolidated=True)
        da = ds[q["var"]]
        ydim, xdim = da.dims[-2], da.dims[-1]
        y, x = float(ds[ydim].values[q["iy"]]), float(ds[xdim].values[q["ix"]])
        crs = crs_of(ds, da)
        if crs is not None:
            x, y = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True).transform(x, y)
        values = da.isel({**q.get("isel", {}), ydim: q["iy"], xdim: q["ix"]}).values
        out.append({"lat": y, "lon": x, "values": values.astype("float64").ravel().tolist()})
    return out


def box(queries):
    out = []
    for q in queries:
        ds = xr.open_zarr(q["store"], consolidated=True)
        da = ds[q["var"]].isel(q.get("isel", {}))
        ydim, xdim = da.dims[-2], da.dims[-1]
        # The coordinates as stored: xarray masks Earth2Studio's zarr 2 latitude 0 (zarr's default
        # fill value), which would leave a row unfindable.
        raw = xr.open_zarr(q["store"], consolidated=True, mask_and_scale=False)
        yv, xv = raw[ydim].values.astype("float64"), raw[xdim].values.astype("float64")
        xs = np.asarray(q["xs"], dtype="float64")
        if crs_of(ds, ds[q["var"]]) is None and xv.max() > 180:
            xs = xs % 360

        def nearest(axis, targets):
            idx = [int(np.argmin(np.abs(axis - t))) for t in targets]
            assert all(abs(axis[i] - t) < 1e-3 for i, t in zip(idx, targets)), (axis, targets)
            return idx

        sel = da.isel({ydim: nearest(yv, q["ys"]), xdim: nearest(xv, xs)})
        out.append(sel.squeeze().values.astype("float64").ravel().tolist())
    return out


def bearings_of(ds, da, crs, iy, ix):
    """Bearing (degrees clockwise from true north) of the grid's +y axis at nodes: the azimuth,
    on the CRS's own ellipsoid, towards a point a tenth of a cell up in y."""
    from pyproj import Transformer

    ydim, xdim = da.dims[-2], da.dims[-1]
    y, x = ds[ydim].values, ds[xdim].values
    xx, yy = np.meshgrid(x[ix[0]:ix[1]], y[iy[0]:iy[1]])
    to_geo = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    lo1, la1 = to_geo.transform(xx, yy)
    lo2, la2 = to_geo.transform(xx, yy + 0.1 * abs(y[1] - y[0]))
    az, _, _ = crs.get_geod().inv(lo1, la1, lo2, la2)
    return np.radians(az)


def winds(queries):
    out = []
    for q in queries:
        ds = xr.open_zarr(q["store"], consolidated=True)
        u, v = ds[q["u"]], ds[q["v"]]
        ydim, xdim = u.dims[-2], u.dims[-1]
        (y0, y1), (x0, x1) = q["ys"], q["xs"]
        sel = {**q.get("isel", {}), ydim: slice(y0, y1), xdim: slice(x0, x1)}
        uu = u.isel(sel).values.astype("float64")
        vv = v.isel(sel).values.astype("float64")
        b = bearings_of(ds, u, crs_of(ds, u), (y0, y1), (x0, x1))
        east = uu * np.cos(b) + vv * np.sin(b)
        north = -uu * np.sin(b) + vv * np.cos(b)
        out.append({"east": east.ravel().tolist(), "north": north.ravel().tolist(),
                    "bearing_deg": np.degrees(b).ravel().tolist()})
    return out


def positions(queries):
    from pyproj import Transformer

    out = []
    for q in queries:
        ds = xr.open_zarr(q["store"], consolidated=True)
        da = ds[q["var"]]
        ydim, xdim = da.dims[-2], da.dims[-1]
        y, x = ds[ydim].values, ds[xdim].values
        crs = crs_of(ds, da)
        lat, lon = np.asarray(q["points"], dtype="float64").reshape(-1, 2).T
        if crs is not None:
            gx, gy = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
        else:
            gx, gy = (lon % 360 if x.max() > 180 else lon), lat
        fx, fy = (gx - x[0]) / (x[1] - x[0]), (gy - y[0]) / (y[1] - y[0])
        out.append(np.stack([fx, fy], axis=1).tolist())
    return out


def plane(queries):
    """A 2-D field (the dims left after isel, size-1 ones dropped), rows south to north."""
    from xarray_read import opener

    open_store = opener(consolidated=None)
    out = []
    for q in queries:
        ds = open_store(q)
        da = ds[q["var"]]
        da = da.isel({k: i for k, i in q.get("isel", {}).items() if k in da.dims}).squeeze(drop=True)
        # Rows south to north by the axis' ends, not by sorting: xarray may read a coordinate value as
        # missing (Earth2Studio's zarr 2 latitude 0 is its default fill value).
        y = ds[da.dims[-2]].values
        values = da.values[::-1] if y[0] > y[-1] else da.values
        out.append({"dims": list(ds[q["var"]].dims), "values": values.astype("float64").ravel().tolist(),
                    "attrs": {k: v for k, v in ds[q["var"]].attrs.items() if isinstance(v, (str, int, float))}})
    return out


LAYOUTS = {"twice": twice, "meps": meps, "graphcast": graphcast, "ukv": ukv, "bom": bom, "e2s_zarr2": e2s_zarr2,
           "e2s_zarr3": e2s_zarr3, "flat": flat, "fp_axis": fp_axis, **{f"ens_{d}": ensemble_named(d) for d in ENSEMBLE_DIMS}}

if __name__ == "__main__":
    if sys.argv[1] == "write":
        for name in sys.argv[3:] or LAYOUTS:
            LAYOUTS[name](f"{sys.argv[2]}/{name}.zarr")
    elif sys.argv[1] == "read":
        from xarray_read import read_isel

        json.dump(read_isel(json.load(sys.stdin)), sys.stdout)
    elif sys.argv[1] in ("project", "at", "box", "winds", "positions", "plane"):
        mode = {"project": project, "at": at, "box": box, "winds": winds, "positions": positions, "plane": plane}
        json.dump(mode[sys.argv[1]](json.load(sys.stdin)), sys.stdout)
    else:
        sys.exit(__doc__)
