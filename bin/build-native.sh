#!/usr/bin/env bash
# Builds the Blosc addon (native/blosc.c → build/native/blosc.node) against the system's c-blosc,
# the library numcodecs and xarray decode with (Debian: libblosc-dev). Without it gridcast uses
# its built-in Blosc decoder, which is about four times slower per chunk.
#   bin/build-native.sh             build, or fail saying what is missing
#   bin/build-native.sh --optional  (npm ci) one line and exit 0 when something is missing
set -euo pipefail
cd "$(dirname "$0")/.."

optional=false
[ "${1:-}" = --optional ] && optional=true
out=build/native/blosc.node
src=native/blosc.c
say() { echo "native Blosc decoder: $*" >&2; }
missing() {
  if $optional; then
    say "$1; gridcast will use its built-in decoder (to build it later: $2, then npm run native)"
    exit 0
  fi
  say "$1; $2, then run this again"
  exit 1
}

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || missing "no C compiler ($CC)" "install one (Debian: apt-get install gcc)"
# Node-API headers of the Node that runs gridcast (the pinned one ships them), else the system's.
NODE=${npm_node_execpath:-node}
inc=$("$NODE" -p 'require("node:path").join(process.execPath, "../../include/node")')
[ -f "$inc/node_api.h" ] || inc=/usr/include/node
[ -f "$inc/node_api.h" ] || missing "no Node-API headers" "install Node's headers (Debian: apt-get install libnode-dev)"
echo '#include <blosc.h>' | "$CC" -E -x c - >/dev/null 2>&1 ||
  missing "libblosc headers not found" "install them (Debian: apt-get install libblosc-dev)"

# Zstandard into caller-owned buffers (bulk reads) when libzstd's headers are there (libzstd-dev);
# without them those reads use node:zlib. The flags are kept beside the build: a header installed
# later makes the next run rebuild.
flags=()
if echo '#include <zstd.h>' | "$CC" -E -x c - >/dev/null 2>&1; then flags=(-DGRIDCAST_ZSTD -lzstd); fi
stamp="$out.flags"
# native/*.h (beneath.h) is part of the build as much as the .c file.
if [ -f "$out" ] && [ -z "$(find native -newer "$out" -print -quit)" ] && [ "$out" -nt "$0" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${flags[*]}" ]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
"$CC" -O2 -ffp-contract=off -Wall -Wextra -Werror -shared -fPIC -I"$inc" "$src" -lblosc -lm "${flags[@]}" -o "$tmp" ||
  missing "the build failed (see above)" "check the compiler output"
mv "$tmp" "$out"
echo "${flags[*]}" >"$stamp"
say "built $out${flags:+ (with Zstandard)}"
