// deploy/k8s/run-cycle.sh against a modelled kubectl (no cluster runs here): the model answers the
// few calls the script makes — create a Job, read a Job's true conditions, read its pods' exit
// codes — from a scenario the test writes, and records what was created. The script must stop at
// a failed build Job at once (not sit out its timeout), count publish's exit 4 (nothing new) as a
// done cycle like the Slurm script, and fail on any other publish failure.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { cleanup, tempDir } from "../helpers/harness.ts";
import { DEPLOY, manifests } from "./pods.ts";

const dirs: string[] = [];
after(() => cleanup(...dirs));

// The model: `create -f FILE|-` prints a Job name by the manifest's component and keeps the
// manifest; `get job.batch/NAME` prints the next line of NAME.polls (the last one repeats), each
// line a ';'-separated list of "Type Reason" conditions; `get pods -l job-name=NAME` prints
// NAME.codes. Every call is appended to calls.log.
const MODEL = `#!/usr/bin/env bash
set -euo pipefail
S=$KUBE_MODEL_DIR
echo "$*" >> "$S/calls.log"
case "$1" in
  create)
    file=; prev=
    for a in "$@"; do [ "$prev" = -f ] && file=$a; prev=$a; done
    if [ "$file" = - ]; then body=$(cat); else body=$(cat "$file"); fi
    if grep -q 'component: build' <<<"$body"; then n=gridcast-build-m0d3l; else n=gridcast-publish-m0d3l; fi
    printf '%s\\n' "$body" > "$S/$n.yaml"
    echo "job.batch/$n" ;;
  get)
    if [ "$2" = pods ]; then
      for a in "$@"; do case "$a" in job-name=*) n=\${a#job-name=} ;; esac; done
      cat "$S/$n.codes" 2>/dev/null || true
    else
      for a in "$@"; do case "$a" in job.batch/*) n=\${a#job.batch/} ;; esac; done
      f="$S/$n.polls"
      [ -f "$f" ] || exit 0
      line=$(head -n 1 "$f")
      if [ "$(wc -l < "$f")" -gt 1 ]; then tail -n +2 "$f" > "$f.next" && mv "$f.next" "$f"; fi
      tr ';' '\\n' <<<"$line" | sed '/^$/d'
    fi ;;
  *) echo "model kubectl: $1 not modelled" >&2; exit 9 ;;
esac
`;

interface Scenario {
  build: string[];
  publish?: string[];
  publishCodes?: string;
  env?: Record<string, string>;
}

function runCycle(s: Scenario) {
  const dir = tempDir("gridcast-kube-model-");
  dirs.push(dir);
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "kubectl"), MODEL);
  chmodSync(join(bin, "kubectl"), 0o755);
  writeFileSync(join(dir, "gridcast-build-m0d3l.polls"), `${s.build.join("\n")}\n`);
  if (s.publish) writeFileSync(join(dir, "gridcast-publish-m0d3l.polls"), `${s.publish.join("\n")}\n`);
  if (s.publishCodes !== undefined) writeFileSync(join(dir, "gridcast-publish-m0d3l.codes"), s.publishCodes);
  const started = Date.now();
  const r = spawnSync("bash", [join(DEPLOY, "k8s/run-cycle.sh"), "weather"], {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, KUBE_MODEL_DIR: dir, GRIDCAST_POLL_S: "0", ...s.env },
    encoding: "utf8",
    timeout: 60_000,
  });
  const calls = existsSync(join(dir, "calls.log")) ? readFileSync(join(dir, "calls.log"), "utf8") : "";
  const publishCreated = existsSync(join(dir, "gridcast-publish-m0d3l.yaml"));
  const publishManifest = publishCreated ? readFileSync(join(dir, "gridcast-publish-m0d3l.yaml"), "utf8") : "";
  return { ...r, calls, publishCreated, publishManifest, seconds: (Date.now() - started) / 1000 };
}

describe("deploy/k8s/run-cycle.sh", () => {
  test("a build that completes is published, with the build Job's name as the build id", () => {
    const r = runCycle({ build: ["", "", "Complete "], publish: ["", "Complete "] });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /published build gridcast-build-m0d3l/);
    assert.match(r.publishManifest, /value: gridcast-build-m0d3l/);
    assert.match(r.calls, /--namespace weather/);
  });

  test("a failed build Job stops the cycle at once, names the Job and the reason, publishes nothing", () => {
    // The wait allows an hour; polling every 0 s, the failure is seen on the third look.
    const r = runCycle({ build: ["", "", "FailureTarget BackoffLimitExceeded;Failed BackoffLimitExceeded"] });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /build gridcast-build-m0d3l: failed BackoffLimitExceeded; nothing published/);
    assert.equal(r.publishCreated, false, "no publish Job after a failed build");
    assert.equal((r.calls.match(/^get /gm) ?? []).length, 3, "stopped at the poll that saw the failure");
  });

  test("a build that never finishes ends at its timeout with a non-zero status", () => {
    const r = runCycle({ build: [""], env: { GRIDCAST_BUILD_TIMEOUT_S: "0" } });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /build gridcast-build-m0d3l: timeout/);
    assert.equal(r.publishCreated, false);
  });

  test("publish's exit 4 (nothing new) is a done cycle, as in the Slurm script", () => {
    const r = runCycle({ build: ["Complete "], publish: ["", "Failed PodFailurePolicy"], publishCodes: "4\n" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /nothing new since the published build/);
  });

  test("any other publish failure fails the cycle", () => {
    const r = runCycle({ build: ["Complete "], publish: ["Failed BackoffLimitExceeded"], publishCodes: "1\n1\n1\n" });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /publish of build gridcast-build-m0d3l: failed BackoffLimitExceeded/);
  });

  test("the publish Job fails at once on exit 4 rather than retrying it", () => {
    const [job] = manifests("publish-job.yaml");
    const rules = job.spec.podFailurePolicy?.rules ?? [];
    const rule = rules.find((r: { onExitCodes?: { values: number[] } }) => r.onExitCodes?.values.includes(4));
    assert.ok(rule, "a podFailurePolicy rule for exit code 4");
    assert.equal(rule.action, "FailJob");
    assert.equal(rule.onExitCodes.operator, "In");
    assert.equal(rule.onExitCodes.containerName, job.spec.template.spec.containers[0].name);
  });
});
