// deploy/ as a batch engine and a cluster would run it: every pod of the build Job (each index in
// parallel, one killed and retried, one run twice), then the publish Job, must equal one unsharded
// build byte for byte; two replicas of the serve Deployment on one PostgreSQL ledger must charge
// exactly under concurrent load. Commands and environments come from the manifests and the
// Containerfile alone (test/deploy/pods.ts), so a wrong command or variable fails here.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { expectedItems } from "../embeddings/fixtures.ts";
import { docsText } from "../helpers/docs.ts";
import { cleanup, sampleStore, tempDir, until } from "../helpers/harness.ts";
import { PG_ADMIN, pgAdmin } from "../helpers/prereqs.ts";
import { listFiles } from "../pipeline/build-fixture.ts";
import { configObjects, containerRun, DEPLOY, image, manifests, one, type Pod, start } from "./pods.ts";

const dirs: string[] = [];
let storeDir: string;
let outDir: string;
let refOut: string;
const JOB = `gridcast-build-${randomBytes(3).toString("hex")}`;
// The operator's settings: the ConfigMap as shipped, with zoom capped so the test stays small.
const config = configObjects();
config.configMaps["gridcast-config"].GRIDCAST_MAX_ZOOM = "1";

function podOf(name: string, labels: Record<string, string>, engineEnv: Record<string, string> = {}): Pod {
  return {
    name,
    labels,
    engineEnv,
    configMaps: config.configMaps,
    secrets: config.secrets,
    claims: { "gridcast-store": storeDir, "gridcast-output": outDir },
  };
}

before(async () => {
  storeDir = await sampleStore();
  outDir = tempDir("gridcast-k8s-out-");
  refOut = tempDir("gridcast-k8s-ref-");
  dirs.push(storeDir, outDir, refOut);
});
after(() => cleanup(...dirs));

describe("the image definition", () => {
  test("runs as the non-root user the pods ask for, listens where the probes look, checks /healthz", () => {
    const img = image();
    assert.deepEqual(img.entrypoint.slice(1), ["/app/bin/gridcast"]);
    assert.match(img.user, /^10001(:10001)?$/);
    assert.ok(img.expose.includes(Number(img.env.GRIDCAST_PORT)), "EXPOSE is the port the image's serve listens on");
    assert.match(img.healthcheck, /\/healthz/);
    assert.equal(img.env.GRIDCAST_HOST, "0.0.0.0", "reachable from outside the container");
    // What the runtime stage copies is enough to run the CLI from those paths alone.
    for (const p of ["/app/node_modules", "/app/src", "/app/bin", "/app/build", "/app/web"]) {
      assert.ok(img.copied.includes(p), `runtime stage copies ${p}`);
    }
    for (const file of ["build-job.yaml", "publish-job.yaml", "serve.yaml"]) {
      for (const d of manifests(file)) {
        const spec = d.kind === "Deployment" || d.kind === "Job" ? d.spec.template.spec : undefined;
        if (!spec) continue;
        assert.equal(spec.securityContext.runAsNonRoot, true, `${file}: non-root`);
        assert.equal(String(spec.securityContext.runAsUser), img.user.split(":")[0], `${file}: the image's user`);
      }
    }
  });

  test("the build stage installs with the README's commands", () => {
    const text = readFileSync(join(DEPLOY, "Containerfile"), "utf8");
    const readme = docsText();
    assert.match(text, /RUN npm ci --omit=dev/);
    assert.ok(readme.includes("npm ci"), "the README's install is npm ci too");
    assert.ok(readme.includes("`deploy/`"), "the README points operators to deploy/");
  });
});

describe("build Job over shared storage", () => {
  const job = () => one(manifests("build-job.yaml"), "Job");
  const podFor = (index: number, attempt = 0) =>
    podOf(
      `${JOB}-${index}-${attempt.toString(36)}${randomBytes(2).toString("hex")}`,
      {
        "batch.kubernetes.io/job-name": JOB,
        "batch.kubernetes.io/job-completion-index": String(index),
      },
      { JOB_COMPLETION_INDEX: String(index) },
    );
  const runOf = (index: number, attempt = 0) => containerRun(job().spec.template.spec, podFor(index, attempt));

  test("every index in parallel, one killed and retried, one run twice, then publish = one unsharded build", async () => {
    const j = job();
    assert.equal(j.spec.completionMode, "Indexed");
    const n: number = j.spec.completions;
    assert.ok(n >= 2, "a sharded build");

    // The reference: the same image and settings, one unsharded build.
    const ref = containerRun(j.spec.template.spec, {
      ...podFor(0),
      claims: { "gridcast-store": storeDir, "gridcast-output": refOut },
    });
    const refArgs = [...ref.argv.slice(0, 2), "build", "--build-id", "reference"];
    const refRan = await start({ argv: refArgs, env: ref.env }).done;
    assert.equal(refRan.code, 0, refRan.stderr);

    // Index 2's first pod is killed once it holds its shard lock (its node went away).
    const victim = 2 % n;
    const lockName = `${JOB}.shard-${victim + 1}-of-${n}.lock`;
    const first = start(runOf(victim));
    await until("the first pod takes its shard lock", () => existsSync(join(outDir, ".locks", lockName)), 60_000);
    first.child.kill("SIGKILL");
    const killed = await first.done;
    assert.equal(killed.signal, "SIGKILL", "killed before it finished");
    assert.ok(existsSync(join(outDir, ".locks", lockName)), "the killed pod left its lock");

    // Every index at once; index `victim` is the engine's retry (a new pod).
    const pods = Array.from({ length: n }, (_, i) => start(runOf(i, i === victim ? 1 : 0)));
    const ran = await Promise.all(pods.map((p) => p.done));
    ran.forEach((r, i) => {
      assert.equal(r.code, 0, `index ${i}: ${r.stderr}`);
    });
    assert.equal(existsSync(join(outDir, "current")), false, "shards do not publish");
    // The engine runs index 0 a second time (a retry after a lost status report): same result.
    const again = await start(runOf(0, 2)).done;
    assert.equal(again.code, 0, again.stderr);

    // The publish Job, with the build id run-cycle.sh gives it.
    const cycle = readFileSync(join(DEPLOY, "k8s/run-cycle.sh"), "utf8");
    const placeholder = /sed "s\/(\w+)\/\$name\/"/.exec(cycle)?.[1];
    assert.ok(placeholder, "run-cycle.sh fills the publish Job's build id");
    const publishJob = one(
      manifests("publish-job.yaml", (t) => t.replaceAll(placeholder, JOB)),
      "Job",
    );
    const pub = await start(containerRun(publishJob.spec.template.spec, podOf(`${JOB}-publish`, {}))).done;
    assert.equal(pub.code, 0, pub.stderr);
    assert.equal(readlinkSync(join(outDir, "current")), `builds/${JOB}`);

    const a = join(refOut, "builds", "reference");
    const b = join(outDir, "builds", JOB);
    const files = listFiles(a);
    assert.ok(files.filter((f) => f.startsWith("tiles/")).length > 100, "a real pyramid");
    assert.deepEqual(listFiles(b), files);
    // The catalog and manifest name their build, and so do their compressed twins.
    for (const f of files.filter((x) => !["catalog.json", "manifest.json"].includes(x.replace(/\.(br|gz)$/, "")))) {
      assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f);
    }
    const catalog = (dir: string) => {
      const { build_id, generated_at, ...rest } = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
      return rest;
    };
    assert.deepEqual(catalog(b), catalog(a));
    const manifest = JSON.parse(readFileSync(join(b, "manifest.json"), "utf8"));
    assert.equal(manifest.shards, n);
    assert.deepEqual(readdirSync(join(outDir, ".locks")), [], "no lock left behind");
  });
});

describe("serve Deployment: replicas on one PostgreSQL ledger", () => {
  let db: string;
  let dbName: string;
  before(async () => {
    const admin = await pgAdmin();
    dbName = `gridcast_k8s_${randomBytes(5).toString("hex")}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    const u = new URL(PG_ADMIN);
    u.pathname = `/${dbName}`;
    db = u.toString();
    if (!existsSync(join(outDir, "current"))) {
      // Run alone (--test-name-pattern): publish a build the plain way first.
      mkdirSync(outDir, { recursive: true });
      const r = containerRun(one(manifests("build-job.yaml"), "Job").spec.template.spec, {
        ...podOf("single", { "batch.kubernetes.io/job-name": "single" }),
      });
      const built = await start({ argv: [...r.argv.slice(0, 2), "build"], env: r.env }).done;
      assert.equal(built.code, 0, built.stderr);
    }
  });
  after(async () => {
    const admin = await pgAdmin();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  });

  test("two replicas charge exactly: N credits buy N item reads across both, no more", async () => {
    const docs = manifests("serve.yaml");
    const deployment = one(docs, "Deployment");
    assert.ok(deployment.spec.replicas >= 2, "more than one replica");
    const spec = deployment.spec.template.spec;
    const c = spec.containers[0];
    assert.equal(c.readinessProbe.httpGet.path, "/readyz");
    assert.equal(c.livenessProbe.httpGet.path, "/healthz");
    const service = one(docs, "Service");
    assert.equal(service.spec.ports[0].targetPort, c.ports[0].name);
    assert.deepEqual(one(docs, "PodDisruptionBudget").spec.selector.matchLabels, deployment.spec.selector.matchLabels);
    assert.deepEqual(deployment.spec.selector.matchLabels, service.spec.selector);

    // The operator's ledger secret; each replica gets its own address (here: a port each).
    const secrets = { ...config.secrets, "gridcast-ledger": { GRIDCAST_DB: db } };
    const replicas = [0, 1].map((i) => {
      const pod = { ...podOf(`gridcast-${i}`, deployment.spec.template.metadata.labels), secrets };
      pod.hostOverrides = { GRIDCAST_HOST: "127.0.0.1", GRIDCAST_PORT: "0" };
      return start(containerRun(spec, pod));
    });
    try {
      const urls = await Promise.all(
        replicas.map((r) =>
          until("a replica listens", () => /serving on (http:\/\/\S+)/.exec(r.stderr())?.[1], 60_000),
        ),
      );
      for (const u of urls) {
        await until("ready", async () => (await fetch(`${u}${c.readinessProbe.httpGet.path}`)).status === 200, 60_000);
      }
      // A key made with the image's CLI against the same ledger, as an operator would.
      const cli = containerRun(spec, { ...podOf("keys", {}), secrets });
      const made = await start({
        argv: [
          ...cli.argv.slice(0, 2),
          "keys",
          "create",
          "--json",
          "--name",
          "k8s",
          "--scopes",
          "embeddings",
          "--credits",
          "150",
          "--rate",
          "0",
        ],
        env: cli.env,
      }).done;
      assert.equal(made.code, 0, made.stderr);
      const { key, record } = JSON.parse(made.stdout);
      const item = expectedItems().find((x) => x.includes("~map~"))!;
      const statuses: number[] = [];
      let next = 0;
      const total = 200;
      await Promise.all(
        Array.from({ length: 24 }, async () => {
          while (next < total) {
            const i = next++;
            const res = await fetch(`${urls[i % 2]}/api/embeddings/item/${item}`, { headers: { "X-API-Key": key } });
            await res.arrayBuffer();
            statuses.push(res.status);
          }
        }),
      );
      assert.equal(statuses.filter((s) => s === 200).length, 150, `statuses: ${statuses.join(",")}`);
      assert.equal(statuses.filter((s) => s === 402).length, 50);
      const client = new pg.Client(db);
      await client.connect();
      try {
        const [{ credits }] = (await client.query("SELECT credits FROM keys WHERE id = $1", [record.id])).rows;
        assert.equal(Number(credits), 0);
        const [{ n, cost }] = (
          await client.query("SELECT count(*) AS n, sum(cost) AS cost FROM usage WHERE key_id = $1", [record.id])
        ).rows;
        assert.equal(Number(n), 150);
        assert.equal(Number(cost), 150);
      } finally {
        await client.end();
      }
    } finally {
      for (const r of replicas) r.child.kill("SIGTERM");
      await Promise.all(replicas.map((r) => r.done));
    }
  });
});
