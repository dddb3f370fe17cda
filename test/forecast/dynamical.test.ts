// A dynamical.org-style Zarr v3 store written with zarrita at the store root: init_time (seconds
// since the epoch), lead_time (seconds), ensemble_member, latitude/longitude, a 2-D valid_time,
// temperature_2m in degree_Celsius, precipitation_surface as a mean rate in kg m-2 s-1 over the
// previous 3 h step (step_type avg), and wind_u_10m packed into shards. /point, export and /data
// must agree with what zarrita reads from the same store.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { cleanup, get, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { shard } from "../http/data-fixtures.ts";

let dir: string;
let root: string;
let srv: TestServer;
let key: string;
const H = () => ({ "X-API-Key": key });

const INIT = [Date.UTC(2025, 0, 1, 0) / 1000, Date.UTC(2025, 0, 1, 6) / 1000];
const LEAD_S = [0, 3, 6, 9].map((h) => h * 3600);
const LAT = Array.from({ length: 13 }, (_, i) => 60 - i * 2.5); // 60..30 N
const LON = Array.from({ length: 16 }, (_, i) => -10 + i * 2.5); // -10..27.5 E
const MEMBERS = [0, 1, 2];
const SHAPE = [INIT.length, MEMBERS.length, LEAD_S.length, LAT.length, LON.length];
const N = SHAPE.reduce((a, b) => a * b, 1);

function values(seed: number, lo: number, hi: number, nanAtLead0 = false): Float32Array {
  const out = new Float32Array(N);
  let s = seed;
  for (let i = 0; i < N; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out[i] = lo + ((hi - lo) * s) / 2 ** 31;
    const lead = Math.floor(i / (LAT.length * LON.length)) % LEAD_S.length;
    if (nanAtLead0 && lead === 0) out[i] = Number.NaN;
  }
  return out;
}

async function writeStore(path: string): Promise<void> {
  const fs = new FileSystemStore(path);
  const r = zarr.root(fs);
  await zarr.create(r, { attributes: { dataset_id: "noaa-gefs-forecast", name: "NOAA GEFS forecast" } });
  const coord = async (
    name: string,
    dtype: "int64" | "float64" | "int32",
    data: number[],
    attrs: Record<string, unknown>,
  ) => {
    const arr = await zarr.create(r.resolve(name), {
      shape: [data.length],
      chunkShape: [data.length],
      dtype,
      dimensionNames: [name],
      attributes: attrs,
    });
    const typed =
      dtype === "int64"
        ? BigInt64Array.from(data, (x) => BigInt(x))
        : dtype === "int32"
          ? Int32Array.from(data)
          : Float64Array.from(data);
    await zarr.set(arr, null, { data: typed, shape: [data.length], stride: [1] } as never);
  };
  await coord("init_time", "int64", INIT, { units: "seconds since 1970-01-01", calendar: "proleptic_gregorian" });
  await coord("lead_time", "int64", LEAD_S, { units: "seconds" });
  await coord("ensemble_member", "int32", MEMBERS, {});
  await coord("latitude", "float64", LAT, { units: "degrees_north" });
  await coord("longitude", "float64", LON, { units: "degrees_east" });
  const valid = await zarr.create(r.resolve("valid_time"), {
    shape: [INIT.length, LEAD_S.length],
    chunkShape: [INIT.length, LEAD_S.length],
    dtype: "int64",
    dimensionNames: ["init_time", "lead_time"],
    attributes: { units: "seconds since 1970-01-01" },
  });
  const vt = BigInt64Array.from(INIT.flatMap((t) => LEAD_S.map((l) => BigInt(t + l))));
  await zarr.set(valid, null, { data: vt, shape: [INIT.length, LEAD_S.length], stride: [LEAD_S.length, 1] } as never);
  const dims = ["init_time", "ensemble_member", "lead_time", "latitude", "longitude"];
  const stride = SHAPE.map((_, d) => SHAPE.slice(d + 1).reduce((a, b) => a * b, 1));
  const variable = async (name: string, data: Float32Array, attrs: Record<string, unknown>) => {
    const arr = await zarr.create(r.resolve(name), {
      shape: SHAPE,
      chunkShape: [1, 1, 2, 13, 8],
      dtype: "float32",
      fillValue: Number.NaN,
      dimensionNames: dims,
      attributes: attrs,
    });
    await zarr.set(arr, null, { data, shape: SHAPE, stride } as never);
  };
  await variable("temperature_2m", values(1, -20, 25), { units: "degree_Celsius", step_type: "instant" });
  await variable("precipitation_surface", values(2, 0, 0.002, true), {
    units: "kg m-2 s-1",
    step_type: "avg",
    long_name: "Precipitation rate",
  });
  await variable("wind_u_10m", values(3, -15, 15), { units: "m s-1", step_type: "instant" });
  shard(path, "wind_u_10m", [2, 1, 2, 1, 2]);
}

async function zget(name: string, sel: (number | null)[]) {
  const arr = await zarr.open.v3(zarr.root(new FileSystemStore(root)).resolve(name), { kind: "array" });
  return Array.from((await zarr.get(arr, sel)).data as Float32Array);
}

before(async () => {
  dir = tempDir("gridcast-dynamical-");
  root = join(dir, "noaa-gefs-forecast.zarr");
  await writeStore(root);
  srv = await testServer(root);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  if (!process.env.KEEP_DYN) cleanup(dir);
});

const f32 = (x: number) => Math.fround(x);
const nul = (x: number) => (Number.isNaN(x) ? null : x);

test("the root dataset is one group; runs, leads and members come from init_time, lead_time, ensemble_member", async () => {
  const models = (await get(`${srv.url}/api/models`)).json();
  assert.equal(models.forecast.length, 1);
  const g = models.forecast[0];
  assert.equal(g.id, "forecast/noaa-gefs-forecast");
  assert.deepEqual(g.runs, ["2025-01-01T00:00:00", "2025-01-01T06:00:00"]);
  assert.deepEqual(g.lead_hours, [0, 3, 6, 9]);
  assert.deepEqual(g.members, [0, 1, 2]);
  assert.deepEqual(g.variables, ["prate", "t2m", "u10"]);
});

test("temperature_2m in degree_Celsius answers K, member by member, equal to zarrita's values", async () => {
  // lat 45 → row 6, lon 10 → column 8
  for (const m of [0, 2]) {
    const want = (await zget("temperature_2m", [1, m, null, 6, 8])).map((x) => f32(f32(x) + 273.15));
    const p = (await get(`${srv.url}/point?lat=45&lon=10&var=temperature_2m&member=${m}`, H())).json();
    assert.equal(p.units, "K");
    assert.equal(p.member, m);
    p.values.forEach((v: number, i: number) => {
      assert.ok(Math.abs(v - want[i]) < 1e-3, `${v} vs ${want[i]}`);
    });
  }
});

test("precipitation_surface is a mean rate over the previous 3 h step, in mm/h, NaN at lead 0", async () => {
  const raw = await zget("precipitation_surface", [0, 0, null, 6, 8]);
  const p = (await get(`${srv.url}/point?lat=45&lon=10&var=precipitation_surface&run=0`, H())).json();
  assert.equal(p.units, "mm h-1");
  assert.equal(p.temporal.kind, "mean");
  assert.equal(p.temporal.interval_hours, 3);
  assert.equal(p.temporal.source, "step_type");
  assert.deepEqual(p.intervals[2], { start: "2025-01-01T03:00:00", end: "2025-01-01T06:00:00" });
  assert.equal(p.values[0], null);
  // The export header states the same windows for the leads it holds.
  const exp = await get(
    `${srv.url}/api/export/forecast~noaa-gefs-forecast/npy?var=prate&time_index=0&lead_start=1&lead_stop=2&lat_min=45&lat_max=45&lon_min=10&lon_max=10`,
    H(),
  );
  const field = JSON.parse(exp.headers.get("x-svc-field")!);
  assert.equal(field.temporal.description, "mean over the previous 3 h");
  assert.deepEqual(field.intervals, p.intervals.slice(1, 3));
  assert.equal(field.units, "mm h-1");
  assert.equal(field.stored_units, "kg m-2 s-1");
  p.values.slice(1).forEach((v: number, i: number) => {
    assert.ok(Math.abs(v - raw[i + 1] * 3600) < 1e-4, `${v} vs ${raw[i + 1] * 3600}`);
  });
});

test("a sharded variable reads the same through /point, export and /data as through zarrita", async () => {
  const col = (await zget("wind_u_10m", [1, 1, null, 6, 8])).map(nul);
  const p = (await get(`${srv.url}/point?lat=45&lon=10&var=u10&member=1`, H())).json();
  assert.deepEqual(p.values, col);
  const exp = await get(
    `${srv.url}/api/export/forecast~noaa-gefs-forecast/npy?var=u10&time_index=1&member=1&lead_start=0&lead_stop=3&lat_min=45&lat_max=45&lon_min=10&lon_max=10`,
    H(),
  );
  assert.equal(exp.status, 200, exp.body.toString());
  const body = new Float32Array(exp.body.buffer.slice(exp.body.byteOffset + exp.body.length - 16));
  assert.deepEqual(Array.from(body).map(nul), col);
  const remote = new zarr.FetchStore(`${srv.url}/data/datasets/forecast~noaa-gefs-forecast/zarr`, {
    overrides: { headers: H() },
  });
  const arr = await zarr.open.v3(zarr.root(remote).resolve("u10"), { kind: "array" });
  assert.deepEqual(arr.shape, SHAPE);
  const over = await zarr.get(arr, [1, 1, null, 6, 8]);
  assert.deepEqual(Array.from(over.data as Float32Array).map(nul), col);
});
