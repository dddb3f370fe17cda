#!/usr/bin/env bash
# What the test suite needs from the machine besides its npm packages, checked (and, as root on
# Debian, installed or started) before any test runs: the tests drive real clients — Debian's
# numpy/xarray/zarr/fsspec/aiohttp, Chromium — and a real PostgreSQL. A missing piece stops the
# run here with one line naming it and the command that fixes it, instead of failing (or
# skipping) a whole area of tests later. `npm test` runs this first; so does nothing else.
set -euo pipefail

PY=${GRIDCAST_PYTHON:-/usr/bin/python3}
CHROMIUM=/usr/bin/chromium
PG_URL=${GRIDCAST_TEST_PG:-postgres://postgres@127.0.0.1:5432/postgres}

say() { echo "test prerequisites: $*" >&2; }
fail() {
  say "$*"
  exit 1
}
is_root() { [ "$(id -u)" = 0 ]; }

missing=()
# One interpreter start when all is there (the usual case); module by module only to name what is not.
all_modules_ok=false
if [ -x "$PY" ] && "$PY" -c "import numpy, numcodecs, xarray, zarr, fsspec, aiohttp" >/dev/null 2>&1; then all_modules_ok=true; fi
# python module → the Debian package that provides it
for pair in numpy:python3-numpy numcodecs:python3-numcodecs xarray:python3-xarray zarr:python3-zarr fsspec:python3-fsspec aiohttp:python3-aiohttp; do
  if $all_modules_ok; then break; fi
  if ! [ -x "$PY" ] || ! "$PY" -c "import ${pair%%:*}" >/dev/null 2>&1; then missing+=("${pair#*:}"); fi
done
[ -x "$CHROMIUM" ] || missing+=(chromium)
# GIS clients (GDAL, rasterio, OWSLib, QGIS headless), a real Slurm, and the peers the benches
# compare with (nginx as the static server, wrk as the external load client): each checked by a
# file it installs, so a machine that has them all costs no interpreter start here.
for pair in /usr/bin/gdalinfo:gdal-bin /usr/lib/python3/dist-packages/osgeo:python3-gdal \
  /usr/lib/python3/dist-packages/rasterio:python3-rasterio /usr/lib/python3/dist-packages/owslib:python3-owslib \
  /usr/lib/python3/dist-packages/pyproj:python3-pyproj /usr/lib/python3/dist-packages/qgis:python3-qgis \
  /usr/bin/qgis:qgis /usr/sbin/slurmctld:slurm-wlm /usr/sbin/munged:munge /usr/sbin/nginx:nginx-light /usr/bin/wrk:wrk; do
  [ -e "${pair%%:*}" ] || missing+=("${pair#*:}")
done
# The native addon needs only a C compiler (its Blosc decoder is its own C; LZ4, Zstandard and
# zlib come from the runtime libraries a base Debian has). The codec tests compare it with
# numcodecs (python3-numcodecs, which python3-zarr brings), not with a C library of our own.
command -v "${CC:-cc}" >/dev/null 2>&1 || missing+=(gcc)
# A PostgreSQL server is only needed here when the tests use the local default.
local_pg=false
if [ -z "${GRIDCAST_TEST_PG:-}" ]; then local_pg=true; fi
installed_pg=false
if $local_pg && ! command -v pg_ctlcluster >/dev/null 2>&1; then
  missing+=(postgresql)
  installed_pg=true
fi
# pg_isready and psql check the server below.
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)

if [ "${#missing[@]}" -gt 0 ]; then
  if is_root && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # The lock timeout lets two test runs started together take turns instead of failing.
    apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null ||
      fail "apt-get update failed; run it by hand: apt-get update"
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      fail "could not install ${missing[*]}; run: apt-get install -y --no-install-recommends ${missing[*]}"
  else
    fail "missing ${missing[*]}; install with: sudo apt-get install -y --no-install-recommends ${missing[*]}"
  fi
fi

# npm ci built it already; this rebuilds it only when native/ changed.
if [ "${GRIDCAST_NATIVE:-1}" != 0 ]; then
  bash "$(dirname "$0")/build-native.sh" || fail "the native addon did not build (see above)"
fi

# Today's Python client stack (xarray 2026 + zarr 3) from the project's shared folder, built once
# here so tests that use it start quickly (test/helpers/zarr3-python.ts).
zarr3=$(dirname "$0")/../../shared/clients/xarray-zarr3-venv.sh
if [ -f "$zarr3" ]; then
  flock /tmp/gridcast-zarr3-venv.lock bash "$zarr3" >/dev/null || fail "the xarray + zarr 3 client stack did not build (see above)"
else
  venv_py=${XARRAY_ZARR3_VENV:-/tmp/xarray-zarr3-venv}/bin/python
  if [ -x "$venv_py" ] && "$venv_py" -c 'import xarray, zarr, numcodecs, fsspec, aiohttp; assert zarr.__version__.startswith("3")' >/dev/null 2>&1; then
    say "no ../shared/clients beside this checkout: using the xarray + zarr 3 stack it built before ($venv_py)"
  else
    say "no ../shared/clients and no xarray + zarr 3 stack built: tests that can fall back to zarrita say so, the ones that need it fail naming it"
  fi
fi

pg_ready() { pg_isready -q -d "$PG_URL" >/dev/null 2>&1; }
if $local_pg && ! pg_ready; then
  if is_root && command -v pg_lsclusters >/dev/null 2>&1; then
    # Start every stopped cluster (a fresh install has one, "main").
    while read -r version name _port status _rest; do
      if [ "$status" = down ]; then
        say "starting PostgreSQL $version/$name"
        pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start >/dev/null 2>&1 || true
      fi
    done < <(pg_lsclusters --no-header 2>/dev/null)
    for _ in $(seq 1 20); do
      pg_ready && break
      sleep 0.5
    done
  fi
fi
if ! pg_isready -q -d "$PG_URL" >/dev/null 2>&1; then
  if $local_pg; then
    fail "PostgreSQL is not running on 127.0.0.1:5432; start it with: sudo pg_ctlcluster $(ls /etc/postgresql 2>/dev/null | head -n1 || echo 15) main start (or set GRIDCAST_TEST_PG=postgres://user@host:port/db)"
  fi
  fail "PostgreSQL at GRIDCAST_TEST_PG is not reachable; start it or point GRIDCAST_TEST_PG at a running server"
fi

# The tests connect as postgres without a password. A cluster this script just installed gets
# that on the loopback address; an existing one is never reconfigured.
if ! psql "$PG_URL" -Atqc 'select 1' >/dev/null 2>&1; then
  hba=$(ls /etc/postgresql/*/main/pg_hba.conf 2>/dev/null | head -n1 || true)
  if $installed_pg && [ -n "$hba" ]; then
    say "allowing user postgres from 127.0.0.1 without a password in $hba (fresh cluster)"
    sed -i '1i host all postgres 127.0.0.1/32 trust' "$hba"
    while read -r version name _rest; do
      pg_ctlcluster --skip-systemctl-redirect "$version" "$name" reload >/dev/null 2>&1 || true
    done < <(pg_lsclusters --no-header 2>/dev/null)
    sleep 1
  fi
  psql "$PG_URL" -Atqc 'select 1' >/dev/null 2>&1 ||
    fail "PostgreSQL refuses $PG_URL; allow it (pg_hba.conf: host all postgres 127.0.0.1/32 trust) or set GRIDCAST_TEST_PG to a URL that can create databases"
fi
