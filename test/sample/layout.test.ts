// The global grid can be laid out ECMWF style (90..-90, 0..360) or ascending/-180..180; the
// physical field must not change with the layout.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";
import { type ForecastGroup, Store } from "../../src/store/store.ts";
import { tinyStore } from "./fixture.ts";

let ecmwf: { dir: string; g: ForecastGroup };
let flipped: { dir: string; g: ForecastGroup };

before(async () => {
  const a = await tinyStore({ seed: 11 });
  const b = await tinyStore({ seed: 11, latDescending: false, lon360: false });
  ecmwf = { dir: a.dir, g: await new Store(a.dir).forecastGroup("forecast/global") };
  flipped = { dir: b.dir, g: await new Store(b.dir).forecastGroup("forecast/global") };
});

test("the override layout is ascending in latitude and -180..180 in longitude", () => {
  const g = flipped.g.grid;
  assert.equal(g.latAscending, true);
  assert.equal(g.lon360, false);
  assert.deepEqual([g.lat[0], g.lat.at(-1), g.lon[0], g.lon.at(-1)], [-90, 90, -180, 178]);
  const d = ecmwf.g.grid;
  assert.deepEqual([d.lat[0], d.lat.at(-1), d.lon[0], d.lon.at(-1)], [90, -90, 0, 358]);
});

test("every variable has the same value at the same physical lat/lon in both layouts", async () => {
  const a = ecmwf.g;
  const b = flipped.g;
  const nLat = a.grid.lat.length;
  const nLon = a.grid.lon.length;
  // Index in b of each row and column of a, matched by coordinate value.
  const rowMap = Array.from(a.grid.lat, (lat) => b.grid.lat.indexOf(lat));
  const colMap = Array.from(a.grid.lon, (lon) => b.grid.lon.indexOf(lon >= 180 ? lon - 360 : lon));
  assert.ok(rowMap.every((i) => i >= 0) && colMap.every((j) => j >= 0));
  for (const name of a.variables.keys()) {
    const va = a.variables.get(name)!.array;
    const vb = b.variables.get(name)!.array;
    assert.deepEqual(va.shape, vb.shape);
    const region = va.shape.map((n, d) => (d === 0 ? [1, 2] : d === 1 ? [4, 5] : [0, n])) as [number, number][];
    const xa = await va.read(region);
    const xb = await vb.read(region);
    const planes = xa.length / (nLat * nLon);
    let differing = 0;
    for (let p = 0; p < planes; p++) {
      for (let i = 0; i < nLat; i++) {
        for (let j = 0; j < nLon; j++) {
          const u = xa[(p * nLat + i) * nLon + j];
          const v = xb[(p * nLat + rowMap[i]) * nLon + colMap[j]];
          if (!Object.is(u, v)) differing++;
        }
      }
    }
    assert.equal(differing, 0, `${name}: ${differing} cells differ`);
  }
});

test("regional patches do not depend on the global layout", () => {
  for (const rel of ["forecast/europe/t2m/0.0.0.0", "forecast/alps/10u/c/1/0/0/1"]) {
    assert.deepEqual(readFileSync(join(ecmwf.dir, rel)), readFileSync(join(flipped.dir, rel)), rel);
  }
});
