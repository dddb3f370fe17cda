// /point and the .npy export in display units (units=display, or another unit the maps offer),
// over real HTTP against a store written by xarray + zarr-python 2, compared with the values
// xarray reads back converted by hand: K → °C, Pa → hPa, m → mm, fraction → %, m/s → km/h.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

const NLAT = 37;
const NLON = 72;
const NLEAD = 4;
let root: string;
let srv: TestServer;
let key: string;
const truth = new Map<string, Float32Array>();

before(async () => {
  root = tempDir("gridcast-units-");
  execFileSync(PYTHON, [join(import.meta.dirname, "../python/units_forecast.py"), join(root, "store"), root]);
  for (const v of ["t2m", "msl", "tp", "tcc", "u10"]) {
    const b = readFileSync(join(root, `${v}.f32`));
    truth.set(v, new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4));
  }
  srv = await testServer(join(root, "store"));
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(root);
});

/** xarray's value at (lead, lat, lon) of the grid: lat index from 90 down, lon from 0 east. */
function stored(v: string, lead: number, lat: number, lon: number): number {
  const i = Math.round((90 - lat) / 5);
  const j = Math.round((((lon % 360) + 360) % 360) / 5);
  return truth.get(v)![(lead * NLAT + i) * NLON + j];
}

const BY_HAND: Record<string, { units: string; stored: string; f: (x: number) => number }> = {
  t2m: { units: "°C", stored: "K", f: (k) => k - 273.15 },
  msl: { units: "hPa", stored: "Pa", f: (pa) => pa / 100 },
  tp: { units: "mm", stored: "m", f: (m) => m * 1000 },
  tcc: { units: "%", stored: "1", f: (x) => x * 100 },
  u10: { units: "m/s", stored: "m s-1", f: (x) => x },
};

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

describe("/point units", () => {
  for (const [v, hand] of Object.entries(BY_HAND)) {
    it(`answers ${v} in ${hand.units} with units=display, and as stored by default`, async () => {
      const lat = 47.3;
      const lon = 8.6;
      const plain = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=${v}`, { "X-API-Key": key });
      assert.equal(plain.status, 200, plain.body.toString());
      const p = plain.json();
      assert.equal(p.units, hand.stored);
      assert.equal(p.converted_from, undefined);
      const shown = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=${v}&units=display`, { "X-API-Key": key });
      assert.equal(shown.status, 200, shown.body.toString());
      const d = shown.json();
      assert.equal(d.units, hand.units);
      assert.equal(d.converted_from, hand.stored);
      assert.equal(d.values.length, NLEAD);
      for (let lead = 0; lead < NLEAD; lead++) {
        const x = stored(v, lead, p.grid_lat, p.grid_lon);
        close(p.values[lead], x, `${v} stored lead ${lead}`);
        close(d.values[lead], hand.f(x), `${v} display lead ${lead}`);
      }
    });
  }

  it("takes any unit the maps offer (km/h for wind) and refuses others with a 400 problem", async () => {
    const r = await get(`${srv.url}/point?lat=-20&lon=100&var=u10m&units=km/h`, { "X-API-Key": key });
    assert.equal(r.status, 200, r.body.toString());
    const d = r.json();
    assert.equal(d.units, "km/h");
    for (let lead = 0; lead < NLEAD; lead++)
      close(d.values[lead], stored("u10", lead, d.grid_lat, d.grid_lon) * 3.6, "km/h");
    const bad = await get(`${srv.url}/point?lat=-20&lon=100&var=t2m&units=km/h`, { "X-API-Key": key });
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get("content-type") ?? "", /problem\+json/);
    assert.ok(bad.json().available.includes("°C"), JSON.stringify(bad.json()));
    const stored_ = await get(`${srv.url}/point?lat=-20&lon=100&var=t2m&units=stored`, { "X-API-Key": key });
    assert.equal(stored_.json().units, "K");
  });
});

/** A little-endian float32 .npy body: shape and data. */
function npy(body: Buffer): { shape: number[]; data: Float32Array } {
  assert.equal(body.subarray(1, 6).toString("latin1"), "NUMPY");
  const len = body.readUInt16LE(8);
  const header = body.subarray(10, 10 + len).toString("latin1");
  assert.match(header, /'descr': '<f4'/);
  const shape = header
    .match(/'shape': \(([^)]*)\)/)![1]
    .split(",")
    .filter((s) => s.trim())
    .map(Number);
  const data = body.subarray(10 + len);
  const copy = new Float32Array(data.length / 4);
  for (let i = 0; i < copy.length; i++) copy[i] = data.readFloatLE(i * 4);
  return { shape, data: copy };
}

describe("export units", () => {
  for (const v of ["t2m", "msl", "tp", "tcc"]) {
    it(`exports ${v} in ${BY_HAND[v].units} with units=display and says so in X-SVC-Field`, async () => {
      const q = `var=${v}&time_index=0&lead_start=1&lead_stop=3&lat_min=30&lat_max=60&lon_min=-20&lon_max=30`;
      const base = await get(`${srv.url}/api/export/forecast~global/npy?${q}`, { "X-API-Key": key });
      assert.equal(base.status, 200, base.body.toString());
      const r = await get(`${srv.url}/api/export/forecast~global/npy?${q}&units=display`, { "X-API-Key": key });
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.equal(field.units, BY_HAND[v].units);
      assert.equal(field.converted_from, BY_HAND[v].stored);
      assert.equal(JSON.parse(base.headers.get("x-svc-field")!).units, BY_HAND[v].stored);
      const a = npy(base.body);
      const b = npy(r.body);
      assert.deepEqual(a.shape, b.shape);
      const lats = field.lat;
      const lons = field.lon;
      assert.equal(
        b.data.length,
        a.shape.reduce((x, y) => x * y, 1),
      );
      let k = 0;
      for (let lead = 1; lead <= 3; lead++) {
        for (let i = 0; i < lats.count; i++) {
          for (let j = 0; j < lons.count; j++, k++) {
            const x = stored(v, lead, lats.first + i * lats.step, lons.first + j * lons.step);
            assert.equal(a.data[k], x, `${v} stored [${lead},${i},${j}]`);
            // Float32 out: compared at float32 precision.
            const want = BY_HAND[v].f(x);
            assert.ok(
              Math.abs(b.data[k] - want) <= 2e-7 * Math.max(1, Math.abs(want)) * 4,
              `${v} [${lead},${i},${j}]: ${b.data[k]} vs ${want}`,
            );
          }
        }
      }
    });
  }

  it("refuses a unit the variable has not", async () => {
    const q = "var=tp&time_index=0&lead_start=0&lead_stop=0&lat_min=30&lat_max=60&lon_min=-20&lon_max=30&units=°C";
    const r = await get(`${srv.url}/api/export/forecast~global/npy?${encodeURI(q)}`, { "X-API-Key": key });
    assert.equal(r.status, 400);
    assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
  });
});
