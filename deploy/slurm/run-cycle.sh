#!/bin/bash
# After each forecast cycle: a build as a Slurm job array of N shards, then one publish job that
# runs only when every shard succeeded (--dependency=afterok). Prints the two job ids.
#
# usage: run-cycle.sh [N]        N shards (default GRIDCAST_SHARD_TASKS, else 4)
# Environment: GRIDCAST_STORE, GRIDCAST_OUT (shared storage every node sees), optional
# GRIDCAST_BUILD_ID (default: build-<UTC time>), GRIDCAST_CMD, GRIDCAST_BUILD_ARGS, SBATCH_ARGS
# (extra sbatch flags: partition, account, time limit).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tasks=${1:-${GRIDCAST_SHARD_TASKS:-4}}
: "${GRIDCAST_STORE:?set GRIDCAST_STORE to the store root}"
: "${GRIDCAST_OUT:?set GRIDCAST_OUT to the build output directory}"
export GRIDCAST_BUILD_ID=${GRIDCAST_BUILD_ID:-build-$(date -u +%Y%m%dT%H%M%SZ)}
# shellcheck disable=SC2086 # SBATCH_ARGS holds several flags
build=$(sbatch --parsable --export=ALL --array="0-$((tasks - 1))" ${SBATCH_ARGS:-} "$here/build-array.sbatch")
build=${build%%;*}
# shellcheck disable=SC2086
publish=$(sbatch --parsable --export=ALL --dependency="afterok:$build" --kill-on-invalid-dep=yes \
  ${SBATCH_ARGS:-} "$here/publish.sbatch")
echo "build $GRIDCAST_BUILD_ID: array job $build ($tasks shards), publish job ${publish%%;*}"
