#!/usr/bin/env bash
# One forecast cycle on Kubernetes: the sharded build Job, then the publish Job for that build.
#   deploy/k8s/run-cycle.sh [namespace]
# Apply config.yaml and serve.yaml once beforehand; run this after the store has the new cycle.
# Exit status: 0 published (or nothing new since the published build: publish's exit 4, as the
# Slurm script treats it); 1 the build Job or the publish Job failed, or a wait ran out (the
# failed Job's name and the reason Kubernetes gave are printed); the published build is then
# left as it was. Waits: GRIDCAST_BUILD_TIMEOUT_S (default 21600), GRIDCAST_PUBLISH_TIMEOUT_S
# (default 3600); each Job's state is polled every GRIDCAST_POLL_S seconds (default 10).
set -euo pipefail
here=$(dirname "$0")
ns=(--namespace "${1:-default}")
poll=${GRIDCAST_POLL_S:-10}

# Waits until the Job has the condition Complete or Failed, whichever comes first (kubectl wait
# --for=condition=complete alone would sit out its whole timeout on a failed Job). Prints the
# outcome: complete, failed <reason>, or timeout.
wait_job() {
  local job=$1 timeout=$2 waited=0 state
  while :; do
    state=$(kubectl get "${ns[@]}" "$job" \
      -o 'jsonpath={range .status.conditions[?(@.status=="True")]}{.type}{" "}{.reason}{"\n"}{end}')
    if grep -q '^Complete' <<<"$state"; then
      echo complete
      return
    fi
    if grep -q '^Failed' <<<"$state"; then
      echo "failed $(grep '^Failed' <<<"$state" | head -n 1 | cut -d' ' -f2-)"
      return
    fi
    if [ "$waited" -ge "$timeout" ]; then
      echo timeout
      return
    fi
    sleep "$poll"
    waited=$((waited + poll))
  done
}

job=$(kubectl create "${ns[@]}" -f "$here/build-job.yaml" -o name)   # job.batch/gridcast-build-xxxxx
name=${job#*/}
echo "build $name: waiting for every shard"
outcome=$(wait_job "$job" "${GRIDCAST_BUILD_TIMEOUT_S:-21600}")
if [ "$outcome" != complete ]; then
  echo "build $name: $outcome; nothing published (kubectl describe ${ns[*]} $job)" >&2
  exit 1
fi
pjob=$(sed "s/BUILD_JOB_NAME/$name/" "$here/publish-job.yaml" | kubectl create "${ns[@]}" -f - -o name)
outcome=$(wait_job "$pjob" "${GRIDCAST_PUBLISH_TIMEOUT_S:-3600}")
if [ "$outcome" = complete ]; then
  echo "published build $name"
  exit 0
fi
# publish exits 4 when the build holds nothing new; its Job fails at once on that code (its
# podFailurePolicy), and that is not a failed cycle.
codes=$(kubectl get pods "${ns[@]}" -l "job-name=${pjob#*/}" \
  -o 'jsonpath={range .items[*]}{.status.containerStatuses[0].state.terminated.exitCode}{"\n"}{end}')
if [ "${outcome%% *}" = failed ] && grep -qx 4 <<<"$codes"; then
  echo "build $name: nothing new since the published build; the published build stays"
  exit 0
fi
echo "publish of build $name: $outcome; the published build is unchanged (kubectl logs ${ns[*]} $pjob)" >&2
exit 1
