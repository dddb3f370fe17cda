# Where a zarr-python read spends its time, for the bench peers (npy_zarr_peer.py, xarray_peer.py):
# the store fetching bytes (over HTTP: fsspec + aiohttp, metadata and chunks; from a directory:
# file reads) and the codec decoding chunks, timed around the very calls the reader makes anyway;
# the rest of a read is opening, indexing and copying into the output. Importing this module
# installs the timers on the classes, so every array opened afterwards is timed.
import time

import numcodecs
import zarr.storage


class Phases:
    def __init__(self):
        self.fetch = 0.0
        self.decode = 0.0
        self._depth = 0

    def take(self):
        """Seconds spent fetching and decoding since the last take."""
        out = {"fetch": self.fetch, "decode": self.decode}
        self.fetch = 0.0
        self.decode = 0.0
        return out


PHASES = Phases()


def _timed(cls, name, field):
    inner = getattr(cls, name)

    def timed(*args, **kwargs):
        # Outermost call only: a store method that calls another is counted once.
        PHASES._depth += 1
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            PHASES._depth -= 1
            if PHASES._depth == 0:
                setattr(PHASES, field, getattr(PHASES, field) + time.perf_counter() - t0)

    setattr(cls, name, timed)


for store in (zarr.storage.FSStore, zarr.storage.DirectoryStore):
    _timed(store, "__getitem__", "fetch")
    if hasattr(store, "getitems"):
        _timed(store, "getitems", "fetch")
for codec in (numcodecs.Blosc, numcodecs.Zstd):
    _timed(codec, "decode", "decode")
