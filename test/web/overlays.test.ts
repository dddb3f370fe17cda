// Overlay tiles as a map client gets them: a store written by xarray + zarr-python 2 with analytic
// pressure and wind (test/python/overlay_store.py), a real `gridcast build`, and tiles fetched
// over HTTP from a running server, decoded by sharp. At known points: isobars anti-aliased
// (partial alpha across the line), no label cut or doubled at a tile seam, H/L at the low, arrows
// longer where the wind is stronger.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import sharp from "sharp";
import { arrowSites, arrowSpacing } from "../../src/render/arrows.ts";
import { cleanup, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const TILE = 256;
const Z = 5;
const WORLD = TILE * 2 ** Z;
// The low of the store's pressure (its cone rises 10 Pa per z 5 pixel out to 420 px).
const LOW = { lat: 50, lon: 12 };
const lowPx = {
  x: ((LOW.lon + 180) / 360) * WORLD,
  y: ((1 - Math.log(Math.tan(Math.PI / 4 + (LOW.lat * Math.PI) / 360)) / Math.PI) / 2) * WORLD,
};
// Sample positions are pixel centres; the isobar of value v lies (v − 100000) / 10 px from the low.

describe("overlay tiles over HTTP", () => {
  let root: string;
  let server: TestServer;
  const templates = new Map<string, string>();
  const cache = new Map<string, Promise<{ data: Buffer; channels: number }>>();

  before(async () => {
    root = tempDir("gridcast-overlays-");
    const store = join(root, "store");
    await run(PYTHON, [join(ROOT, "test/python/overlay_store.py"), store, String(LOW.lat), String(LOW.lon)]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", String(Z)];
    await run(process.execPath, ["bin/gridcast", ...args, "--vars", "isobars,wind_arrows"], { cwd: ROOT });
    const catalog = await (await fetch(`${server.url}/api/forecast/catalog`)).json();
    for (const l of catalog.layers) templates.set(l.id, l.runs[0].leads[0].tiles);
  });

  after(async () => {
    await server?.close();
    if (root) cleanup(root);
  });

  /** Tile z/x/y of a layer over HTTP, as RGBA. */
  function tile(layer: string, x: number, y: number): Promise<{ data: Buffer; channels: number }> {
    const key = `${layer}/${x}/${y}`;
    let got = cache.get(key);
    if (!got) {
      got = (async () => {
        const path = templates
          .get(layer)!
          .replace("{z}", String(Z))
          .replace("{x}", String(x))
          .replace("{y}", String(y));
        const res = await fetch(`${server.url}${path}`);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get("content-type"), "image/png");
        const png = Buffer.from(await res.arrayBuffer());
        const meta = await sharp(png).metadata();
        const { data } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
        return { data, channels: meta.channels ?? 0 };
      })();
      cache.set(key, got);
    }
    return got;
  }

  /** RGBA at world pixel (x, y) of the z 5 tiles. */
  async function pixel(layer: string, x: number, y: number): Promise<number[]> {
    const tx = Math.floor(x / TILE);
    const ty = Math.floor(y / TILE);
    const { data } = await tile(layer, tx, ty);
    const k = ((y - ty * TILE) * TILE + (x - tx * TILE)) * 4;
    return [...data.subarray(k, k + 4)];
  }

  test("isobars are anti-aliased: partial alpha across the 1016 hPa line, nothing between lines", async () => {
    const { channels } = await tile("global.isobars", Math.floor(lowPx.x / TILE), Math.floor(lowPx.y / TILE));
    assert.equal(channels, 4, "overlay tiles carry an alpha channel");
    let cored = 0;
    let soft = 0;
    let clear = 0;
    let ramped = 0;
    const n = 72;
    for (let k = 0; k < n; k++) {
      const a = (2 * Math.PI * k) / n;
      const alphas: number[] = [];
      for (let d = -3; d <= 3; d++) {
        const r = 160 + d; // 1016 hPa
        alphas.push(
          (
            await pixel("global.isobars", Math.floor(lowPx.x + r * Math.cos(a)), Math.floor(lowPx.y + r * Math.sin(a)))
          )[3],
        );
      }
      if (Math.max(...alphas) >= 200) cored++;
      if (alphas.some((x) => x > 0 && x < 200)) soft++;
      if (new Set(alphas).size >= 4) ramped++;
      const mid = await pixel(
        "global.isobars",
        Math.floor(lowPx.x + 180 * Math.cos(a)),
        Math.floor(lowPx.y + 180 * Math.sin(a)),
      );
      if (mid[3] === 0) clear++;
    }
    // Labels interrupt a line in a few places; the rest of it is drawn.
    assert.ok(cored >= 0.8 * n, `the line's core at ${cored} of ${n} angles`);
    assert.ok(soft >= 0.8 * n, `partial alpha across the line at ${soft} of ${n} angles`);
    assert.ok(clear >= 0.8 * n, `nothing halfway between two isobars at ${clear} of ${n} angles`);
    // Coverage ramps across the line: a hard edge over a flat halo gives at most three values.
    assert.ok(ramped >= 0.7 * n, `four or more alpha values across the line at ${ramped} of ${n} angles`);
  });

  test("labels: none cut or doubled at a tile seam, one per line within 350 px", async () => {
    // A 4 × 4 block of z 5 tiles around the low (1024 px square).
    const tx0 = Math.floor(lowPx.x / TILE) - 2;
    const ty0 = Math.floor(lowPx.y / TILE) - 2;
    const N = 4 * TILE;
    const ink = new Uint8Array(N * N);
    for (let a = 0; a < 4; a++) {
      for (let b = 0; b < 4; b++) {
        const { data } = await tile("global.isobars", tx0 + a, ty0 + b);
        for (let r = 0; r < TILE; r++) {
          for (let c = 0; c < TILE; c++) {
            const k = (r * TILE + c) * 4;
            // Label ink: the darkest shade, fully opaque (isobars are a lighter slate, the L is red).
            if (data[k + 3] >= 250 && data[k] < 32 && data[k + 1] < 38 && data[k + 2] < 48) {
              ink[(b * TILE + r) * N + a * TILE + c] = 1;
            }
          }
        }
      }
    }
    // Words: ink pixels within 6 px of each other.
    const seen = new Uint8Array(N * N);
    const words: { xs: number[]; ys: number[] }[] = [];
    for (let start = 0; start < N * N; start++) {
      if (!ink[start] || seen[start]) continue;
      const w = { xs: [] as number[], ys: [] as number[] };
      const stack = [start];
      seen[start] = 1;
      while (stack.length) {
        const k = stack.pop()!;
        const x = k % N;
        const y = (k - x) / N;
        w.xs.push(x);
        w.ys.push(y);
        for (let dy = -6; dy <= 6; dy++) {
          for (let dx = -6; dx <= 6; dx++) {
            const nx = x + dx;
            const ny = y + dy;
            if (nx < 0 || ny < 0 || nx >= N || ny >= N) continue;
            const nk = ny * N + nx;
            if (ink[nk] && !seen[nk]) {
              seen[nk] = 1;
              stack.push(nk);
            }
          }
        }
      }
      if (w.xs.length >= 12) words.push(w);
    }
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    const info = words.map((w) => {
      const cx = mean(w.xs);
      const cy = mean(w.ys);
      const r = Math.hypot(tx0 * TILE + cx + 0.5 - lowPx.x, ty0 * TILE + cy + 0.5 - lowPx.y);
      return { w, cx, cy, ring: Math.round(r / 40) };
    });
    assert.ok(info.length >= 8, `${info.length} labels in the block`);
    let acrossSeam = 0;
    for (const { w, cx, cy } of info) {
      for (const seam of [TILE, 2 * TILE, 3 * TILE]) {
        for (const xs of [w.xs, w.ys]) {
          const before = xs.filter((v) => v < seam).length;
          const after = xs.length - before;
          // A word touching a seam from one side must go on in the other tile.
          if (xs.some((v) => v === seam - 1 || v === seam)) {
            assert.ok(before >= 3 && after >= 3, `label at (${cx}, ${cy}) cut at the seam ${seam}`);
            acrossSeam++;
          }
        }
      }
    }
    assert.ok(acrossSeam >= 1, "some label crosses a seam of the block (the case under test)");
    for (const p of info) {
      for (const q of info) {
        if (p === q || p.ring !== q.ring) continue;
        const d = Math.hypot(p.cx - q.cx, p.cy - q.cy);
        assert.ok(d >= 350, `two labels of the ${p.ring * 4 + 1000} hPa line ${d.toFixed(0)} px apart`);
      }
    }
  });

  test("an L marks the low, its value (1000) under it", async () => {
    let red = 0;
    let below = 0;
    for (let dy = -12; dy <= 22; dy++) {
      for (let dx = -14; dx <= 14; dx++) {
        const [r, g, b, a] = await pixel("global.isobars", Math.floor(lowPx.x) + dx, Math.floor(lowPx.y) + dy);
        if (!(a > 200 && r > 120 && g < 80 && b < 80)) continue;
        if (dy <= 8) red++;
        else below++;
      }
    }
    assert.ok(red >= 15, `${red} red pixels at the low`);
    assert.ok(below >= 10, `${below} red pixels of the value under the L`);
  });

  test("arrow length grows with speed at known points", async () => {
    // u10 = 1 + 24 (lon + 180) / 359.5 m/s, v10 = 0: arrows point east, longer eastward.
    const spacing = arrowSpacing(40, Z, (0.5 / 360) * WORLD);
    const lengths: { speed: number; px: number }[] = [];
    for (const speed of [3, 8, 13, 18, 23]) {
      const lon = ((speed - 1) / 24) * 359.5 - 180;
      const near = { x: ((lon + 180) / 360) * WORLD, y: WORLD / 2 + 100 };
      const site = arrowSites(spacing, [near.x - spacing, near.y - spacing, near.x + spacing, near.y + spacing]).sort(
        (a, b) => Math.hypot(a.x - near.x, a.y - near.y) - Math.hypot(b.x - near.x, b.y - near.y),
      )[0];
      const dark = async (x: number) => {
        const [r, , , a] = await pixel("global.wind_arrows", x, site.y);
        return a >= 160 && r < 100;
      };
      assert.ok(await dark(site.x), `an arrow at the lattice point near ${lon.toFixed(1)}°`);
      let w = site.x;
      while (await dark(w - 1)) w--;
      let e = site.x;
      while (await dark(e + 1)) e++;
      lengths.push({ speed, px: e - w + 1 });
    }
    for (let k = 1; k < lengths.length; k++) {
      assert.ok(lengths[k].px >= lengths[k - 1].px + 3, `lengths by speed: ${JSON.stringify(lengths)}`);
    }
    assert.ok(lengths.at(-1)!.px >= 2.5 * lengths[0].px, JSON.stringify(lengths));
  });
});
