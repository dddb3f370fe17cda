#!/usr/bin/env bash
# Builds the native addon (native/gridcast.c, one compilation unit with the native/*.h it includes,
# → build/native/gridcast.node) with nothing but a C compiler and the Node-API headers the pinned
# Node ships: its Blosc decoder (framing, shuffles, BloscLZ) is its own C, and LZ4, Zstandard and
# zlib come from the system's runtime libraries (liblz4.so.1, libzstd.so.1, libz.so.1, present on
# a base Debian), opened when the addon loads. No -dev package is needed. Without a compiler
# gridcast runs the same work in JavaScript (see README, "Speed").
#   bin/build-native.sh             build, or fail saying what is missing
#   bin/build-native.sh --optional  (npm ci) one line and exit 0 when something is missing
# GRIDCAST_NATIVE_OUT=path builds there instead; GRIDCAST_NATIVE_HIDE_DEV_HEADERS=1 compiles with
# only the C library's headers in view (the blosc, zstd, lz4 and zlib headers hidden even where a
# -dev package installed them), which proves the build needs none of them.
set -euo pipefail
cd "$(dirname "$0")/.."

optional=false
[ "${1:-}" = --optional ] && optional=true
out=${GRIDCAST_NATIVE_OUT:-build/native/gridcast.node}
src=native/gridcast.c
say() { echo "native addon: $*" >&2; }
missing() {
  if $optional; then
    say "$1; gridcast will run its JavaScript decoder instead (to build it later: $2, then npm run native)"
    exit 0
  fi
  say "$1; $2, then run this again"
  exit 1
}

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || missing "no C compiler ($CC)" "install one (Debian: apt-get install gcc)"
# Node-API headers: those of the pinned Node package (npm ci installs it), else of the Node
# running this script, else the system's.
NODE=${npm_node_execpath:-node}
inc=
for d in node_modules/node/node_modules/node-*/include/node node_modules/node-*-*/include/node \
  "$("$NODE" -p 'require("node:path").join(process.execPath, "../../include/node")' 2>/dev/null || true)" \
  /usr/include/node; do
  if [ -f "$d/node_api.h" ]; then
    inc=$d
    break
  fi
done
[ -n "$inc" ] || missing "no Node-API headers" "run npm ci (the pinned node package ships them)"

cflags=(-O2 -ffp-contract=off -Wall -Wextra -Werror -shared -fPIC)
farm=
if [ "${GRIDCAST_NATIVE_HIDE_DEV_HEADERS:-0}" = 1 ]; then
  # A copy of the include directories as symlinks, without the compression libraries' headers;
  # the compiler is told to look nowhere else.
  farm=$(mktemp -d)
  trap 'rm -rf "$farm"' EXIT
  hidden='^(blosc.*|zstd.*|lz4.*|zlib|zconf)\.h$'
  multiarch=$("$CC" -print-multiarch 2>/dev/null || true)
  mkdir -p "$farm/usr" "$farm/arch"
  for f in /usr/include/*; do
    name=$(basename "$f")
    [[ $name =~ $hidden || $name == "$multiarch" ]] || ln -s "$f" "$farm/usr/$name"
  done
  if [ -n "$multiarch" ] && [ -d "/usr/include/$multiarch" ]; then
    for f in "/usr/include/$multiarch"/*; do
      name=$(basename "$f")
      [[ $name =~ $hidden ]] || ln -s "$f" "$farm/arch/$name"
    done
  fi
  paths=(-nostdinc -isystem "$("$CC" -print-file-name=include)")
  fixed=$("$CC" -print-file-name=include-fixed)
  [ -d "$fixed" ] && paths+=(-isystem "$fixed")
  paths+=(-isystem "$farm/arch" -isystem "$farm/usr")
  cflags+=("${paths[@]}")
  for h in blosc.h zstd.h lz4.h zlib.h; do
    if echo "#include <$h>" | "$CC" "${paths[@]}" -E -x c - >/dev/null 2>&1; then
      say "could not hide $h from the compiler"
      exit 1
    fi
  done
  say "compiling with the blosc, zstd, lz4 and zlib headers hidden"
fi

# The command is kept beside the build: another compiler or other flags make the next run rebuild.
stamp="$out.flags"
want="$CC ${cflags[*]} -I$inc"
# native/*.h (the headers gridcast.c includes) are part of the build as much as the .c file.
if [ -z "$farm" ] && [ -f "$out" ] && [ -z "$(find native -newer "$out" -print -quit)" ] && [ "$out" -nt "$0" ] &&
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"; [ -z "$farm" ] || rm -rf "$farm"' EXIT
# No compression library is linked: the addon opens them itself (dlopen) when it loads.
"$CC" "${cflags[@]}" -I"$inc" "$src" -lm -ldl -lpthread -o "$tmp" ||
  missing "the build failed (see above)" "check the compiler output"
# One line saying which decoder was built and which libraries it found here.
if ! what=$("$NODE" -e 'const m = { exports: {} }; process.dlopen(m, require("node:path").resolve(process.argv[1])); console.log(m.exports.version())' "$tmp" 2>&1); then
  missing "the build does not load: $what" "check the compiler output"
fi
mv "$tmp" "$out"
echo "$want" >"$stamp"
say "built $out: Blosc decoder $what"
