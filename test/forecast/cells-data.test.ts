// The /data Zarr view of unstructured grids (ICON-like, reduced Gaussian, HEALPix, anemoi-datasets in
// its own layout, a regional ICON patch; stores written by test/forecast/cells/stores.py), opened by
// Debian's xarray + zarr 2 (v2 view) and by xarray 2026 + zarr 3 (v3 view) over HTTP and compared
// with xarray's reading of the stored groups: values, latitude(cell)/longitude(cell) in degrees,
// dims, and the grid mapping that says what the grid is.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { zarr3Python } from "../helpers/zarr3-python.ts";

const STORES = join(import.meta.dirname, "cells", "stores.py");
const CHECK = join(import.meta.dirname, "..", "python", "cells_data.py");
let dir = "";
let srv: TestServer;
let key = "";
/** The root-level stores: anemoi-datasets and the regional ICON patch. */
const roots: Record<string, { srv: TestServer; key: string }> = {};

before(async () => {
  dir = tempDir("gridcast-cells-data-");
  execFileSync(PYTHON, [STORES, "write", dir], { stdio: ["ignore", "pipe", "inherit"] });
  srv = await testServer(join(dir, "cells.zarr"));
  key = await srv.key(["weather"]);
  for (const name of ["anemoi", "icon-d2"]) {
    const s = await testServer(join(dir, `${name}.zarr`));
    roots[name] = { srv: s, key: await s.key(["weather"]) };
  }
});
after(async () => {
  await srv?.close();
  for (const r of Object.values(roots)) await r.srv.close();
  cleanup(dir);
});

const GROUPS = {
  icon: { t2m: "t_2m", msl: "pmsl" },
  octa: { t2m: "t2m", msl: "msl" },
  healpix: { t2m: "t2m" },
};

/** What each grid's crs says it is. */
const CRS: Record<string, Record<string, unknown>> = {
  icon: { grid_mapping_name: "latitude_longitude", gridcast_cell_layout: "icon", CDI_grid_type: "unstructured" },
  octa: {
    grid_mapping_name: "latitude_longitude",
    gridcast_cell_layout: "reduced_gaussian",
    GRIB_gridType: "reduced_gg",
  },
  healpix: { grid_mapping_name: "healpix", healpix_nside: 16, healpix_order: "nested" },
  anemoi: { grid_mapping_name: "latitude_longitude", gridcast_cell_layout: "anemoi" },
  "icon-d2": { grid_mapping_name: "latitude_longitude", gridcast_cell_layout: "icon" },
};

/** Every group of every store, as the checker takes it. */
function requests(zarrFormat?: 3) {
  const fmt = zarrFormat ? { zarr_format: zarrFormat } : {};
  return [
    ...Object.entries(GROUPS).map(([g, vars]) => ({
      url: `${srv.url}/data/datasets/forecast~${g}/zarr/`,
      headers: { "X-API-Key": key },
      store: join(dir, "cells.zarr"),
      group: `forecast/${g}`,
      vars,
      crs: CRS[g],
      ...fmt,
    })),
    ...Object.entries({ anemoi: "anemoi", "icon-d2": { t2m: "t_2m" } }).map(([name, vars]) => ({
      url: `${roots[name].srv.url}/data/datasets/forecast~${name}/zarr/`,
      headers: { "X-API-Key": roots[name].key },
      store: join(dir, `${name}.zarr`),
      vars,
      crs: CRS[name],
      ...fmt,
    })),
  ];
}

async function checkAll(python: string, zarrFormat?: 3) {
  const got = await pythonJson<{ group: string; problems: string[]; checked: number }[]>(
    python,
    CHECK,
    [],
    requests(zarrFormat),
  );
  assert.equal(got.length, 5);
  for (const r of got) {
    assert.deepEqual(r.problems, [], r.group);
    assert.ok(r.checked > 0, `${r.group}: no values compared`);
  }
}

test("/data/datasets lists only real dimensions of cell grids", async () => {
  const r = await get(`${srv.url}/data/datasets`, { "X-API-Key": key });
  assert.equal(r.status, 200);
  const ds = r.json().datasets as { id: string; dims: Record<string, number> }[];
  for (const g of Object.keys(GROUPS)) {
    const d = ds.find((x) => x.id === `forecast~${g}`);
    assert.ok(d, `forecast~${g} listed`);
    assert.deepEqual(Object.keys(d.dims).sort(), ["cell", "lead_time", "time"], g);
  }
});

test("xarray + zarr 2 reads the v2 /data view of every cell layout as the stored groups hold them", async () => {
  await checkAll(PYTHON);
});

const py3 = zarr3Python("the v3 /data view of cell grids");
test("xarray 2026 + zarr 3 reads the v3 /data view of every cell layout as the stored groups hold them", {
  skip: !py3 && "no xarray + zarr 3 client stack",
}, async () => {
  await checkAll(py3!, 3);
});
