// The /data Zarr view of unstructured grids (ICON-like, reduced Gaussian, HEALPix; stores written by
// test/forecast/cells/stores.py), opened by Debian's xarray + zarr 2 over HTTP and compared with
// xarray's reading of the stored groups: values, latitude(cell)/longitude(cell) in degrees, dims.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";

const STORES = join(import.meta.dirname, "cells", "stores.py");
const CHECK = join(import.meta.dirname, "..", "python", "cells_data.py");
let dir = "";
let srv: TestServer;
let key = "";

before(async () => {
  dir = tempDir("gridcast-cells-data-");
  execFileSync(PYTHON, [STORES, "write", dir], { stdio: ["ignore", "pipe", "inherit"] });
  srv = await testServer(join(dir, "cells.zarr"));
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(dir);
});

const GROUPS = {
  icon: { t2m: "t_2m", msl: "pmsl" },
  octa: { t2m: "t2m", msl: "msl" },
  healpix: { t2m: "t2m" },
};

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

test("xarray reads the /data view of cell grids as the stored groups hold them", async () => {
  const reqs = Object.entries(GROUPS).map(([g, vars]) => ({
    url: `${srv.url}/data/datasets/forecast~${g}/zarr/`,
    headers: { "X-API-Key": key },
    store: join(dir, "cells.zarr"),
    group: `forecast/${g}`,
    vars,
  }));
  const got = await pythonJson<{ group: string; problems: string[]; checked: number }[]>(PYTHON, CHECK, [], reqs);
  for (const r of got) {
    assert.deepEqual(r.problems, [], r.group);
    assert.ok(r.checked > 0, `${r.group}: no values compared`);
  }
});
