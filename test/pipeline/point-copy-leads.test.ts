// The point copy of a store chunked as most producers chunk it (one whole-field chunk per lead,
// written by xarray + zarr 2): when any one lead's chunk is rewritten in place after the build
// (not only the run's last lead), /point stops answering from the copy for that run and gives
// the store's new values, exactly as with the copy switched off. A server's warm-up (done before
// /readyz answers) reads the copies' headers, so the first /point after it reads no header.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pointCopies } from "../../src/http/point-copies.ts";
import type { PointCopyReader } from "../../src/published/point-copy.ts";
import { LOCAL_STAMP_TTL_MS } from "../../src/store/directory-backend.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { build } from "./build-fixture.ts";

const WRITE = `
import sys
import numpy as np, pandas as pd, xarray as xr
lat = np.linspace(90, -90, 19)
lon = np.arange(-180, 180, 10.0)
steps = pd.to_timedelta([0, 3, 6, 9, 12, 15], unit="h")
rng = np.random.default_rng(5)
t = (250 + 40 * rng.random((len(steps), len(lat), len(lon)))).astype("float32")
ds = xr.Dataset(
    {"t2m": (("step", "latitude", "longitude"), t, {"units": "K"})},
    coords={"time": np.datetime64("2024-05-01T00:00", "ns"), "step": ("step", steps),
            "latitude": ("latitude", lat, {"units": "degrees_north"}),
            "longitude": ("longitude", lon, {"units": "degrees_east"})},
)
ds.to_zarr(sys.argv[1], mode="w", consolidated=True, encoding={"t2m": {"chunks": (1, 19, 36)}})
`;

let dir = "";
let storeDir = "";
let srv: TestServer;
let key = "";
const AT = ["lat=48.2&lon=16.4", "lat=-33.9&lon=151.2", "lat=0&lon=0"];

before(async () => {
  dir = tempDir("gridcast-point-leads-");
  storeDir = join(dir, "oper.zarr");
  execFileSync(PYTHON, ["-c", WRITE, storeDir]);
  const out = join(dir, "out");
  const report = await build({ store: storeDir, out, maxZoom: 0, orientation: false });
  assert.equal(report.point_copy!.copies.length, 1, "t2m is copied");
  srv = await testServer(storeDir, { out });
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(dir);
});

const reader = () => pointCopies(srv.running.ctx) as PointCopyReader;

async function point(at: string, copy = true): Promise<{ values: number[] }> {
  srv.running.ctx.settings.point_copy = copy ? 1 : 0;
  const r = await get(`${srv.url}/point?${at}&var=t2m&group=forecast/oper`, { "X-API-Key": key });
  srv.running.ctx.settings.point_copy = 1;
  assert.equal(r.status, 200, r.body.toString());
  return r.json();
}

test("after /readyz the first /point is answered from the copy with no header read", async () => {
  assert.equal((await get(`${srv.url}/readyz`)).status, 200);
  const headers = reader().headerReads;
  assert.equal(headers, 1, "the warm-up read the one copy's header");
  const hits = reader().hits;
  await point(AT[0]);
  assert.equal(reader().hits, hits + 1, "answered from the copy");
  assert.equal(reader().headerReads, headers, "no header read on the first request");
});

test("a middle lead's chunk rewritten in place is never answered from the copy of its old bytes", async () => {
  const before = await Promise.all(AT.map((at) => point(at)));
  for (const [i, at] of AT.entries()) assert.deepEqual(before[i], await point(at, false));
  // Lead 2 (6 h) takes lead 4's bytes; the last lead (15 h) is untouched.
  const chunk = (lead: number) => join(storeDir, "t2m", `${lead}.0.0`);
  writeFileSync(chunk(2), readFileSync(chunk(4)));
  // Within the local version interval (0.1 s) plus slack, as the store's own readers.
  const deadline = Date.now() + LOCAL_STAMP_TTL_MS + 2000;
  while ((await point(AT[0])).values[2] !== before[0].values[4]) {
    assert.ok(Date.now() < deadline, "the copy of lead 2's old bytes still answers");
    await new Promise((ok) => setTimeout(ok, 20));
  }
  const hits = reader().hits;
  for (const [i, at] of AT.entries()) {
    const now = await point(at);
    assert.equal(now.values[2], before[i].values[4], `${at}: lead 2 holds lead 4's values now`);
    assert.deepEqual(now, await point(at, false), `${at}: the same answer as the store's`);
  }
  assert.equal(reader().hits, hits, "no answer came from the copy after the rewrite");
});
