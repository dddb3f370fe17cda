// The nearest-cell index of unstructured grids: the same cell as a search of every cell (by
// great-circle distance, ties to the lower cell number), found by looking at a few cells only.
import assert from "node:assert/strict";
import { test } from "node:test";
import { nativeAddon, useNativeAddon } from "../../src/native.ts";
import { CellIndex } from "../../src/store/cell-index.ts";
import { healpixCentres } from "../../src/store/healpix.ts";

const RAD = Math.PI / 180;

/** Unit vectors of the cells, for the search of every cell. */
function vectors(lat: Float64Array, lon: Float64Array): Float64Array {
  const v = new Float64Array(lat.length * 3);
  for (let i = 0; i < lat.length; i++) {
    v[3 * i] = Math.cos(lat[i] * RAD) * Math.cos(lon[i] * RAD);
    v[3 * i + 1] = Math.cos(lat[i] * RAD) * Math.sin(lon[i] * RAD);
    v[3 * i + 2] = Math.sin(lat[i] * RAD);
  }
  return v;
}

function bruteNearest(v: Float64Array, plat: number, plon: number): number {
  let best = -1;
  let bestDot = Number.NEGATIVE_INFINITY;
  const qx = Math.cos(plat * RAD) * Math.cos(plon * RAD);
  const qy = Math.cos(plat * RAD) * Math.sin(plon * RAD);
  const qz = Math.sin(plat * RAD);
  for (let i = 0; i < v.length / 3; i++) {
    const d = v[3 * i] * qx + v[3 * i + 1] * qy + v[3 * i + 2] * qz;
    if (d > bestDot) {
      bestDot = d;
      best = i;
    }
  }
  return best;
}

/** A deterministic pseudo-random sequence in [0, 1). */
function rand(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test("nearest cell: the brute-force answer, examining a bounded number of cells per query", () => {
  // HEALPix nside 128 (196,608 cells), and a regional scatter with an empty hole in it.
  const hp = healpixCentres(128, "nested");
  const r = rand(3);
  const n = 50_000;
  const lat = new Float64Array(n);
  const lon = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    lat[i] = 30 + 30 * r();
    lon[i] = 170 + 40 * r() - (r() < 0.5 ? 360 : 0);
  }
  // Queries over the whole sphere for the global grid, over the scatter's area (and past its seam) for the regional one.
  const q = rand(11);
  const everywhere = () => [Math.asin(2 * q() - 1) / RAD, 360 * q() - 180] as const;
  const regional = () => [28 + 34 * q(), 168 + 44 * q() - (q() < 0.5 ? 360 : 0)] as const;
  for (const [name, g, where] of [
    ["healpix", hp, everywhere],
    ["scatter", { lat, lon }, regional],
  ] as const) {
    const index = new CellIndex(g.lat, g.lon);
    const v = vectors(g.lat, g.lon);
    const queries = 300;
    for (let k = 0; k < queries; k++) {
      const [plat, plon] = where();
      assert.equal(index.nearest(plat, plon).cell, bruteNearest(v, plat, plon), `${name} ${plat},${plon}`);
    }
    const per = index.examined / queries;
    assert.ok(per < 128, `${name}: ${per.toFixed(1)} cells examined per query of ${g.lat.length}`);
  }
  // Far outside a regional grid, a search bounded by a reach gives up early: no cell, few looked at.
  const index = new CellIndex(lat, lon);
  const answer = index.nearest(-40, 20, -1, 0.01);
  assert.deepEqual(answer, { cell: -1, angle: Number.POSITIVE_INFINITY });
  assert.ok(index.examined < 64, `${index.examined} cells examined far outside`);
});

test("HEALPix centres: nside 1 puts the twelve base pixels where the scheme does, in both orders", () => {
  const z = (f: number) => Math.sin(f * RAD);
  const nested = healpixCentres(1, "nested");
  const ring = healpixCentres(1, "ring");
  // Base pixels 0-3 at z = 2/3, 4-7 on the equator, 8-11 at z = -2/3, for nside 1 in both orders.
  for (let p = 0; p < 12; p++) {
    const want = p < 4 ? 2 / 3 : p < 8 ? 0 : -2 / 3;
    assert.ok(Math.abs(z(nested.lat[p]) - want) < 1e-12, `nested ${p}`);
    assert.ok(Math.abs(z(ring.lat[p]) - want) < 1e-12, `ring ${p}`);
  }
  assert.deepEqual(Array.from(nested.lon.slice(0, 4), Math.round), [45, 135, -135, -45]);
  assert.deepEqual(Array.from(nested.lon.slice(4, 8), Math.round), [0, 90, -180, -90]);
  // Every centre of nside 8 is distinct, in both orders, and the two orders hold the same set.
  const key = (g: { lat: Float64Array; lon: Float64Array }, i: number) =>
    `${g.lat[i].toFixed(9)},${(((g.lon[i] + 180) % 360) - 180).toFixed(9)}`;
  const a = healpixCentres(8, "nested");
  const b = healpixCentres(8, "ring");
  const sa = new Set(Array.from(a.lat, (_, i) => key(a, i)));
  const sb = new Set(Array.from(b.lat, (_, i) => key(b, i)));
  assert.equal(sa.size, 768);
  assert.deepEqual([...sa].sort(), [...sb].sort());
});

test("neighbourhoods: each cell's nearest others, nearest first, with bounds that prove no more than they may", () => {
  // An octahedral O24 (rows of 4i + 16 points) and an irregular scatter.
  const lat: number[] = [];
  const lon: number[] = [];
  for (let r = 0; r < 48; r++) {
    const i = r < 24 ? r + 1 : 48 - r;
    const f = 90 - ((r + 0.5) * 180) / 48;
    for (let j = 0; j < 4 * i + 16; j++) {
      lat.push(f);
      lon.push((((j * 360) / (4 * i + 16) + 180) % 360) - 180);
    }
  }
  const r = rand(11);
  for (let k = 0; k < 2000; k++) {
    lat.push(Math.asin(2 * r() - 1) / RAD);
    lon.push(360 * r() - 180);
  }
  const la = Float64Array.from(lat);
  const lo = Float64Array.from(lon);
  const index = new CellIndex(la, lo);
  const { k, list, half, outer } = index.neighbourhood();
  const v = vectors(la, lo);
  for (let i = 0; i < la.length; i += 7) {
    const dots = Array.from(la.keys(), (m) => ({
      m,
      d: m === i ? -2 : v[3 * m] * v[3 * i] + v[3 * m + 1] * v[3 * i + 1] + v[3 * m + 2] * v[3 * i + 2],
    })).sort((a, b) => b.d - a.d || a.m - b.m);
    assert.deepEqual(
      Array.from(list.subarray(i * k, i * k + k)),
      dots.slice(0, k).map((e) => e.m),
      `cell ${i}`,
    );
    // half[e] is at least the cosine of half the distance to neighbour e (never a larger region).
    for (let j = 0; j < k; j++) assert.ok(half[i * k + j] >= Math.cos(Math.acos(Math.min(1, dots[j].d)) / 2) - 1e-12);
    assert.ok(outer[i] >= Math.cos(Math.acos(Math.min(1, dots[k - 1].d)) / 2) - 1e-12);
  }
});

test("neighbourhoods: the addon's lists and bounds are the JavaScript's, bit for bit", {
  skip: !nativeAddon()?.cellNeighbours && "no cellNeighbours in the addon",
}, () => {
  // A global octahedral O40 with an irregular scatter over it; a regional scatter across the
  // antimeridian and over a pole, with an empty hole; a nested HEALPix grid (ties between
  // equidistant cells, caps reaching the poles).
  const r = rand(5);
  const oct: [number[], number[]] = [[], []];
  for (let row = 0; row < 80; row++) {
    const i = row < 40 ? row + 1 : 80 - row;
    const f = 90 - ((row + 0.5) * 180) / 80;
    for (let j = 0; j < 4 * i + 16; j++) {
      oct[0].push(f);
      oct[1].push((((j * 360) / (4 * i + 16) + 180) % 360) - 180);
    }
  }
  for (let k = 0; k < 3000; k++) {
    oct[0].push(Math.asin(2 * r() - 1) / RAD);
    oct[1].push(360 * r() - 180);
  }
  const regional: [number[], number[]] = [[], []];
  while (regional[0].length < 20_000) {
    const f = 60 + 30 * r();
    const l = 150 + 60 * r();
    if (f > 70 && f < 75 && l > 175 && l < 185) continue;
    regional[0].push(f);
    regional[1].push(l > 180 ? l - 360 : l);
  }
  const hp = healpixCentres(16, "nested");
  for (const [name, lat, lon] of [
    ["octahedral and scatter", Float64Array.from(oct[0]), Float64Array.from(oct[1])],
    ["regional", Float64Array.from(regional[0]), Float64Array.from(regional[1])],
    ["HEALPix 16", hp.lat, hp.lon],
  ] as const) {
    const c = new CellIndex(lat, lon).neighbourhood();
    let js: ReturnType<CellIndex["neighbourhood"]>;
    try {
      useNativeAddon(false);
      js = new CellIndex(lat, lon).neighbourhood();
    } finally {
      useNativeAddon(true);
    }
    assert.equal(c.k, js.k);
    const cHalf = new Uint32Array(c.half.buffer);
    const jsHalf = new Uint32Array(js.half.buffer);
    for (let e = 0; e < c.list.length; e++) {
      if (c.list[e] !== js.list[e] || cHalf[e] !== jsHalf[e]) {
        assert.fail(
          `${name}: cell ${Math.floor(e / c.k)} neighbour ${e % c.k}: ${c.list[e]} (bound ${c.half[e]}) by the addon, ` +
            `${js.list[e]} (bound ${js.half[e]}) by JavaScript`,
        );
      }
    }
    for (let i = 0; i < lat.length; i++) assert.equal(c.outer[i], js.outer[i], `${name}: outer bound of cell ${i}`);
  }
});
