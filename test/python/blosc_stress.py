# Blosc chunks meant to reach every branch of a decoder: each compressor at low and high levels,
# every shuffle, type sizes 1–16 and an odd one, block sizes that split and leave ragged blocks,
# data with long runs (long match lengths), repeats further back than 8 KiB (BloscLZ's escaped
# far distances), short-period repeats (overlapping copies) and noise (literal runs). Written by
# numcodecs — the encoder zarr-python and xarray use — into <dir>/<name>.enc and .raw, listed in
# manifest.json with the chunk's decoded size.
import json
import os
import sys

import numpy as np
from numcodecs.blosc import Blosc

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(28)


def datasets():
    n = 1 << 16
    yield "zeros", np.zeros(n, dtype="uint8")
    yield "noise", rng.integers(0, 256, n, dtype="uint8")
    far = rng.integers(0, 256, 20000, dtype="uint8")
    yield "far", np.tile(far, 7)[:n]
    yield "period3", np.tile(np.array([1, 2, 3], dtype="uint8"), n // 3)
    runs = np.repeat(rng.integers(0, 4, 600, dtype="uint8"), rng.integers(1, 700, 600))
    yield "runs", runs[:n]
    field = np.cumsum(rng.normal(size=n // 4)).astype("float32")
    yield "field", field.view("uint8")
    mixed = np.concatenate([rng.integers(0, 256, 3000, dtype="uint8"), np.zeros(70000, "uint8"), far[:9000], far[:9000]])
    yield "mixed", mixed


cases = []
for dname, data in datasets():
    # BloscLZ (the addon's own code) through the whole matrix; the library-backed ones more briefly.
    for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        full = cname == "blosclz"
        for clevel in [1, 9] if full else [5]:
            for shuffle in [Blosc.NOSHUFFLE, Blosc.SHUFFLE, Blosc.BITSHUFFLE]:
                for typesize, blocksize in [(1, 0), (4, 0), (8, 16384), (3, 6000)] if full else [(4, 0), (3, 6000)]:
                    raw = data[: len(data) - len(data) % typesize]
                    arr = raw.view({1: "u1", 4: "u4", 8: "u8"}.get(typesize, f"V{typesize}"))
                    enc = Blosc(cname=cname, clevel=clevel, shuffle=shuffle, blocksize=blocksize).encode(np.ascontiguousarray(arr))
                    name = f"{dname}-{cname}-{clevel}-{shuffle}-{typesize}-{blocksize}"
                    open(os.path.join(out, name + ".enc"), "wb").write(bytes(enc))
                    open(os.path.join(out, name + ".raw"), "wb").write(raw.tobytes())
                    cases.append({"name": name, "cname": cname, "bytes": int(raw.nbytes)})
json.dump(cases, open(os.path.join(out, "manifest.json"), "w"))
