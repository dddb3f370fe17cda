// GDAL (Debian's GDAL 3.6, Zarr driver over /vsicurl/) opens /data the way GIS users do and must
// find a CRS, a north-up geotransform and, at every pixel, the value xarray reads at that place:
// a global group stored north-to-south, regional groups stored south-to-north (published
// north-up), and a Lambert conformal group written by xarray + zarr 3 (its y ascending).
// `gdal_translate -projwin` must cut a south-to-north group.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, PYTHON, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/gis_data.py");
const WRITE = resolve(import.meta.dirname, "../forecast/projected/write_stores.py");

interface Row {
  id: string;
  srs: string;
  geographic: boolean;
  projected: boolean;
  geotransform: number[];
  compared: number;
  projwin?: { size: number[]; compared: number };
}

let storeDir: string;
let lccDir: string;
const servers: TestServer[] = [];
const found: Record<string, Row> = {};

before(async () => {
  storeDir = await sampleStore();
  lccDir = tempDir("gridcast-gis-lcc-");
  execFileSync(requireZarr3Python("GDAL on a projected group"), [WRITE, "lcc", join(lccDir, "hrrr.zarr")], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const sample = await testServer(storeDir);
  const lcc = await testServer(join(lccDir, "hrrr.zarr"));
  servers.push(sample, lcc);
  const ask = async (srv: TestServer, datasets: unknown[]) => {
    const rows = await pythonJson<Row[]>(PYTHON, SCRIPT, [], {
      base: srv.url,
      key: await srv.key(["weather"]),
      datasets,
    });
    for (const r of rows) found[r.id] = r;
  };
  const latlon = { var: "t2m", x: "lon", y: "lat", index: "0:0" };
  await ask(sample, [
    { id: "forecast~global", ...latlon },
    // Europe is stored south to north; the window lies well inside it.
    { id: "forecast~europe", ...latlon, projwin: [0, 60, 20, 40] },
  ]);
  const lccKey = await lcc.key(["weather"]);
  const listing = await (await fetch(`${lcc.url}/data/datasets`, { headers: { "X-API-Key": lccKey } })).json();
  await ask(lcc, [{ id: listing.datasets[0].id, var: "t2m", x: "x", y: "y", index: "0:0" }]);
});
after(async () => {
  for (const s of servers) await s.close();
  cleanup(storeDir);
  cleanup(lccDir);
});

test("GDAL finds WGS 84 on every latitude/longitude group and reads north-up values equal to xarray's", () => {
  for (const id of ["forecast~global", "forecast~europe"]) {
    const r = found[id];
    assert.ok(r.geographic, `${id}: GDAL sees no geographic CRS (${r.srs || "none"})`);
    assert.match(r.srs, /WGS 84/);
    assert.ok(r.geotransform[1] > 0 && r.geotransform[5] < 0, `${id}: not north-up: ${r.geotransform}`);
    assert.ok(r.compared > 1000, `${id}: only ${r.compared} pixels compared`);
  }
  // The corner GDAL reports is the grid's north-west edge (half a cell outside the first node).
  assert.deepEqual(found["forecast~europe"].geotransform, [-12.25, 0.5, 0, 72.25, 0, -0.5]);
});

test("gdal_translate -projwin cuts a south-to-north group, values equal to xarray's at each pixel", () => {
  const w = found["forecast~europe"].projwin!;
  assert.deepEqual(w.size, [40, 40]);
  assert.equal(w.compared, 1600);
});

test("GDAL finds a projected group's own CRS (Lambert conformal), north-up, values equal to xarray's", () => {
  const r = Object.values(found).find((x) => !x.id.startsWith("forecast~global") && x.projected);
  assert.ok(
    r,
    `no projected CRS found: ${JSON.stringify(Object.values(found).map((x) => [x.id, x.srs.slice(0, 40)]))}`,
  );
  assert.match(r.srs, /Lambert_Conformal_Conic/);
  assert.ok(r.geotransform[1] > 0 && r.geotransform[5] < 0, `not north-up: ${r.geotransform}`);
  assert.ok(r.compared > 1000, `only ${r.compared} pixels compared`);
});
