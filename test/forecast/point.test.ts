// /point over real HTTP against a generated store: values, single-column reads, patch choice,
// layouts, and the error statuses of the spec.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { cleanup, get, sampleServer, sampleStore, testServer } from "../helpers/harness.ts";

// A sample store served for this file, with a weather key.
const sample = sampleServer(["weather"]);

const point = (q: string, k: string | null = sample.key) =>
  get(`${sample.srv.url}/point?${q}`, k ? { "X-API-Key": k } : {});

async function directColumn(group: string, stored: string, run: number, iy: number, ix: number): Promise<number[]> {
  const root = zarr.root(new FileSystemStore(sample.storeDir));
  const node = await zarr.open(root.resolve(`${group}/${stored}`), { kind: "array" });
  const got = await zarr.get(node, [run, null, iy, ix]);
  return Array.from(got.data as Float32Array);
}

describe("GET /point", () => {
  test("values equal a direct zarrita read of the nearest node, latest run by default", async () => {
    // tiny global grid: 2°, latitude 90..-90 descending, longitude 0..358
    const r = await point("lat=-33.9&lon=151.2&var=2t");
    assert.equal(r.status, 200, r.body.toString());
    const s = r.json();
    assert.equal(s.var, "t2m");
    assert.equal(s.source, "global");
    assert.equal(s.region, null);
    assert.equal(s.grid_lat, -34);
    assert.equal(s.grid_lon, 152);
    assert.equal(s.run, "2026-11-20T12:00:00");
    assert.deepEqual(s.times.slice(0, 2), ["2026-11-20T12:00:00", "2026-11-20T13:00:00"]);
    assert.equal(s.units, "K");
    const iy = (90 - -34) / 2;
    const ix = 152 / 2;
    assert.deepEqual(s.values, await directColumn("forecast/global", "t2m", 1, iy, ix));
  });

  test("reads exactly the chunks holding that one column", async () => {
    await point("lat=10&lon=10&var=u10"); // warm group discovery
    sample.srv.running.ctx.store.backend.reset();
    const r = await point("lat=-60&lon=-100&var=v10&run=0");
    assert.equal(r.status, 200);
    const s = r.json();
    const iy = (90 - s.grid_lat) / 2;
    const ix = ((s.grid_lon + 360) % 360) / 2;
    // chunks are (1 run, all leads, 90 lat, 90 lon)
    const expected = [`forecast/global/v10/c/0/0/${Math.floor(iy / 90)}/${Math.floor(ix / 90)}`];
    assert.deepEqual(sample.srv.running.ctx.store.backend.keysRead(), expected);
  });

  test("most local patch: inner, outer, global, and global when the patch lacks the variable", async () => {
    const alps = (await point("lat=46.5&lon=10.1&var=t2m")).json();
    assert.equal(alps.source, "regional");
    assert.equal(alps.region, "alps");
    assert.equal(alps.group, "forecast/alps");
    const europe = (await point("lat=52.5&lon=13.4&var=t2m")).json();
    assert.equal(europe.region, "europe");
    const global = (await point("lat=52.5&lon=100&var=t2m")).json();
    assert.equal(global.region, null);
    assert.equal(global.source, "global");
    // msl is not stored in the alps patch: the europe patch answers
    const msl = (await point("lat=46.5&lon=10.1&var=msl")).json();
    assert.equal(msl.region, "europe");
    // tcc is in neither patch
    const tcc = (await point("lat=46.5&lon=10.1&var=tcc")).json();
    assert.equal(tcc.region, null);
    // u10 is stored as 10u in the alps patch and still found there
    const u = (await point("lat=46.5&lon=10.1&var=u10m")).json();
    assert.equal(u.region, "alps");
  });

  test("accumulated variables carry their intervals and start at zero", async () => {
    const s = (await point("lat=50&lon=5&var=scaled_tp_1h")).json();
    assert.equal(s.var, "tp_1h");
    assert.equal(s.temporal.kind, "accumulated");
    assert.equal(s.values[0], 0);
    assert.equal(s.intervals.length, s.times.length);
    assert.equal(s.intervals[1].end, s.times[1]);
    assert.equal(Date.parse(`${s.intervals[1].end}Z`) - Date.parse(`${s.intervals[1].start}Z`), 3_600_000);
  });

  test("packed int16 variables come back as physical values with null for missing", async () => {
    const s = (await point("lat=0&lon=0&var=tcc")).json();
    for (const v of s.values) assert.ok(v === null || (v >= 0 && v <= 1), `tcc ${v}`);
  });

  test("levels: required for level variables, rejected elsewhere", async () => {
    const ok = await point("lat=45&lon=7&var=t&level=850");
    assert.equal(ok.status, 200);
    assert.equal(ok.json().level, 850);
    const missing = await point("lat=45&lon=7&var=t");
    assert.equal(missing.status, 400);
    assert.equal(missing.json().param, "level");
    const extra = await point("lat=45&lon=7&var=t2m&level=850");
    assert.equal(extra.status, 400);
  });

  test("run: an index, an ISO time or a run token; a signed or bare number is never read as a year", async () => {
    const byIndex = (await point("lat=10&lon=10&var=t2m&run=0")).json();
    const byTime = (await point(`lat=10&lon=10&var=t2m&run=${byIndex.run}`)).json();
    assert.deepEqual(byTime.values, byIndex.values);
    for (const bad of ["-1", "+1", "-0"]) {
      const r = await point(`lat=10&lon=10&var=t2m&run=${encodeURIComponent(bad)}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.json().param, "run");
    }
    const notAYear = await point("lat=10&lon=10&var=t2m&run=2001");
    assert.equal(notAYear.status, 400, "2001 is an out-of-range index, not 2001-01-01");
    const absent = await point("lat=10&lon=10&var=t2m&run=2001-01-01T00:00");
    assert.equal(absent.status, 404);
  });

  test("longitude in 0..360 and -180..180 give the same node", async () => {
    const a = (await point("lat=-20&lon=-60&var=t2m")).json();
    const b = (await point("lat=-20&lon=300&var=t2m")).json();
    assert.deepEqual(a.values, b.values);
    assert.equal(a.grid_lon, b.grid_lon);
  });

  test("errors: 404 unknown or absent variable, 404 unknown group, 400 bad input, 401 without key", async () => {
    const unknown = await point("lat=1&lon=1&var=2tt");
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get("content-type"), "application/problem+json");
    assert.ok(unknown.json().suggestions.includes("t2m")); // the served name, not a registry alias
    const absent = await point("lat=1&lon=1&var=z"); // registered, not in the store
    assert.equal(absent.status, 404);
    assert.ok(absent.json().available.includes("t2m"));
    const group = await point("lat=1&lon=1&var=t2m&group=forecast/nowhere");
    assert.equal(group.status, 404); // an unknown group is the client's error, not an outage
    assert.ok(group.json().available.includes("forecast/global"));
    for (const q of [
      "lat=91&lon=1",
      "lat=abc&lon=1",
      "lat=0x10&lon=1",
      "lat=NaN&lon=1",
      "lat=1e309&lon=1",
      "lat=&lon=1",
      "lat=1&lat=2&lon=1",
    ]) {
      const r = await point(`${q}&var=t2m`);
      assert.equal(r.status, 400, q);
      assert.equal(r.json().param, "lat", q);
    }
    assert.equal((await point("lat=1&lon=1&var=t2m", null)).status, 401);
  });
});

describe("GET /point across store layouts", () => {
  test("descending/0..360 and ascending/-180..180 stores answer the same for the same place", async () => {
    const other = await sampleStore({ latDescending: false, lon360: false });
    const srv2 = await testServer(other);
    try {
      const k2 = await srv2.key(["weather"]);
      for (const q of ["lat=-33.9&lon=151.2", "lat=60&lon=-170", "lat=0&lon=0", "lat=89&lon=179.5"]) {
        const a = (await point(`${q}&var=t2m`)).json();
        const b = (await get(`${srv2.url}/point?${q}&var=t2m`, { "X-API-Key": k2 })).json();
        assert.deepEqual(b.values, a.values, q);
        assert.equal(b.grid_lat, a.grid_lat);
        assert.equal(b.grid_lon, a.grid_lon);
      }
    } finally {
      await srv2.close();
      cleanup(other);
    }
  });
});
