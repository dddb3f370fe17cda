#!/usr/bin/env bash
# Copies the published build to a CDN origin bucket with the cache headers gridcast itself sends:
# run tiles (files and archives under tiles/) never change once published, so they are immutable
# for a year; everything else (catalog.json, TileJSON, legends, the viewer) for 60 s. The
# embedding indexes back keyed routes and are never copied. Tiles go first and catalog.json last,
# so a catalog never names tiles the origin does not have yet. Only regular files are copied: a
# symlink in the build (to /etc/passwd, to the private embeddings/items.json) would resolve at
# the destination, so each one is skipped and named on stderr, and a catalog.json that is a
# symlink stops the sync (exit 1).
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

[ -L "$src/catalog.json" ] && { echo "cdn-sync: refused: catalog.json is a symlink" >&2; exit 1; }
while IFS= read -r -d '' link; do
  printf 'cdn-sync: skipped symlink %q\n' "${link#"$src"/}" >&2
done < <(find "$src" -mindepth 1 -path "$src/embeddings" -prune -o -type l -print0)

# The regular files below $src matching find's arguments, copied into $dest (names of any bytes).
copy_files() {
  if [ -n "${DRY_RUN:-}" ]; then
    printf 'copy regular files of %q (%s) to %q\n' "$src" "$*" "$dest"
    return
  fi
  (cd "$src" && find . "$@" -type f -print0 | tar --null --no-recursion -T - -cf -) |
    (cd "$dest" && tar --no-same-owner -xf -)
}

case "$dest" in
  s3://*)
    run aws s3 sync "$src/tiles" "$dest/tiles" --no-follow-symlinks --cache-control "$immutable"
    run aws s3 sync "$src" "$dest" --no-follow-symlinks --exclude "tiles/*" --exclude "embeddings/*" \
      --exclude catalog.json --cache-control "$short" --delete
    run aws s3 cp "$src/catalog.json" "$dest/catalog.json" --cache-control "$short"
    ;;
  *)
    run mkdir -p "$dest"
    copy_files -path ./tiles/\*
    copy_files ! -path ./tiles/\* ! -path ./embeddings/\* ! -path ./embeddings ! -path ./catalog.json
    run cp "$src/catalog.json" "$dest/catalog.json.tmp"
    run mv "$dest/catalog.json.tmp" "$dest/catalog.json"
    ;;
esac
