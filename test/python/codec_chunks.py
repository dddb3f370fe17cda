# Writes chunks encoded by numcodecs (the codecs zarr-python uses) for the codec tests: every
# Blosc compressor × shuffle mode × type size, block sizes that leave a partial last block, plus
# Zstd, GZip and Zlib. Each case: <name>.raw (the array's bytes) and <name>.enc, listed in
# manifest.json with the codec config and the data type.
import json
import os
import sys

import numpy as np
from numcodecs import GZip, Zlib, Zstd
from numcodecs.blosc import Blosc

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(15)
cases = []


def smooth(n, dtype):
    # Field-like values (compressible), with some noise so every stream really compresses.
    x = np.cumsum(rng.normal(size=n)).astype("float64")
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = np.clip(x * 50, info.min, info.max)
    return x.astype(dtype)


def add(name, codec, arr):
    raw = np.ascontiguousarray(arr)
    enc = codec.encode(raw)
    open(os.path.join(out, name + ".raw"), "wb").write(raw.tobytes())
    open(os.path.join(out, name + ".enc"), "wb").write(bytes(enc))
    cases.append({"name": name, "config": codec.get_config(), "dtype": raw.dtype.name, "shape": list(raw.shape)})


dtypes = ["uint8", "int16", "float32", "float64"]
for cname in ["lz4", "lz4hc", "zstd", "zlib", "blosclz"]:
    for shuffle, sname in [(Blosc.NOSHUFFLE, "noshuffle"), (Blosc.SHUFFLE, "shuffle"), (Blosc.BITSHUFFLE, "bitshuffle")]:
        for dtype in dtypes:
            # 1×25×90×90 is the chunk shape of the benchmark store; 12345 leaves a ragged last block.
            for shape, blocksize in [((1, 25, 90, 90), 0), ((12345,), 4096), ((37,), 0)]:
                if len(shape) == 4 and dtype in ("uint8", "float64"):
                    continue  # the big shape once per 2- and 4-byte type keeps the fixtures small
                n = int(np.prod(shape))
                arr = smooth(n, dtype).reshape(shape)
                name = f"blosc-{cname}-{sname}-{dtype}-{n}-{blocksize}"
                add(name, Blosc(cname=cname, clevel=5, shuffle=shuffle, blocksize=blocksize), arr)
# Incompressible data: Blosc stores it as it is (the memcpyed flag).
add("blosc-lz4-memcpy-uint8", Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE), rng.integers(0, 256, 5000, dtype="uint8"))
for level in [1, 5]:
    for dtype in ["float32", "int16"]:
        arr = smooth(25 * 90 * 90, dtype).reshape(25, 90, 90)
        add(f"zstd-{level}-{dtype}", Zstd(level=level), arr)
        add(f"gzip-{level}-{dtype}", GZip(level=level), arr)
        add(f"zlib-{level}-{dtype}", Zlib(level=level), arr)
# Small chunks (coordinates, previews) take the decoders' inline path.
for codec, cname in [(Zstd(level=3), "zstd"), (GZip(level=5), "gzip"), (Zlib(level=5), "zlib")]:
    add(f"{cname}-small-float64", codec, smooth(721, "float64"))
json.dump(cases, open(os.path.join(out, "manifest.json"), "w"))
