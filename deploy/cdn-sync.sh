#!/usr/bin/env bash
# Copies the published build to a CDN origin bucket with the cache headers gridcast itself sends:
# run tiles (files and archives under tiles/) never change once published, so they are immutable
# for a year; everything else (catalog.json, TileJSON, legends, the viewer) for 60 s. The
# embedding indexes back keyed routes and are never copied. Tiles go first and catalog.json last,
# so a catalog never names tiles the origin does not have yet.
#   deploy/cdn-sync.sh OUT_DIR s3://bucket/prefix    (aws CLI; any S3-compatible origin)
#   deploy/cdn-sync.sh OUT_DIR /var/www/tiles        (a directory behind a web server)
#   DRY_RUN=1 deploy/cdn-sync.sh …                   prints the commands instead
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OUT_DIR DEST (s3://bucket/prefix or a directory)" >&2; exit 2; }
[ -e "$1/current" ] || { echo "cdn-sync: $1 has no published build (current)" >&2; exit 2; }
src=$(readlink -f "$1/current")
dest=${2%/}
immutable="public, max-age=31536000, immutable"
short="public, max-age=60"
run() { if [ -n "${DRY_RUN:-}" ]; then printf '%q ' "$@"; echo; else "$@"; fi; }

case "$dest" in
  s3://*)
    run aws s3 sync "$src/tiles" "$dest/tiles" --cache-control "$immutable"
    run aws s3 sync "$src" "$dest" --exclude "tiles/*" --exclude "embeddings/*" --exclude catalog.json \
      --cache-control "$short" --delete
    run aws s3 cp "$src/catalog.json" "$dest/catalog.json" --cache-control "$short"
    ;;
  *)
    run mkdir -p "$dest"
    run cp -R --no-preserve=ownership "$src/tiles" "$dest/"
    for f in "$src"/*; do
      case "$(basename "$f")" in tiles | embeddings | catalog.json) continue ;; esac
      run cp -R --no-preserve=ownership "$f" "$dest/"
    done
    run cp "$src/catalog.json" "$dest/catalog.json.tmp"
    run mv "$dest/catalog.json.tmp" "$dest/catalog.json"
    ;;
esac
