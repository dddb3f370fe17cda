// The nearest HEALPix pixel by the grid's own indexing (the point's ring, then the rings around it):
// the pixel numpy finds by brute force over every centre, in nested and ring order, at the poles,
// the seam, the cap/equator boundaries and anywhere; and a whole HEALPix grid answers /point-style
// questions without building the spatial index other cell grids need.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { cellGridOf } from "../../src/store/cell-grid.ts";
import type { CellAxes } from "../../src/store/cell-layouts.ts";
import { healpixCentres, healpixNearest } from "../../src/store/healpix.ts";
import { PYTHON } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";

const SCRIPT = join(import.meta.dirname, "healpix", "nearest.py");

function points(count: number, seed: number): [number, number][] {
  let s = seed >>> 0;
  const r = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const out: [number, number][] = [
    [90, 0],
    [-90, 17],
    [89.999, -179.999],
    [0, 180],
    [0, -180],
    [41.8103149, 45], // z = 2/3: where the polar caps meet the equatorial belt
    [-41.8103149, -135],
    [0, 0],
  ];
  for (let k = out.length; k < count; k++) out.push([(Math.asin(2 * r() - 1) * 180) / Math.PI, 720 * r() - 360]);
  return out;
}

for (const order of ["nested", "ring"] as const) {
  for (const nside of [1, 4, 64]) {
    test(`HEALPix ${order} nside ${nside}: the nearest centre by ring indexing is numpy's brute-force nearest`, async () => {
      const pts = points(400, nside * 7 + (order === "ring" ? 1 : 0));
      const want = await pythonJson<{ ties: number[]; dist: number }[]>(PYTHON, SCRIPT, [], {
        nside,
        order,
        points: pts,
      });
      for (const [k, [lat, lon]] of pts.entries()) {
        const got = healpixNearest(nside, order, lat, lon);
        assert.ok(want[k].ties.includes(got.cell), `${lat},${lon}: ${got.cell} not in ${want[k].ties}`);
        assert.ok(Math.abs(got.angle - want[k].dist) < 1e-7, `${lat},${lon}: ${got.angle} vs ${want[k].dist}`);
      }
    });
  }
}

test("a whole HEALPix grid answers nearest-cell questions by its own indexing, no spatial index built", async () => {
  const axes = {
    layout: "healpix",
    dim: "cell",
    healpix: { nside: 128, order: "ring", variable: "crs", attrs: {} },
    auxiliary: ["crs"],
  } as unknown as CellAxes;
  const geo = await cellGridOf(axes);
  assert.equal(geo.global, true);
  const { lat, lon } = healpixCentres(128, "ring");
  for (const [plat, plon] of points(200, 5)) {
    const got = geo.cells.nearest(plat, ((plon + 540) % 360) - 180);
    assert.equal(got.cell, healpixNearest(128, "ring", plat, plon).cell);
    assert.ok(
      Math.abs(lat[got.cell] - plat) < 1 && got.angle < 0.01,
      `${plat},${plon} → ${lat[got.cell]},${lon[got.cell]}`,
    );
  }
  // The spacing and globality were found with the same indexing: the index was never made.
  assert.equal(geo.cells.indexed, false);
  geo.cells.index();
  assert.equal(geo.cells.indexed, true);
});
