"""What xarray reads from a store, as JSON the tests compare gridcast's answers with.

Shared by the store writers' `read` commands (layout_stores.py, producer_stores.py,
multigrid_stores.py): values (NaN as null, times as ISO strings, time deltas in hours), dims,
attributes and 1-D coordinates.
"""

import numpy as np
import xarray as xr


def jsonable(values):
    a = np.asarray(values)
    if np.issubdtype(a.dtype, np.datetime64):
        return [str(x)[:19] for x in a.astype("datetime64[s]").ravel()]
    if a.dtype.kind == "O" and a.size and hasattr(a.ravel()[0], "isoformat"):
        return [x.isoformat()[:19] for x in a.ravel()]
    if np.issubdtype(a.dtype, np.timedelta64):
        return [float(x) for x in (a.astype("timedelta64[s]").astype("int64") / 3600.0).ravel()]
    return [None if (isinstance(x, float) and np.isnan(x)) else x for x in a.astype("float64").ravel().tolist()]


def opener(consolidated=None):
    """open(query): the query's store opened once per batch (with its HTTP headers, if any)."""
    opened = {}

    def open_store(q):
        ds = opened.get(q["store"])
        if ds is None:
            opts = {"storage_options": {"headers": q["headers"]}} if q.get("headers") else {}
            if consolidated is not None:
                opts["consolidated"] = consolidated
            ds = xr.open_zarr(q["store"], **opts)
            opened[q["store"]] = ds
        return ds

    return open_store


def read_isel(queries):
    """Each query: store, var, isel (indices) and optional headers; consolidated metadata."""
    open_store = opener(consolidated=True)
    out = []
    for q in queries:
        ds = open_store(q)
        da = ds[q["var"]].isel(**q.get("isel", {}))
        out.append(
            {
                "values": jsonable(da.values),
                "dims": list(da.dims),
                "attrs": {k: v for k, v in da.attrs.items() if isinstance(v, (str, int, float))},
                "coords": {d: jsonable(ds[d].values) for d in ds[q["var"]].dims if d in ds.coords},
            }
        )
    return out
