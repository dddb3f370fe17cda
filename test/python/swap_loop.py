"""Swaps two paths back and forth for ever with renameat2(RENAME_EXCHANGE): a directory of a
store or build and a symlink to somewhere outside it, so that any path lookup racing it sees one
or the other. For the confinement tests; killed by the test when it is done.

usage: swap_loop.py PATH_A PATH_B
Prints "swapping" once the first exchange has been made.
"""
import ctypes
import os
import sys

AT_FDCWD = -100
RENAME_EXCHANGE = 2
libc = ctypes.CDLL(None, use_errno=True)
a, b = (os.fsencode(p) for p in sys.argv[1:3])
n = 0
while True:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        print(f"renameat2 failed: {os.strerror(e)}", file=sys.stderr, flush=True)
        sys.exit(1)
    n += 1
    if n == 1:
        print("swapping", flush=True)
