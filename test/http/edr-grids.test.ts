// EDR over the grids that are not regular latitude/longitude, written by the producers' own tools:
// unstructured cells (ICON triangles, an octahedral reduced Gaussian, HEALPix; Debian's xarray,
// test/forecast/cells/stores.py) and an HRRR-like Lambert conformal store (xarray + zarr 3,
// test/forecast/projected/write_stores.py). Positions equal /point's series and node there too;
// a cube over cells equals the .npy export of the same box; a cube on the projected grid is a 400
// naming why, never numbers placed on the wrong nodes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { covCells, npy, present } from "./edr/helpers.ts";

let dir = "";
const servers: Record<string, TestServer> = {};
const keys: Record<string, Record<string, string>> = {};
const enc = encodeURIComponent;

before(async () => {
  dir = tempDir("gridcast-edr-grids-");
  execFileSync(PYTHON, [join(import.meta.dirname, "../forecast/cells/stores.py"), "write", dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const venv = requireZarr3Python("EDR on a projected grid");
  execFileSync(
    venv,
    [join(import.meta.dirname, "../forecast/projected/write_stores.py"), "lcc", join(dir, "hrrr.zarr")],
    {
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  for (const [name, store] of [
    ["cells", "cells.zarr"],
    ["hrrr", "hrrr.zarr"],
  ]) {
    servers[name] = await testServer(join(dir, store));
    keys[name] = { "X-API-Key": await servers[name].key(["weather"]) };
  }
});
after(async () => {
  for (const s of Object.values(servers)) await s.close();
  cleanup(dir);
});

async function same(server: string, group: string, points: number[][], v: string) {
  const s = servers[server];
  const wkt = `MULTIPOINT(${points.map(([x, y]) => `(${x} ${y})`).join(",")})`;
  const r = await get(
    `${s.url}/edr/collections/${group.replace("/", "~")}/position?coords=${enc(wkt)}&parameter-name=${v}`,
    keys[server],
  );
  assert.equal(r.status, 200, r.body.toString());
  const doc = r.json();
  const coverages = doc.type === "CoverageCollection" ? doc.coverages : [doc];
  assert.equal(coverages.length, points.length);
  for (const [i, [lon, lat]] of points.entries()) {
    const p = (await get(`${s.url}/point?lat=${lat}&lon=${lon}&var=${v}&group=${group}`, keys[server])).json();
    assert.ok(
      p.values.length > 0 && p.values.some((x: number | null) => x !== null),
      `${group} has values at ${lon},${lat}`,
    );
    assert.deepEqual(coverages[i].ranges[v].values, p.values, `${group} ${v} at ${lon},${lat}`);
    assert.deepEqual(
      [coverages[i].domain.axes.x.values[0], coverages[i].domain.axes.y.values[0]],
      [p.grid_lon, p.grid_lat],
    );
  }
}

describe("EDR on unstructured and projected grids", () => {
  const points = [
    [11.6, 48.1],
    [-120.3, 35.7],
    [151.2, -33.9],
    [0.1, 89.2],
  ];
  for (const g of ["forecast/icon", "forecast/octa", "forecast/healpix"]) {
    test(`${g}: positions equal /point (the nearest cell, its centre as the domain)`, async () => {
      await same("cells", g, points, "t2m");
    });
  }

  test("forecast/icon: a cube equals the .npy export of the same box (the cells' regular nodes)", async () => {
    const s = servers.cells;
    const r = await get(
      `${s.url}/api/export/forecast~icon/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2&lat_min=30&lat_max=60&lon_min=-10&lon_max=30`,
      keys.cells,
    );
    assert.equal(r.status, 200, r.body.toString());
    const want = npy(r.body);
    const doc = (
      await get(`${s.url}/edr/collections/forecast~icon/cube?bbox=-10,30,30,60&parameter-name=t2m`, keys.cells)
    ).json();
    assert.deepEqual(doc.ranges.t2m.shape, want.shape);
    assert.deepEqual(
      doc.ranges.t2m.values,
      Array.from(want.data, (x) => (Number.isNaN(x) ? null : x)),
    );
    assert.ok(present(covCells(doc)).size > 10);
  });

  test("forecast/hrrr (Lambert conformal): positions equal /point, the node by distance on the earth", async () => {
    await same(
      "hrrr",
      "forecast/hrrr",
      [
        [-100, 40],
        [-112.1, 33.3],
        [-84.7, 45.52],
      ],
      "t2m",
    );
  });

  test("forecast/hrrr: a cube, area or radius is a 400 naming why; a point outside the cells a 400 as on /point", async () => {
    const s = servers.hrrr;
    for (const q of [
      "cube?bbox=-100,35,-95,40",
      `area?coords=${enc("POLYGON((-100 35, -95 35, -95 40, -100 35))")}`,
      `radius?coords=${enc("POINT(-100 40)")}&within=100&within-units=km`,
    ]) {
      const r = await get(`${s.url}/edr/collections/forecast~hrrr/${q}&parameter-name=t2m`, keys.hrrr);
      assert.equal(r.status, 400, q);
      assert.match(r.json().detail, /projected grid/);
    }
    const out = await get(`${s.url}/edr/collections/forecast~hrrr/position?coords=${enc("POINT(10 50)")}`, keys.hrrr);
    assert.equal(out.status, 400);
    assert.match(out.json().detail, /outside the coverage/);
  });
});
