// A build never replaces the published one with less: a build that finds nothing to render exits
// non-zero with the reason and publishes nothing; one that lacks layers the published build has
// needs --allow-dropped-layers (build and publish alike).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { publishShards } from "../../src/pipeline/finalize.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build } from "./build-fixture.ts";

const BIN = resolve(import.meta.dirname, "../../bin/gridcast");
const dirs: string[] = [];
let storeDir: string;
const base = { maxZoom: 1, leads: [0] };

before(async () => {
  storeDir = await sampleStore();
  dirs.push(storeDir);
});
after(() => cleanup(...dirs));

function outDir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

const current = (out: string) => readlinkSync(join(out, "current"));

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, GRIDCAST_DEBUG: "" },
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

/** The sample store with every forecast group gone (embeddings only): nothing has a map layer. */
async function storeWithoutForecasts(): Promise<string> {
  const dir = await sampleStore();
  dirs.push(dir);
  renameSync(join(dir, "forecast"), join(dir, "not-forecast"));
  const rootFile = join(dir, "zarr.json");
  const root = JSON.parse(readFileSync(rootFile, "utf8"));
  for (const k of Object.keys(root.consolidated_metadata.metadata)) {
    if (k === "forecast" || k.startsWith("forecast/")) delete root.consolidated_metadata.metadata[k];
  }
  writeFileSync(rootFile, JSON.stringify(root));
  return dir;
}

describe("builds that would publish less", () => {
  test("an EO-only store (embeddings, no forecast group) builds its locate indexes and catalogue", async () => {
    const eo = await storeWithoutForecasts();
    const out = outDir();
    const r = cli(["build", "--store", eo, "--out", out, "--max-zoom", "1", "--json"]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(current(out), `builds/${report.build_id}`);
    assert.equal(report.totals.layers, 0);
    assert.ok(report.embeddings.items > 0 && report.embeddings.indexes > 0, JSON.stringify(report.embeddings));
    const dir = join(out, "current");
    const items = JSON.parse(readFileSync(join(dir, "embeddings/items.json"), "utf8")).items as string[];
    assert.equal(items.length, report.embeddings.items);
    const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
    assert.deepEqual(catalog.layers, []);
    // Built again with nothing new: exit 4, as for a store with maps.
    assert.equal(cli(["build", "--store", eo, "--out", out, "--max-zoom", "1"]).status, 4);
  });

  test("nothing to render: exit 2 with the reason, nothing published, the current build stays", async () => {
    const out = outDir();
    const good = await build({ store: storeDir, out, ...base, vars: ["t2m"] });
    // Neither map layers nor embedding items.
    const empty = await storeWithoutForecasts();
    rmSync(join(empty, "embeddings"), { recursive: true });
    const rootFile = join(empty, "zarr.json");
    const root = JSON.parse(readFileSync(rootFile, "utf8"));
    for (const k of Object.keys(root.consolidated_metadata.metadata)) {
      if (k === "embeddings" || k.startsWith("embeddings/")) delete root.consolidated_metadata.metadata[k];
    }
    writeFileSync(rootFile, JSON.stringify(root));
    const r = cli(["build", "--store", empty, "--out", out, "--max-zoom", "1", "--allow-dropped-layers"]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr.trim(),
      /^gridcast: nothing to render: the selection matches 0 layers .*no embedding items; nothing was published/,
    );
    assert.equal(current(out), `builds/${good.build_id}`);
    // Also with no published build at all: an empty build is never the first one either.
    const fresh = outDir();
    const first = cli(["build", "--store", empty, "--out", fresh, "--max-zoom", "1"]);
    assert.equal(first.status, 2, first.stderr);
    assert.throws(() => readlinkSync(join(fresh, "current")));
  });

  test("a --vars variable no selected group can draw fails the build by name unless --allow-missing-vars", async () => {
    const out = outDir();
    const args = ["build", "--store", storeDir, "--out", out, "--max-zoom", "1", "--leads", "0", "--no-orientation"];
    args.push("--groups", "alps", "--vars", "t2m,msl");
    const r = cli(args);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr.trim(), /^gridcast: --vars msl: no selected group has a map layer of it; nothing was built/);
    assert.throws(() => readlinkSync(join(out, "current")));
    const allowed = cli([...args, "--allow-missing-vars", "--json"]);
    assert.equal(allowed.status, 0, allowed.stderr);
    assert.equal(current(out), `builds/${JSON.parse(allowed.stdout).build_id}`);
  });

  test("a --groups group that cannot be read or draws nothing fails by name unless --allow-missing-groups", async () => {
    const out = outDir();
    const args = ["build", "--store", storeDir, "--out", out, "--max-zoom", "1", "--leads", "0", "--no-orientation"];
    // alps has no msl: asked for with a group that has it, alps would draw nothing.
    const noLayer = cli([...args, "--groups", "alps,global", "--vars", "msl"]);
    assert.equal(noLayer.status, 2, noLayer.stderr);
    assert.match(
      noLayer.stderr.trim(),
      /^gridcast: --groups forecast\/alps: no map layer of the selection .*nothing was built/,
    );
    assert.throws(() => readlinkSync(join(out, "current")));
    const allowed = cli([...args, "--groups", "alps,global", "--vars", "msl", "--allow-missing-groups", "--json"]);
    assert.equal(allowed.status, 0, allowed.stderr);
    const ids = JSON.parse(readFileSync(join(out, "current/catalog.json"), "utf8")).layers.map(
      (l: { id: string }) => l.id,
    );
    assert.ok(
      ids.length > 0 && ids.every((id: string) => id.startsWith("global.")),
      `global's msl layers only: ${ids}`,
    );
    // A named group whose metadata cannot be read.
    const broken = await sampleStore();
    dirs.push(broken);
    writeFileSync(join(broken, "forecast/alps/zarr.json"), "{ not json");
    const root = JSON.parse(readFileSync(join(broken, "zarr.json"), "utf8"));
    for (const k of Object.keys(root.consolidated_metadata.metadata)) {
      if (k.startsWith("forecast/alps")) delete root.consolidated_metadata.metadata[k];
    }
    writeFileSync(join(broken, "zarr.json"), JSON.stringify(root));
    const out2 = outDir();
    const args2 = ["build", "--store", broken, "--out", out2, "--max-zoom", "1", "--leads", "0", "--no-orientation"];
    const unreadable = cli([...args2, "--groups", "alps,global", "--vars", "t2m"]);
    assert.equal(unreadable.status, 2, unreadable.stderr);
    assert.match(unreadable.stderr.trim(), /^gridcast: --groups forecast\/alps cannot be read \(.*nothing was built/);
    assert.throws(() => readlinkSync(join(out2, "current")));
  });

  test("a --leads lead time no selected group has fails by name unless --allow-missing-leads", async () => {
    const out = outDir();
    const args = ["build", "--store", storeDir, "--out", out, "--max-zoom", "1", "--vars", "t2m", "--no-orientation"];
    args.push("--groups", "alps", "--leads", "0,999");
    const r = cli(args);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr.trim(), /^gridcast: --leads 999: no selected group has this lead time .*nothing was built/);
    assert.throws(() => readlinkSync(join(out, "current")));
    const allowed = cli([...args, "--allow-missing-leads", "--json"]);
    assert.equal(allowed.status, 0, allowed.stderr);
    assert.equal(JSON.parse(allowed.stdout).totals.entries, 1, "alps t2m at lead 0");
  });

  test("nothing new: exit 4 with one line, nothing published, no kept build removed", async () => {
    const out = outDir();
    const args = ["build", "--store", storeDir, "--out", out, "--max-zoom", "1", "--leads", "0", "--vars", "t2m"];
    args.push("--groups", "alps", "--no-orientation");
    for (const id of ["older", "good"]) assert.equal(cli([...args, "--build-id", id, "--no-reuse"]).status, 0);
    const r = cli([...args, "--keep-builds", "1"]);
    assert.equal(r.status, 4, r.stderr);
    // One line, not a build's summary: decided from the plan's fingerprints before any tile was
    // rendered or hard-linked, so nothing was staged or measured (no output figures).
    assert.equal(r.stdout, "nothing new since build good: nothing was published and no kept build was removed\n");
    const json = cli([...args, "--json"]);
    assert.equal(json.status, 4, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.unchanged, "good");
    assert.equal(report.output, null, "no partial build was assembled and measured");
    assert.equal(report.render_seconds, 0);
    assert.equal(report.totals.reused, report.totals.entries);
    assert.equal(current(out), "builds/good");
    assert.deepEqual(readdirSync(join(out, "builds")).sort(), ["good", "older"]);
    // --no-reuse renders anew and publishes, as before.
    const forced = cli([...args, "--no-reuse", "--json"]);
    assert.equal(forced.status, 0, forced.stderr);
    assert.equal(current(out), `builds/${JSON.parse(forced.stdout).build_id}`);
  });

  test("dropping layers needs --allow-dropped-layers; with it the narrower build is published", async () => {
    const out = outDir();
    const good = await build({ store: storeDir, out, ...base, vars: ["t2m", "tp_1h"] });
    const r = cli(["build", "--store", storeDir, "--out", out, "--max-zoom", "1", "--leads", "0", "--vars", "t2m"]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /would drop \d+ layers the published build .* has \(.*tp_1h.*\).*--allow-dropped-layers/);
    assert.equal(current(out), `builds/${good.build_id}`);
    // The same layers (or more) need no flag; with nothing new, nothing is published.
    const same = await build({ store: storeDir, out, ...base, vars: ["tp_1h", "t2m"] });
    assert.equal(same.unchanged, good.build_id);
    assert.equal(current(out), `builds/${good.build_id}`);
    const narrower = cli([
      ...["build", "--store", storeDir, "--out", out, "--max-zoom", "1", "--leads", "0", "--vars", "t2m"],
      "--allow-dropped-layers",
      "--json",
    ]);
    assert.equal(narrower.status, 0, narrower.stderr);
    assert.equal(current(out), `builds/${JSON.parse(narrower.stdout).build_id}`);
  });

  test("publish of shards checks dropped layers too", async () => {
    const out = outDir();
    const good = await build({ store: storeDir, out, ...base, vars: ["t2m", "tp_1h"] });
    const id = "narrow-shards";
    for (const index of [1, 2]) {
      await build({ store: storeDir, out, ...base, vars: ["t2m"], shard: { index, count: 2 }, buildId: id });
    }
    await assert.rejects(publishShards({ out, buildId: id, webDir: null }), /would drop \d+ layers/);
    assert.equal(current(out), `builds/${good.build_id}`);
    const done = await publishShards({ out, buildId: id, webDir: null, allowDroppedLayers: true });
    assert.equal(current(out), `builds/${done.build_id}`);
  });
});
