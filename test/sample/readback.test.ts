// The tiny preset read back through gridcast's store layer and through zarrita directly.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { Store } from "../../src/store/store.ts";
import { listFiles, tinyStore } from "./fixture.ts";

let dir: string;
let store: Store;
before(async () => {
  dir = (await tinyStore()).dir;
  store = new Store(dir);
});

const json = (rel: string) => JSON.parse(readFileSync(join(dir, rel), "utf8"));
const RUNS = [Date.UTC(2026, 10, 20, 0), Date.UTC(2026, 10, 20, 12)];

async function openArray(path: string, format: 2 | 3) {
  const loc = zarr.root(new FileSystemStore(dir)).resolve(path);
  return format === 3 ? zarr.open.v3(loc, { kind: "array" }) : zarr.open.v2(loc, { kind: "array" });
}

/** Whole array of a group's variable, physical values. */
async function whole(groupId: string, name: string) {
  const g = await store.forecastGroup(groupId);
  const v = g.variables.get(name)!;
  const values = await v.array.read(v.array.shape.map((n) => [0, n] as [number, number]));
  return { g, v, values };
}

describe("store layer", () => {
  test("discovers the three forecast groups", async () => {
    assert.deepEqual(await store.forecastGroupIds(), ["forecast/alps", "forecast/europe", "forecast/global"]);
    assert.equal((await store.forecastGroups()).length, 3);
  });

  test("global coordinates decode: two runs, leads 0..6 h, descending latitude, 0..360 longitude", async () => {
    const g = await store.forecastGroup("forecast/global");
    assert.equal(g.format, 3);
    assert.deepEqual(g.runs, RUNS);
    assert.deepEqual(g.leads, [0, 1, 2, 3, 4, 5, 6]);
    assert.deepEqual(g.levels, [500, 850]);
    assert.equal(g.levelUnits, "hPa");
    assert.equal(g.grid.latAscending, false);
    assert.equal(g.grid.lon360, true);
    assert.equal(g.grid.global, true);
    assert.equal(g.grid.lat[0], 90);
    assert.equal(g.grid.lat.length, 91);
    assert.equal(g.grid.lon[179], 358);
    assert.deepEqual([...g.variables.keys()].sort(), ["msl", "t", "t2m", "tcc", "tp_1h", "u10", "v10"]);
    assert.equal(g.attrs.kind, "global");
    assert.equal(g.attrs.institution, "gridcast synthetic");
  });

  test("tcc unpacks to 0..1 with NaN where cells are missing", async () => {
    const { v, values } = await whole("forecast/global", "tcc");
    assert.equal(v.array.dtype, "int16");
    let missing = 0;
    for (const x of values) {
      if (Number.isNaN(x)) missing++;
      else assert.ok(x >= 0 && x <= 1, `tcc ${x}`);
    }
    const perField = 91 * 180;
    assert.ok(missing > 0 && missing < values.length / 100, `${missing} missing`);
    assert.equal(missing % (2 * 7), 0, "the same cells are missing at every run and lead");
    // Raw stored values through zarrita: the CF fill value marks exactly those cells.
    const raw = await zarr.get(await openArray("forecast/global/tcc", 3), [0, 0, null, null]);
    const rawData = raw.data as Int16Array;
    for (let c = 0; c < perField; c++) assert.equal(rawData[c] === -32767, Number.isNaN(values[c]));
    assert.equal(json("forecast/global/tcc/zarr.json").attributes._FillValue, -32767);
  });

  test("tp_1h is never negative, mostly zero, zero everywhere at lead 0", async () => {
    const { g, v, values } = await whole("forecast/global", "tp_1h");
    assert.equal(v.entry.temporal.kind, "accumulated");
    assert.equal(v.array.meta.attrs.cell_methods, "time: sum");
    const field = g.grid.lat.length * g.grid.lon.length;
    let zeros = 0;
    let wet = 0;
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      assert.ok(x >= 0, `tp_1h ${x}`);
      if (x === 0) zeros++;
      const lead = Math.floor(i / field) % 7;
      if (lead === 0) assert.equal(x, 0);
      else if (x > 0.0005) wet++;
    }
    assert.ok(zeros > values.length / 2, "mostly dry");
    assert.ok(wet > 0, "some rain above 0.5 mm/h after lead 0");
  });

  test("fields are physically plausible", async () => {
    const ranges: Record<string, [number, number]> = {
      t2m: [200, 330],
      msl: [94_000, 106_000],
      u10: [-80, 80],
      v10: [-80, 80],
      t: [190, 320],
    };
    for (const [name, [lo, hi]] of Object.entries(ranges)) {
      const { values } = await whole("forecast/global", name);
      for (const x of values) assert.ok(x >= lo && x <= hi, `${name} ${x}`);
    }
    const { values: t } = await whole("forecast/global", "t");
    const field = 91 * 180;
    let warmerBelow = 0;
    for (let block = 0; block < t.length; block += 2 * field) {
      for (let c = 0; c < field; c++) if (t[block + field + c] > t[block + c]) warmerBelow++;
    }
    assert.ok(warmerBelow > 0.95 * (t.length / 2), "850 hPa is warmer than 500 hPa almost everywhere");
  });

  test("the europe patch is Zarr v2 with consolidated metadata and readable", async () => {
    const { g, values } = await whole("forecast/europe", "t2m");
    assert.equal(g.format, 2);
    assert.equal(g.grid.latAscending, true);
    assert.equal(g.grid.lon360, false);
    assert.deepEqual([g.grid.lat[0], g.grid.lat.at(-1), g.grid.lon[0], g.grid.lon.at(-1)], [34, 72, -12, 40]);
    assert.deepEqual(g.runs, RUNS);
    assert.ok(values.every((x) => Number.isFinite(x)));
    assert.deepEqual([...g.variables.keys()].sort(), ["msl", "t2m", "tp_1h", "u10", "v10"]);
    const zm = json("forecast/europe/.zmetadata");
    assert.equal(zm.zarr_consolidated_format, 1);
    assert.equal(zm.metadata["t2m/.zarray"].dtype, "<f4");
    assert.deepEqual(zm.metadata["t2m/.zattrs"]._ARRAY_DIMENSIONS, ["time", "lead_time", "lat", "lon"]);
    assert.equal(existsSync(join(dir, "forecast/europe/zarr.json")), false);
    // zarrita's v2 path reads the same values.
    const direct = await zarr.get(await openArray("forecast/europe/t2m", 2));
    assert.deepEqual(Array.from(direct.data as Float32Array), Array.from(values));
  });

  test("alps exposes u10 although it is stored as 10u", async () => {
    const g = await store.forecastGroup("forecast/alps");
    const u = g.variables.get("u10");
    assert.ok(u);
    assert.equal(u.stored, "10u");
    assert.equal(g.variables.has("msl"), false);
    assert.ok(existsSync(join(dir, "forecast/alps/10u/zarr.json")));
    const vals = await u.array.read([
      [0, 1],
      [0, 1],
      [0, 2],
      [0, 2],
    ]);
    assert.ok(vals.every((x) => Number.isFinite(x)));
  });

  test("patches agree broadly with the global field but are not copies of it", async () => {
    const glob = await whole("forecast/global", "t2m");
    const eur = await whole("forecast/europe", "t2m");
    const gg = glob.g.grid;
    const eg = eur.g.grid;
    let n = 0;
    let sumAbs = 0;
    let identical = 0;
    for (let i = 0; i < gg.lat.length; i++) {
      const ei = eg.lat.indexOf(gg.lat[i]);
      if (ei < 0) continue;
      for (let j = 0; j < gg.lon.length; j++) {
        const lon = gg.lon[j] >= 180 ? gg.lon[j] - 360 : gg.lon[j];
        const ej = eg.lon.indexOf(lon);
        if (ej < 0) continue;
        const d = glob.values[i * gg.lon.length + j] - eur.values[ei * eg.lon.length + ej];
        n++;
        sumAbs += Math.abs(d);
        if (d === 0) identical++;
      }
    }
    assert.ok(n > 100, `${n} shared nodes`);
    assert.ok(sumAbs / n < 2.5, `mean |global - europe| = ${sumAbs / n} K`);
    assert.ok(identical < n / 2, "the patch adds its own detail");
  });
});

describe("zarrita directly", () => {
  test("coordinates carry CF attributes and decode to the runs and leads", async () => {
    const time = await openArray("forecast/global/time", 3);
    assert.equal(time.dtype, "int64");
    const t = await zarr.get(time);
    assert.deepEqual(
      Array.from(t.data as BigInt64Array, Number),
      RUNS.map((ms) => ms / 3_600_000),
    );
    const tAttrs = json("forecast/global/time/zarr.json").attributes;
    assert.equal(tAttrs.units, "hours since 1970-01-01 00:00:00");
    assert.equal(tAttrs.calendar, "proleptic_gregorian");
    assert.equal(tAttrs.standard_name, "forecast_reference_time");
    const leadDoc = json("forecast/global/lead_time/zarr.json");
    assert.equal(leadDoc.attributes.units, "hours");
    assert.equal(leadDoc.attributes.standard_name, "forecast_period");
    assert.deepEqual(leadDoc.dimension_names, ["lead_time"]);
    const lead = await zarr.get(await openArray("forecast/global/lead_time", 3));
    assert.deepEqual(Array.from(lead.data as Int32Array), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(json("forecast/global/lat/zarr.json").attributes.units, "degrees_north");
    assert.equal(json("forecast/global/lon/zarr.json").attributes.units, "degrees_east");
    assert.equal(json("forecast/global/level/zarr.json").attributes.units, "hPa");
  });

  test("a variable slice equals the store layer's read of the same region", async () => {
    const arr = await openArray("forecast/global/t2m", 3);
    assert.deepEqual(arr.chunks, [1, 7, 90, 90]);
    const direct = await zarr.get(arr, [1, 3, null, null]);
    assert.deepEqual(direct.shape, [91, 180]);
    const g = await store.forecastGroup("forecast/global");
    const mine = await g.variables.get("t2m")!.array.read([
      [1, 2],
      [3, 4],
      [0, 91],
      [0, 180],
    ]);
    assert.deepEqual(Array.from(direct.data as Float32Array), Array.from(mine));
    const lev = await zarr.get(await openArray("forecast/global/t", 3), [0, 0, 1, null, null]);
    assert.deepEqual(lev.shape, [91, 180]);
  });

  test("v3 metadata: consolidated inline, fill values as strings, every group has zarr.json", () => {
    const group = json("forecast/global/zarr.json");
    assert.equal(group.node_type, "group");
    const cm = group.consolidated_metadata;
    assert.equal(cm.kind, "inline");
    assert.equal(cm.must_understand, false);
    assert.deepEqual(Object.keys(cm.metadata).sort(), [
      "lat",
      "lead_time",
      "level",
      "lon",
      "msl",
      "t",
      "t2m",
      "tcc",
      "time",
      "tp_1h",
      "u10",
      "v10",
    ]);
    for (const [name, doc] of Object.entries(cm.metadata))
      assert.deepEqual(doc, json(`forecast/global/${name}/zarr.json`));
    const t2m = json("forecast/global/t2m/zarr.json");
    assert.equal(t2m.fill_value, "NaN");
    assert.equal(t2m.attributes._FillValue, "NaN");
    assert.deepEqual(t2m.dimension_names, ["time", "lead_time", "lat", "lon"]);
    assert.deepEqual(json("forecast/global/t/zarr.json").dimension_names, ["time", "lead_time", "level", "lat", "lon"]);
    for (const g of ["zarr.json", "forecast/zarr.json", "embeddings/zarr.json", "forecast/alps/zarr.json"]) {
      assert.equal(json(g).node_type, "group", g);
    }
    // Every metadata document is strict JSON (no bare NaN).
    for (const rel of listFiles(dir).filter((f) => /(^|\/)(zarr\.json|\.z\w+)$/.test(f))) {
      assert.doesNotThrow(() => json(rel), rel);
    }
  });
});
