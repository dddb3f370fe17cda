# Latent items laid out the way producers write them, for test/embeddings/producers.test.ts.
#   python producers.py <store> <spec.json>
# With Debian's python (zarr 2) it writes the Zarr v2 items, with the venv's (zarr 3) the v3 ones.
# The spec carries the tile origin, the WKT of its UTM CRS (from pyproj) and the period; every
# item is written under embeddings/<family>/rf/v1.0/base/<product>/<period>/<tile>.
import json
import sys

import numpy as np
import xarray as xr
import zarr

store, spec = sys.argv[1], json.load(open(sys.argv[2]))
V3 = int(zarr.__version__.split(".")[0]) >= 3
TILE, PERIOD, WKT, EPSG = spec["tile"], spec["period"], spec["wkt"], spec["epsg"]
E0, N0 = spec["easting"], spec["northing"]
rng = np.random.default_rng(26)


def path(family, product="map"):
    return f"embeddings/{family}/rf/v1.0/base/{product}/{PERIOD}/{TILE}"


def grid(ny, nx, res, dx=1230.0, dy=2340.0):
    """Pixel-centre coordinates of a grid starting inside the tile's square, top-down."""
    c = E0 + dx
    f = N0 + 100_000 - dy
    xs = c + (np.arange(nx) + 0.5) * res
    ys = f - (np.arange(ny) + 0.5) * res
    return xs, ys, [res, 0.0, c, 0.0, -res, f]


def spatial_ref(t):
    a, b, c, d, e, f = t
    return xr.Variable(
        (),
        np.int64(0),
        {
            "crs_wkt": WKT,
            "spatial_ref": WKT,
            "grid_mapping_name": "transverse_mercator",
            "GeoTransform": f"{c!r} {a!r} {b!r} {f!r} {d!r} {e!r}",
        },
    )


def to_zarr(ds, family, product="map", **kw):
    kwargs = {"mode": "w", "consolidated": False}
    if V3:
        kwargs["zarr_format"] = 3
    ds.to_zarr(f"{store}/{path(family, product)}", **kwargs, **kw)


def rioxarray_style(family, extra_attrs=None):
    """rioxarray / to_zarr: (band, y, x) float32, x/y coordinates, a spatial_ref grid mapping."""
    ny, nx, nf = 50, 60, 12
    xs, ys, t = grid(ny, nx, 10.0)
    data = rng.standard_normal((nf, ny, nx)).astype("float32")
    ds = xr.Dataset(
        {"embedding": (("band", "y", "x"), data, {"grid_mapping": "spatial_ref"})},
        coords={"band": np.arange(1, nf + 1), "y": ys, "x": xs, "spatial_ref": spatial_ref(t)},
        attrs=extra_attrs or {},
    )
    to_zarr(ds, family)


def write_plain(family, shape, dims, dtype, fill, data, attrs=None, group_attrs=None, name="latent", product="map"):
    """zarr-python itself (no xarray): one group with one array, dimension names as each format has them."""
    g = zarr.open_group(f"{store}/{path(family, product)}", mode="w", **({"zarr_format": 3} if V3 else {}))
    g.attrs.update(group_attrs or {})
    if V3:
        a = g.create_array(name, shape=shape, chunks=shape, dtype=dtype, fill_value=fill, dimension_names=dims)
    else:
        a = g.create_dataset(name, shape=shape, chunks=shape, dtype=dtype, **({} if fill == "default" else {"fill_value": fill}))
        a.attrs["_ARRAY_DIMENSIONS"] = list(dims)
    a.attrs.update(attrs or {})
    a[...] = data
    return g


def relu(shape):
    v = rng.standard_normal(shape).astype("float32")
    return np.maximum(v, 0).astype("float32")


def gridcast_attrs(t):
    return {"crs": f"EPSG:{EPSG}", "transform": t}


if not V3:
    # rioxarray / GDAL layout, feature first, no gridcast transform attribute.
    rioxarray_style("rioxr")
    # The same, with a transform attribute that disagrees (the square divided by the pixel count).
    rioxarray_style("badtransform", {"transform": [100_000 / 60, 0, E0, 0, -100_000 / 50, N0 + 100_000]})
    # geotessera: int8 latent with per-pixel float32 scales beside it, gridcast's crs/transform.
    ny, nx, nf = 40, 30, 16
    xs, ys, t = grid(ny, nx, 10.0, 500.0, 700.0)
    q = rng.integers(-127, 128, (ny, nx, nf), dtype="int8")
    scales = rng.uniform(0.001, 0.05, (ny, nx)).astype("float32")
    ds = xr.Dataset(
        {"embeddings": (("y", "x", "feature"), q), "scales": (("y", "x"), scales)},
        coords={"y": ys, "x": xs},
        attrs=gridcast_attrs(t),
    )
    to_zarr(ds, "tessera")
    # A ReLU latent written by zarr 2 with its default fill_value 0: xarray masks zeros (v2 rule).
    xs, ys, t = grid(20, 20, 20.0)
    write_plain("relu2", (20, 20, 8), ("y", "x", "feature"), "float32", "default", relu((20, 20, 8)), group_attrs=gridcast_attrs(t))
    # The same as int8 declaring nodata -128: zeros stay, -128 is masked.
    v = np.clip(np.round(relu((20, 20, 8)) * 40), 0, 127).astype("int8")
    v[3, 4, :] = -128
    v[7, :, :] = -128
    write_plain("relu2nd", (20, 20, 8), ("y", "x", "feature"), "int8", "default", v, attrs={"nodata": -128}, group_attrs=gridcast_attrs(t))
    # A vector as (1, 1, feature), with a one-pixel transform of the whole square.
    write_plain(
        "vec3",
        (1, 1, 64),
        ("y", "x", "feature"),
        "float32",
        float("nan"),
        rng.standard_normal((1, 1, 64)).astype("float32"),
        group_attrs=gridcast_attrs([100_000.0, 0.0, E0, 0.0, -100_000.0, N0 + 100_000]),
        product="vector",
    )
    # A 2-D vector (y, embedding) without geometry.
    write_plain("vec2d", (1, 32), ("y", "embedding"), "float32", float("nan"), rng.standard_normal((1, 32)).astype("float32"), product="vector")
else:
    zarr.open_group(store, mode="a", zarr_format=3)  # the store's root group
    # AlphaEarth's export: int8 (y, x, channel) with the de-quantization rule and nodata in its attributes.
    ny, nx, nf = 48, 36, 64
    xs, ys, t = grid(ny, nx, 10.0, 3000.0, 4000.0)
    q = rng.integers(-127, 128, (ny, nx, nf), dtype="int8")
    q[5, 6, :] = -128
    q[10:12, :, :] = -128
    q[0, 0, :] = 0
    ds = xr.Dataset(
        {
            "aef": (
                ("y", "x", "channel"),
                q,
                {"grid_mapping": "spatial_ref", "dequantization": "sign(x) * (abs(x) / 127.5) ** 2", "nodata": -128},
            ),
            # A preview in the stored units: every 12th pixel's first three channels.
            "preview": (("preview_y", "preview_x", "preview_band"), q[::12, ::12, :3]),
        },
        coords={"y": ys, "x": xs, "spatial_ref": spatial_ref(t)},
    )
    to_zarr(ds, "aef")
    # CF linear packing by xarray: int16 with scale_factor, add_offset and _FillValue.
    ny, nx, nf = 30, 40, 10
    xs, ys, t = grid(ny, nx, 10.0)
    v = rng.uniform(-1, 1, (ny, nx, nf)).astype("float32")
    v[2, 3, :] = np.nan
    ds = xr.Dataset({"latent": (("y", "x", "feature"), v)}, coords={"y": ys, "x": xs}, attrs=gridcast_attrs(t))
    to_zarr(
        ds,
        "cfpack",
        encoding={"latent": {"dtype": "int16", "scale_factor": 1 / 16000, "add_offset": 0.0, "_FillValue": -32768}},
    )
    # Per-feature scales named by an attribute.
    ny, nx, nf = 20, 24, 12
    xs, ys, t = grid(ny, nx, 10.0)
    g = write_plain(
        "ftscale",
        (ny, nx, nf),
        ("y", "x", "feature"),
        "int16",
        0,
        rng.integers(-30000, 30000, (ny, nx, nf), dtype="int16"),
        attrs={"scale_array": "feature_scale"},
        group_attrs=gridcast_attrs(t),
    )
    s = g.create_array("feature_scale", shape=(nf,), chunks=(nf,), dtype="float32", fill_value=float("nan"), dimension_names=["feature"])
    s[...] = rng.uniform(1e-5, 1e-4, nf).astype("float32")
    # A ReLU latent in v3 with fill_value 0: zeros are values (xarray's v3 rule); an extra array beside it.
    xs, ys, t = grid(20, 20, 20.0)
    g = write_plain("relu3", (20, 20, 8), ("y", "x", "feature"), "float32", 0.0, relu((20, 20, 8)), group_attrs=gridcast_attrs(t))
    m = g.create_array("mask", shape=(20, 20), chunks=(20, 20), dtype="uint8", fill_value=0, dimension_names=["y", "x"])
    m[...] = 1
    # Vectors: (feature,) and (feature, 1, 1), no geometry of their own.
    write_plain("vec1d", (64,), ("feature",), "float32", float("nan"), rng.standard_normal(64).astype("float32"), product="vector")
    write_plain(
        "vecfirst", (64, 1, 1), ("feature", "y", "x"), "float32", float("nan"), rng.standard_normal((64, 1, 1)).astype("float32"), product="vector"
    )
    # Sharded, the shard index at the start of each shard.
    import zarr.codecs as zc

    xs, ys, t = grid(40, 40, 10.0)
    g = zarr.open_group(f"{store}/{path('shard')}", mode="w", zarr_format=3)
    g.attrs.update(gridcast_attrs(t))
    a = zarr.create(
        shape=(40, 40, 16),
        chunks=(40, 40, 16),
        dtype="float32",
        store=f"{store}/{path('shard')}/latent",
        zarr_format=3,
        codecs=[zc.ShardingCodec(chunk_shape=(20, 20, 16), codecs=[zc.BytesCodec(), zc.ZstdCodec()], index_location="start")],
        dimension_names=["y", "x", "feature"],
        fill_value=float("nan"),
    )
    a[...] = rng.standard_normal((40, 40, 16)).astype("float32")
    # Refused: a dimension that is not y, x or feature; a gridded latent that states no geometry.
    write_plain("baddims", (2, 10, 10), ("time", "y", "x"), "float32", float("nan"), np.zeros((2, 10, 10), "float32"))
    write_plain("nogeo", (10, 10, 4), ("y", "x", "feature"), "float32", float("nan"), np.zeros((10, 10, 4), "float32"))
    # An array outside any item group.
    g = zarr.open_group(f"{store}/embeddings/notes", mode="w", zarr_format=3)
    g.create_array("readme", shape=(3,), chunks=(3,), dtype="int32", fill_value=0, dimension_names=["n"])
