// EDR over the grids that are not regular latitude/longitude, written by the producers' own tools:
// unstructured cells (ICON triangles, an octahedral reduced Gaussian, HEALPix; Debian's xarray,
// test/forecast/cells/stores.py) and an HRRR-like Lambert conformal store (xarray + zarr 3,
// test/forecast/projected/write_stores.py). Positions equal /point's series and node there too;
// a cube over cells equals the .npy export of the same box; on the projected grid a cube, area or
// radius answers each node of the export's window it holds, placed by its own latitude/longitude.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { covCells, distanceKm, geoCells, npy, present } from "./edr/helpers.ts";
import { edrAjv } from "./edr/standard-schemas.ts";

const schemas = edrAjv();

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
  // cfgrib hypercubes merged: t2m on a regional 1° grid, msl on a global 2.5° one, in one group.
  execFileSync(PYTHON, [join(import.meta.dirname, "../python/multigrid_stores.py"), "v2", dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  cpSync(join(dir, "merged.zarr"), join(combo, "forecast", "merged"), { recursive: true });
  for (const [name, store] of [
    ["cells", "cells.zarr"],
    ["hrrr", "hrrr.zarr"],
    ["multi", "combo"],
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

  test("forecast/hrrr: cube, area and radius answer each node by its own latitude/longitude, as /point names it", async () => {
    const s = servers.hrrr;
    const series = async (lat: number, lon: number) =>
      (await get(`${s.url}/point?lat=${lat}&lon=${lon}&var=t2m`, keys.hrrr)).json();
    const circle = { lon: -97.5, lat: 38.5, km: 250 };
    const tri = [
      [-104.2, 36.1],
      [-95.3, 35.2],
      [-99.1, 42.7],
    ];
    const inTri = (lon: number, lat: number) => {
      let c = false;
      for (let i = 0, j = 2; i < 3; j = i++) {
        const [xi, yi] = tri[i];
        const [xj, yj] = tri[j];
        if (yi > lat !== yj > lat && lon < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) c = !c;
      }
      return c;
    };
    const cases: [string, (lon: number, lat: number) => boolean][] = [
      ["cube?bbox=-101,36,-96,40", (lon, lat) => lon >= -101 && lon <= -96 && lat >= 36 && lat <= 40],
      [
        `area?coords=${enc(`POLYGON((${[...tri, tri[0]].map(([x, y]) => `${x} ${y}`).join(",")}))`)}`,
        (lon, lat) => inTri(lon, lat),
      ],
      [
        `radius?coords=${enc(`POINT(${circle.lon} ${circle.lat})`)}&within=${circle.km}&within-units=km`,
        (lon, lat) => distanceKm(circle.lat, circle.lon, lat, lon) <= circle.km,
      ],
    ];
    // Every node of a larger box, each by its own position: what each query must hold exactly.
    const big = await get(
      `${s.url}/edr/collections/forecast~hrrr/cube?bbox=-108,32,-88,46&parameter-name=t2m`,
      keys.hrrr,
    );
    const all: number[][] = big.json().domain.axes.composite.values;
    for (const [q, inside] of cases) {
      const r = await get(`${s.url}/edr/collections/forecast~hrrr/${q}&parameter-name=t2m`, keys.hrrr);
      assert.equal(r.status, 200, `${q}: ${r.body.toString()}`);
      const doc = r.json();
      assert.equal(doc.domain.domainType, "MultiPointSeries");
      assert.deepEqual(schemas.validate("covjson/coverageJSON.yaml", doc), []);
      assert.deepEqual(schemas.validate("covjson/domain.yaml", doc.domain), []);
      for (const r of Object.values(doc.ranges)) assert.deepEqual(schemas.validate("covjson/ndArray.yaml", r), []);
      const nodes: number[][] = doc.domain.axes.composite.values;
      assert.ok(nodes.length >= 4, `${q}: ${nodes.length} nodes`);
      const key = (n: number[]) => n.join();
      assert.deepEqual(
        nodes.map(key).sort(),
        all
          .filter(([lon, lat]) => inside(lon, lat))
          .map(key)
          .sort(),
        q,
      );
      const cells = covCells(doc);
      // Every node answered lies inside, and is the node /point answers at its own position, with its values.
      for (const [lon, lat] of nodes) {
        assert.ok(inside(lon, lat), `${q}: node ${lon},${lat} is inside`);
        const p = await series(lat, lon);
        assert.deepEqual([p.grid_lon, p.grid_lat], [lon, lat]);
        const mine = cells.filter((c) => c.lon === lon && c.lat === lat).map((c) => c.value);
        assert.deepEqual(mine, p.values);
      }
      // The three encodings agree here too.
      const geo = (
        await get(`${s.url}/edr/collections/forecast~hrrr/${q}&parameter-name=t2m&f=GeoJSON`, keys.hrrr)
      ).json();
      assert.deepEqual(present(geoCells(geo)), present(cells));
    }
    // Outside the cells: an empty intersection for a box, a 400 for a position, as on /point.
    const none = await get(
      `${s.url}/edr/collections/forecast~hrrr/cube?bbox=10,40,20,50&parameter-name=t2m`,
      keys.hrrr,
    );
    assert.equal(none.status, 204);
    const out = await get(`${s.url}/edr/collections/forecast~hrrr/position?coords=${enc("POINT(10 50)")}`, keys.hrrr);
    assert.equal(out.status, 400);
    assert.match(out.json().detail, /outside the coverage/);
  });
  test("a group on two grids: each parameter answered on its own grid, one coverage per grid, as /point and the export", async () => {
    const s = servers.multi;
    const H = keys.multi;
    const pos = (
      await get(
        `${s.url}/edr/collections/forecast~merged/position?coords=${enc("POINT(10.3 47.6)")}&parameter-name=t2m,msl`,
        H,
      )
    ).json();
    assert.equal(pos.type, "CoverageCollection");
    assert.equal(pos.coverages.length, 2, "the two grids' nodes differ");
    for (const v of ["t2m", "msl"]) {
      const p = (await get(`${s.url}/point?lat=47.6&lon=10.3&var=${v}&group=forecast/merged`, H)).json();
      const c = pos.coverages.find((x: { ranges: Record<string, unknown> }) => v in x.ranges);
      assert.deepEqual(c.ranges[v].values, p.values, v);
      assert.deepEqual([c.domain.axes.x.values[0], c.domain.axes.y.values[0]], [p.grid_lon, p.grid_lat]);
    }
    const cube = (
      await get(`${s.url}/edr/collections/forecast~merged/cube?bbox=0,40,15,55&parameter-name=t2m,msl`, H)
    ).json();
    assert.equal(cube.coverages.length, 2);
    for (const v of ["t2m", "msl"]) {
      const r = await get(
        `${s.url}/api/export/forecast~merged/npy?var=${v}&time_index=0&lead_start=0&lead_stop=2&lat_min=40&lat_max=55&lon_min=0&lon_max=15`,
        H,
      );
      assert.equal(r.status, 200, r.body.toString());
      const c = cube.coverages.find((x: { ranges: Record<string, unknown> }) => v in x.ranges);
      assert.deepEqual(c.ranges[v].values, Array.from(npy(r.body).data), v);
    }
    // Beyond t2m's regional grid only msl's global grid holds nodes: it is answered alone.
    const far = await get(`${s.url}/edr/collections/forecast~merged/cube?bbox=100,0,110,10&parameter-name=t2m,msl`, H);
    assert.equal(far.status, 200, far.body.toString());
    assert.deepEqual(Object.keys(far.json().ranges), ["msl"]);
    const none = await get(`${s.url}/edr/collections/forecast~merged/cube?bbox=100,0,110,10&parameter-name=t2m`, H);
    assert.equal(none.status, 204);
  });
});
