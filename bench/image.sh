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
  headers=$(find node_modules/node -path '*/include/node/node_api.h' | head -n 1)
  [ -n "$headers" ] || { say "no Node.js headers under node_modules/node: run npm ci first"; exit 1; }
  install -D -m 755 node_modules/node/bin/node "$work/rootfs/usr/local/bin/node"
  rm -rf "$work/rootfs/usr/local/include/node" "$work/rootfs/usr/local/lib/node_modules/npm"
  mkdir -p "$work/rootfs/usr/local/include" "$work/rootfs/usr/local/lib/node_modules" "$work/rootfs/usr/local/etc"
  cp -r "$(dirname "$headers")" "$work/rootfs/usr/local/include/node"
  cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$work/rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  # This machine reaches the package registries through its own certificate authority: the base
  # trusts what the machine trusts, as an operator's base image would trust their network's.
  install -D -m 644 /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nfund=false\naudit=false\nupdate-notifier=false\n' \
    >"$work/rootfs/usr/local/etc/npmrc"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["node"]' - "$base" >/dev/null
fi
say "base image: $(podman image inspect --format '{{.Size}}' "$base" | awk '{printf "%.0f MB", $1/1e6}')"

start=$(date +%s)
podman build -q --format docker --isolation chroot --network host --build-arg NODE_IMAGE="$base" -f deploy/Containerfile -t gridcast:bench . >"$work/build.log"
took=$(($(date +%s) - start))
size=$(podman image inspect --format '{{.Size}}' gridcast:bench)
say "built gridcast:bench in ${took} s"

# Run it as the manifests do: the image's user and environment, the store and output as volumes.
# Containers cannot start in this sandbox (the OCI runtimes are not allowed to set rlimits here),
# so the image's own root file system is mounted and entered with chroot instead: the same files,
# user and variables, on this kernel.
vol=$(mktemp -d)
mkdir -p "$vol/output"
# The store is the forecast pipeline's output, written before the image reads it.
node bin/gridcast sample --preset tiny --out "$vol/store" >/dev/null
chown -R 10001:10001 "$vol"
ctr=$(podman create gridcast:bench)
mnt=$(podman mount "$ctr")
mounted=()
bind() { mkdir -p "$mnt$2"; mount --bind "$1" "$mnt$2"; mounted=("$mnt$2" "${mounted[@]}"); }
cleanup() {
  if [ -n "${server:-}" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; fi
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
  podman umount "$ctr" >/dev/null; podman rm -f "$ctr" >/dev/null; rm -rf "$vol"
}
trap cleanup EXIT
bind /proc /proc
bind /dev /dev
bind "$vol/store" /srv/store
bind "$vol/output" /srv/output
mapfile -t image_env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' gridcast:bench | sed '/^$/d')
user=$(podman image inspect --format '{{.Config.User}}' gridcast:bench)
mapfile -t entry < <(podman image inspect --format '{{range .Config.Entrypoint}}{{println .}}{{end}}' gridcast:bench | sed '/^$/d')
inimage() { (cd "$mnt/app" && chroot --userspec="$user" "$mnt" /usr/bin/env -i HOME=/tmp "${image_env[@]}" "$@"); }
inimage "${entry[@]}" --help >/dev/null
[ "$(inimage node -e 'console.log(process.getuid())')" = 10001 ]
inimage GRIDCAST_MAX_ZOOM=1 "${entry[@]}" build | tail -n 4
port=18089
inimage GRIDCAST_PORT=$port GRIDCAST_DB=/tmp/ledger.db "${entry[@]}" serve --quiet &
server=$!
for _ in $(seq 1 60); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "http://127.0.0.1:$port/api/forecast/catalog" -o /dev/null
# The image's HEALTHCHECK command, as the engine would run it inside the container.
mapfile -t check < <(podman image inspect --format '{{range .Config.Healthcheck.Test}}{{println .}}{{end}}' gridcast:bench | sed '/^$/d')
[ "${check[0]}" = CMD ] && inimage GRIDCAST_PORT=$port "${check[@]:1}" && health=healthy || health=unhealthy
echo "image gridcast:bench: $(awk -v s="$size" 'BEGIN{printf "%.0f MB", s/1e6}') (base $(podman image inspect --format '{{.Size}}' "$base" | awk '{printf "%.0f MB", $1/1e6}')), built in ${took} s, runs as uid $user, serve ${health}"
