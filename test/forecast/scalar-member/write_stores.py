# One ensemble member saved alone, its member a scalar coordinate, as producers leave it (Debian
# xarray + zarr 2, no renaming):
#   mogreps  the Met Office's MOGREPS-G as iris/xarray write one member: valid times along `time`, a
#            scalar forecast_reference_time, a scalar 1.5 m `height` and a scalar `realization` (12),
#            all named in the variable's CF `coordinates`
#   cfgrib   cfgrib's open of one perturbed member of an ENS GRIB: scalar `number` (7) beside
#            scalar `time`, `step` on its own axis
# and prints what xarray reads at one node of each, for the test to compare.
import json
import sys

import numpy as np
import xarray as xr

out = sys.argv[1]
lat = np.linspace(50.0, 40.0, 11)
lon = np.linspace(0.0, 10.0, 11)
rng = np.random.default_rng(3)
t = (280 + rng.normal(size=(3, 11, 11))).astype("float32")
valid = np.datetime64("2025-06-01T00:00", "ns") + np.arange(3) * np.timedelta64(3, "h")

mog = xr.Dataset(
    {"air_temperature": (("time", "latitude", "longitude"), t,
                         {"standard_name": "air_temperature", "units": "K"})},
    coords={
        "time": ("time", valid, {"standard_name": "time"}),
        "forecast_reference_time": ((), np.datetime64("2025-06-01T00:00", "ns"),
                                    {"standard_name": "forecast_reference_time"}),
        "height": ((), 1.5, {"standard_name": "height", "units": "m", "positive": "up"}),
        "realization": ((), np.int32(12), {"standard_name": "realization", "units": "1"}),
        "latitude": ("latitude", lat, {"standard_name": "latitude", "units": "degrees_north"}),
        "longitude": ("longitude", lon, {"standard_name": "longitude", "units": "degrees_east"}),
    },
    attrs={"source": "Met Office Unified Model", "institution": "Met Office", "Conventions": "CF-1.7"},
)
mog.to_zarr(f"{out}/mogreps.zarr", mode="w")

grib = xr.Dataset(
    {"t2m": (("step", "latitude", "longitude"), t + 1, {"units": "K", "GRIB_shortName": "2t"})},
    coords={
        "number": ((), np.int64(7), {"long_name": "ensemble member numerical id", "units": "1",
                                     "standard_name": "realization"}),
        "time": ((), np.datetime64("2025-06-01T00:00", "ns"), {"standard_name": "forecast_reference_time"}),
        "step": ("step", (np.arange(3) * np.timedelta64(3, "h")).astype("timedelta64[ns]"),
                 {"standard_name": "forecast_period"}),
        "heightAboveGround": ((), 2.0, {"standard_name": "height", "units": "m"}),
        "latitude": ("latitude", lat, {"standard_name": "latitude", "units": "degrees_north"}),
        "longitude": ("longitude", lon, {"standard_name": "longitude", "units": "degrees_east"}),
    },
    attrs={"GRIB_centre": "ecmf", "Conventions": "CF-1.7"},
)
grib.to_zarr(f"{out}/cfgrib.zarr", mode="w")

ref = {}
for name, var in [("mogreps", "air_temperature"), ("cfgrib", "t2m")]:
    ds = xr.open_zarr(f"{out}/{name}.zarr")
    ref[name] = ds[var].sel(latitude=45.0, longitude=5.0).values.astype(float).tolist()
print(json.dumps(ref))
