#!/usr/bin/env bash
# One forecast cycle on Kubernetes: the sharded build Job, then the publish Job for that build.
#   deploy/k8s/run-cycle.sh [namespace]
# Apply config.yaml and serve.yaml once beforehand; run this after the store has the new cycle.
set -euo pipefail
here=$(dirname "$0")
ns=(--namespace "${1:-default}")
job=$(kubectl create "${ns[@]}" -f "$here/build-job.yaml" -o name)   # job.batch/gridcast-build-xxxxx
name=${job#*/}
echo "build $name: waiting for every shard"
kubectl wait "${ns[@]}" --for=condition=complete "$job" --timeout=6h
sed "s/BUILD_JOB_NAME/$name/" "$here/publish-job.yaml" | kubectl create "${ns[@]}" -f - -o name |
  xargs -I{} kubectl wait "${ns[@]}" --for=condition=complete {} --timeout=1h
echo "published build $name"
