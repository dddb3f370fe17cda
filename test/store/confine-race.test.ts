// Confinement under a race: while a directory of the store (or of the published build) is swapped
// again and again with a symlink to a directory outside it (renameat2 RENAME_EXCHANGE, from
// test/python/swap_loop.py), no read ever returns the file waiting outside: not /data chunk
// requests over HTTP, not the directory backend's reads (node:fs, the addon's openat2, the
// addon's component walk), not the build's static files. A symlink inside the build that points
// at a private file (an embedding index) is refused as well.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { nativeAddon } from "../../src/native.ts";
import { DirectoryBackend } from "../../src/store/directory-backend.ts";
import { cleanup, get, PYTHON, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const SWAP = join(import.meta.dirname, "../python/swap_loop.py");
const SENTINEL = Buffer.from("outside-the-store-sentinel-bytes-0123456789");
const ROUNDS = 400;

let store: string;
let outside: string;
let srv: TestServer;
let key: string;
let chunk: Buffer;
let legend: Buffer;
let buildDir: string;

before(async () => {
  store = realpathSync(await sampleStore());
  outside = tempDir();
  // What a swapped directory would lead to: files at the same relative paths, outside.
  mkdirSync(join(outside, "chunks", "0", "0"), { recursive: true });
  writeFileSync(join(outside, "chunks", "0", "0", "1"), SENTINEL);
  mkdirSync(join(outside, "legends"));
  writeFileSync(join(outside, "legends", "global.t2m.json"), SENTINEL);
  symlinkSync(join(outside, "chunks"), join(store, "forecast/global/msl/c/0.swap"));
  chunk = readFileSync(join(store, "forecast/global/msl/c/0/0/0/1"));
  srv = await testServer(store);
  key = await srv.key(["weather"]);
  await build({ store, out: srv.running.ctx.settings.out, maxZoom: 0, groups: ["global"], vars: ["t2m"] });
  buildDir = realpathSync(join(srv.running.ctx.settings.out, "current"));
  legend = readFileSync(join(buildDir, "legends", "global.t2m.json"));
  symlinkSync(join(outside, "legends"), join(buildDir, "legends.swap"));
});
after(async () => {
  await srv.close();
  cleanup(store, outside);
});

/** Swaps `a` and `b` until stopped; resolves once the first exchange is made. */
async function swapping(a: string, b: string): Promise<ChildProcess> {
  const proc = spawn(PYTHON, [SWAP, a, b], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((ok, fail) => {
    proc.stdout!.once("data", () => ok());
    proc.once("exit", (code) => fail(new Error(`swap_loop.py exited ${code}`)));
  });
  return proc;
}

async function stop(proc: ChildProcess, a: string, b: string): Promise<void> {
  const exited = new Promise((ok) => proc.once("exit", ok));
  proc.kill("SIGKILL");
  await exited;
  // Leave the real directory where it belongs.
  if (lstatSync(a).isSymbolicLink()) {
    renameSync(a, `${a}.tmp`);
    renameSync(b, a);
    renameSync(`${a}.tmp`, b);
  }
}

/**
 * Runs `read` ROUNDS times, 8 at a time, and on until the real file has been read once (a loaded
 * machine can leave the swapping process off the CPU, in one state, for a whole burst of reads;
 * at most 30 s more); counts what came back.
 */
async function hammer(read: () => Promise<Uint8Array | undefined>, real: Buffer) {
  const seen = { real: 0, outside: 0, none: 0, other: 0 };
  let next = 0;
  const until = Date.now() + 30_000;
  const more = () => next++ < ROUNDS || (seen.real === 0 && Date.now() < until);
  const worker = async () => {
    while (more()) {
      const got = await read().catch(() => undefined);
      if (!got) seen.none++;
      else if (Buffer.from(got).equals(SENTINEL)) seen.outside++;
      else if (Buffer.from(got).equals(real)) seen.real++;
      else seen.other++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return seen;
}

test("store reads never follow a directory swapped for a symlink out of the store", async () => {
  const dir = join(store, "forecast/global/msl/c/0");
  const swap = `${dir}.swap`;
  const backend = new DirectoryBackend(store);
  const rel = "forecast/global/msl/c/0/0/0/1";
  const addon = nativeAddon();
  const ways: [string, () => Promise<Uint8Array | undefined>][] = [
    [
      "/data over HTTP",
      async () => {
        const r = await get(`${srv.url}/data/datasets/forecast~global/zarr/msl/c/0/0/0/1`, { "X-API-Key": key });
        return r.status === 200 ? r.body : undefined;
      },
    ],
    ["get", () => backend.get(rel)],
    ["getRange", () => backend.getRange(rel, { offset: 0, length: SENTINEL.length })],
    ["getInto (node:fs)", () => backend.getInto(rel, (n) => new Uint8Array(n))],
  ];
  if (addon) {
    ways.push(["getInto (addon, openat2)", () => backend.getInto(rel, (n) => new Uint8Array(n), 1 << 16)]);
    ways.push([
      "addon readFile (component walk)",
      async () => {
        const buf = new Uint8Array(1 << 16);
        const n = await addon.readFile(rel, buf, store, true);
        return n >= 0 ? buf.subarray(0, n) : undefined;
      },
    ]);
  }
  const proc = await swapping(dir, swap);
  try {
    for (const [name, read] of ways) {
      const real = name === "getRange" ? chunk.subarray(0, SENTINEL.length) : chunk;
      const seen = await hammer(read, real);
      assert.equal(seen.outside, 0, `${name}: ${JSON.stringify(seen)}`);
      assert.equal(seen.other, 0, `${name}: ${JSON.stringify(seen)}`);
      assert.ok(seen.real > 0, `${name} still reads the store: ${JSON.stringify(seen)}`);
    }
  } finally {
    await stop(proc, dir, swap);
  }
});

test("build files never follow a directory swapped for a symlink out of the build", async () => {
  const dir = join(buildDir, "legends");
  const swap = `${dir}.swap`;
  const proc = await swapping(dir, swap);
  try {
    const seen = await hammer(async () => {
      const r = await get(`${srv.url}/legends/global.t2m.json`);
      return r.status === 200 ? r.body : undefined;
    }, legend);
    assert.equal(seen.outside, 0, JSON.stringify(seen));
    assert.ok(seen.real > 0, JSON.stringify(seen));
  } finally {
    await stop(proc, dir, swap);
  }
});

test("a symlink inside the build to a private file is refused; one to a public file is served", async () => {
  symlinkSync("embeddings", join(buildDir, "public-embeddings"));
  symlinkSync(join(buildDir, "legends", "global.t2m.json"), join(buildDir, "legend-link.json"));
  mkdirSync(join(buildDir, "embeddings"), { recursive: true });
  writeFileSync(join(buildDir, "embeddings", "items.json"), SENTINEL);
  symlinkSync("embeddings/items.json", join(buildDir, "items-link.json"));
  for (const p of ["/items-link.json", "/public-embeddings/items.json"]) {
    const r = await get(`${srv.url}${p}`);
    assert.equal(r.status, 404, p);
    assert.ok(!r.body.includes(SENTINEL), p);
  }
  const ok = await get(`${srv.url}/legend-link.json`);
  assert.equal(ok.status, 200);
  assert.ok(ok.body.equals(legend));
});
