// Build life cycle: incremental reuse, shards + publish equal one build, pruning to keep_builds,
// the out-dir lock, stale partial builds, and failures that leave the published build alone.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { publishShards } from "../../src/pipeline/finalize.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build, listFiles } from "./build-fixture.ts";

const BIN = resolve(import.meta.dirname, "../../bin/gridcast");
const dirs: string[] = [];
let storeDir: string;
const small = { maxZoom: 2, groups: ["global", "europe"], vars: ["t2m", "tp_1h"], leads: [0, 3] };

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
const builds = (out: string) => readdirSync(join(out, "builds")).sort();

function cli(args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, GRIDCAST_DEBUG: "" },
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe("incremental builds", () => {
  test("a second build with no change renders and publishes nothing; one with a new lead hard-links every other tile", async () => {
    const out = outDir();
    const first = await build({ store: storeDir, out, ...small });
    assert.equal(first.totals.rendered, first.totals.entries);
    const same = await build({ store: storeDir, out, ...small, keepBuilds: 1 });
    assert.equal(same.totals.rendered, 0);
    assert.equal(same.unchanged, first.build_id, "nothing new: the published build is named");
    assert.equal(same.published, false);
    assert.deepEqual(same.removed, [], "keep_builds 1 removes nothing when nothing is published");
    assert.equal(current(out), `builds/${first.build_id}`);
    assert.deepEqual(readdirSync(join(out, "builds")), [first.build_id], "no partial build left behind");

    const second = await build({ store: storeDir, out, ...small, leads: [0, 3, 6] });
    assert.equal(second.totals.reused, first.totals.entries);
    assert.equal(second.totals.rendered, second.totals.entries - first.totals.entries);
    const a = join(out, "builds", first.build_id, "tiles");
    const b = join(out, "builds", second.build_id, "tiles");
    const files = listFiles(a);
    const now = new Set(listFiles(b));
    // Layer tiles are linked; only the shared empty tile is written afresh.
    for (const f of files.filter((x) => x !== "empty.png")) {
      assert.ok(now.has(f), f);
      assert.equal(statSync(join(a, f)).ino, statSync(join(b, f)).ino, f);
    }
    assert.equal(current(out), `builds/${second.build_id}`);

    // A new max zoom changes every fingerprint; a lead not built before is rendered, the rest reused.
    const deeper = await build({ store: storeDir, out, ...small, maxZoom: 3 });
    assert.equal(deeper.totals.reused, 0);
    const more = await build({ store: storeDir, out, ...small, maxZoom: 3, leads: [0, 3, 6] });
    assert.equal(more.totals.rendered, 4, "4 layers × the new lead 6");
    assert.equal(more.totals.reused, 8);
    const noReuse = await build({ store: storeDir, out, ...small, maxZoom: 3, reuse: false });
    assert.equal(noReuse.totals.reused, 0);
  });
});

describe("shards", () => {
  test("shard 1/2 + 2/2 + publish equals one unsharded build, file for file", async () => {
    const one = outDir();
    const two = outDir();
    const opts = { store: storeDir, ...small, runs: "all" as const };
    const whole = await build({ ...opts, out: one });
    const id = "sharded-1";
    const [s1, s2] = await Promise.all([
      build({ ...opts, out: two, buildId: id, shard: { index: 1, count: 2 }, concurrency: 1 }),
      build({ ...opts, out: two, buildId: id, shard: { index: 2, count: 2 }, concurrency: 1 }),
    ]);
    assert.equal(s1.published, false);
    assert.ok(s1.totals.entries > 0 && s2.totals.entries > 0);
    assert.equal(s1.totals.entries + s2.totals.entries, whole.totals.entries);
    assert.equal(existsSync(join(two, "current")), false, "shards do not publish");
    const pub = await publishShards({ out: two, buildId: id, webDir: null });
    assert.equal(pub.shards, 2);
    assert.equal(current(two), `builds/${id}`);

    const a = join(one, "builds", whole.build_id);
    const b = join(two, "builds", id);
    const files = listFiles(a);
    assert.deepEqual(listFiles(b), files);
    // The catalog and manifest name their build (and so do their compressed twins).
    const same = files.filter((f) => !["catalog.json", "manifest.json"].includes(f.replace(/\.(br|gz)$/, "")));
    // Every tile, every 512 px @2x tile of the base layers, and the shared empty tile.
    assert.ok((whole.totals.hidpi ?? 0) > 0, "@2x tiles built");
    assert.equal(same.filter((f) => f.startsWith("tiles/")).length, whole.totals.tiles + whole.totals.hidpi! + 1);
    for (const f of same) assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f);
    const catalog = (dir: string) => {
      const { build_id, generated_at, ...rest } = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
      return rest;
    };
    assert.deepEqual(catalog(b), catalog(a));
    const manifest = JSON.parse(readFileSync(join(b, "manifest.json"), "utf8"));
    assert.deepEqual(new Set(manifest.entries.map((e: { shard: number }) => e.shard)), new Set([1, 2]));
  });

  test("publish refuses an incomplete set of shards, and --shard needs --build-id", async () => {
    const out = outDir();
    await build({ store: storeDir, out, ...small, buildId: "half", shard: { index: 2, count: 3 } });
    const r = cli(["publish", "--out", out, "--build-id", "half"]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr.trim(), /^gridcast: build half is incomplete: shards 1, 3 of 3 not finished \(have 2\)$/);
    assert.equal(existsSync(join(out, "current")), false);
    assert.ok(existsSync(join(out, "builds", "half.partial")), "the shards' work is kept for a retry");
    // Another build in the same out dir cleans stale partial builds, but not one with finished shards.
    const other = await build({ store: storeDir, out, ...small });
    assert.deepEqual(other.cleaned, []);
    assert.ok(existsSync(join(out, "builds", "half.partial", "manifest.shard-2-of-3.json")));
    // The published manifest is served with the build: it does not name the store.
    const m = readFileSync(join(out, "builds", other.build_id, "manifest.json"), "utf8");
    assert.equal(m.includes(storeDir), false);
    await assert.rejects(build({ store: storeDir, out, shard: { index: 1, count: 2 } }), /--shard needs --build-id/);
  });
});

describe("output dir life cycle", () => {
  test("keeps keep_builds builds, never the published one, and says what it removed", async () => {
    const out = outDir();
    // reuse: false renders anew and publishes even the same tiles (else nothing new is published).
    const tiny = { store: storeDir, out, maxZoom: 1, groups: ["alps"], vars: ["t2m"], leads: [0], reuse: false };
    const a = await build({ ...tiny, buildId: "a", keepBuilds: 2 });
    const b = await build({ ...tiny, buildId: "b", keepBuilds: 2 });
    assert.deepEqual(b.removed, []);
    const c = await build({ ...tiny, buildId: "c", keepBuilds: 2 });
    assert.deepEqual(c.removed, [a.build_id]);
    assert.deepEqual(builds(out), ["b", "c"]);
    const d = await build({ ...tiny, buildId: "d", keepBuilds: 1 });
    assert.deepEqual(d.removed.sort(), ["b", "c"]);
    assert.deepEqual(builds(out), ["d"]);
    assert.equal(current(out), "builds/d");
    await assert.rejects(build({ ...tiny, buildId: "d" }), /build d already exists/);
  });

  test("a lock keeps a second build out; stale locks and partial builds of killed builds are cleaned", async () => {
    const out = outDir();
    const tiny = { store: storeDir, out, maxZoom: 1, groups: ["alps"], vars: ["t2m"], leads: [0] };
    const [x, y] = await Promise.allSettled([build(tiny), build(tiny)]);
    assert.equal([x, y].filter((r) => r.status === "fulfilled").length, 1, "exactly one of two concurrent builds runs");
    const refused = [x, y].find((r) => r.status === "rejected") as PromiseRejectedResult;
    assert.match(String(refused.reason), /is writing this out dir; if it is gone, remove .*build\.lock/);

    // A lock left by a process that no longer exists, and a half-written build beside it.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const host = (await import("node:os")).hostname();
    const lock = { pid: Number(dead.stdout), host, build_id: "killed", shard: null, started: "2026-01-01T00:00:00Z" };
    writeFileSync(join(out, ".locks", "build.lock"), JSON.stringify(lock));
    mkdirSync(join(out, "builds", "killed.partial", "tiles", "3"), { recursive: true });
    for (let i = 0; i < 200; i++) writeFileSync(join(out, "builds", "killed.partial", "tiles", "3", `${i}.png`), "x");
    // Its removal is announced, runs beside the render, and is over when the build returns.
    const lines: string[] = [];
    const progress = Object.assign(new Writable({ write: (c, _e, next) => next(void lines.push(String(c))) }), {
      isTTY: false,
    });
    const r = await build({ ...tiny, progress });
    assert.deepEqual(r.cleaned, ["killed.partial"]);
    assert.equal(existsSync(join(out, "builds", "killed.partial")), false);
    assert.deepEqual(
      builds(out).filter((n) => n.includes("killed")),
      [],
      "nothing of it is left, under any name",
    );
    const said = lines.join("");
    assert.match(said, /removing what an interrupted build left \(builds\/killed\.partial\) in the background\n/);
    assert.match(said, /removed what the interrupted build left in \d+\.\d s\n/);

    // A live holder (this very process) is respected.
    writeFileSync(join(out, ".locks", "build.lock"), JSON.stringify({ ...lock, pid: process.pid }));
    await assert.rejects(build(tiny), /build killed \(pid \d+ on .*\) is writing this out dir/);
  });

  test("an unreadable store or layer exits non-zero with one line and leaves the published build", async () => {
    const out = outDir();
    const good = await build({ store: storeDir, out, maxZoom: 1, vars: ["t2m"], leads: [0] });
    const missing = cli(["build", "--store", join(out, "no-such-store"), "--out", out, "--max-zoom", "1"]);
    assert.equal(missing.status, 2);
    const lines = missing.stderr.trim().split("\n");
    assert.equal(lines.length, 1, missing.stderr);
    assert.match(lines[0], /^gridcast: cannot read the store .*no-such-store: /);

    // Same metadata, garbage chunk bytes: the layer cannot be decoded.
    const broken = await sampleStore();
    dirs.push(broken);
    const chunks = join(broken, "forecast", "global", "t2m", "c");
    for (const f of listFiles(chunks)) writeFileSync(join(chunks, f), "not zstd at all");
    const bad = await new Promise<{ status: number | null; stderr: string }>((done) => {
      const child = spawn(process.execPath, [
        BIN,
        "build",
        "--store",
        broken,
        "--out",
        out,
        "--max-zoom",
        "1",
        "--vars",
        "t2m",
      ]);
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (status) => done({ status, stderr }));
    });
    assert.notEqual(bad.status, 0);
    const last = bad.stderr
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("gridcast:"));
    assert.equal(last.length, 1, bad.stderr);
    assert.match(
      last[0],
      /^gridcast: cannot render global\.t2m run 2026-11-20T12:00:00: stored data could not be decoded/,
    );

    assert.equal(current(out), `builds/${good.build_id}`);
    assert.deepEqual(builds(out), [good.build_id], "no partial build left behind");
    assert.deepEqual(readdirSync(join(out, ".locks")), [], "locks released");
  });
});
