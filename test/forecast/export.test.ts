// /api/export and /api/export/{id}/npy over real HTTP: numpy reads the body, the values match
// /point and a direct read, sizes are checked before any chunk is read, antimeridian boxes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, PYTHON, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
const scratch = tempDir();

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { field_export_max_mb: 0.25 });
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir, scratch);
});

const H = () => ({ "X-API-Key": key });
const exportUrl = (id: string, q: string) => `${srv.url}/api/export/${id}/npy?${q}`;

function parseNpy(buf: Buffer): { shape: number[]; data: Float32Array } {
  const hlen = buf.readUInt16LE(8);
  const header = buf.subarray(10, 10 + hlen).toString("latin1");
  const shape = /'shape': \(([^)]*)\)/
    .exec(header)![1]
    .split(",")
    .filter((s) => s.trim())
    .map(Number);
  const body = buf.subarray(10 + hlen);
  const copy = new Uint8Array(body);
  return { shape, data: new Float32Array(copy.buffer) };
}

describe("GET /api/export", () => {
  test("lists groups in ~ form with fields, aliases, units, dims, chunking and schema revisions", async () => {
    const r = await get(`${srv.url}/api/export`, H());
    assert.equal(r.status, 200);
    const body = r.json();
    const ids = body.groups.map((g: { id: string }) => g.id).sort();
    assert.deepEqual(ids, ["forecast~alps", "forecast~europe", "forecast~global"]);
    const global = body.groups.find((g: { id: string }) => g.id === "forecast~global");
    const t2m = global.fields.find((f: { name: string }) => f.name === "t2m");
    assert.ok(t2m.aliases.includes("2t"));
    assert.equal(t2m.units, "K");
    assert.deepEqual(t2m.dims, ["time", "lead_time", "lat", "lon"]);
    assert.match(t2m.schema_revision, /^[0-9a-f]{12}$/);
    const tcc = global.fields.find((f: { name: string }) => f.name === "tcc");
    assert.equal(tcc.packed, true);
    assert.notEqual(tcc.schema_revision, t2m.schema_revision);
    const alps = body.groups.find((g: { id: string }) => g.id === "forecast~alps");
    assert.equal(alps.fields.find((f: { name: string }) => f.name === "u10").stored, "10u");
  });
});

describe("GET /api/export/{id}/npy", () => {
  test("numpy loads the body; shape, dtype and values agree with X-SVC-Field and /point", async () => {
    const q = "var=2t&time_index=1&lead_start=1&lead_stop=4&lat_min=-10&lat_max=10&lon_min=20&lon_max=40";
    const r = await get(exportUrl("forecast~global", q), H());
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    assert.equal(field.name, "t2m");
    assert.deepEqual(field.dims, ["lead_time", "lat", "lon"]);
    assert.deepEqual(field.shape, [4, 11, 11]);
    assert.equal(field.dtype, "float32");
    assert.deepEqual(field.lat, { first: -10, step: 2, count: 11 });
    assert.deepEqual(field.lon, { first: 20, step: 2, count: 11 });
    assert.equal(Number(r.headers.get("content-length")), r.body.length);
    const file = join(scratch, "a.npy");
    writeFileSync(file, r.body);
    const py = execFileSync(PYTHON, [
      "-c",
      "import numpy, json, sys; a = numpy.load(sys.argv[1]); print(json.dumps({'shape': list(a.shape), 'dtype': str(a.dtype), 'v': float(a[2, 5, 3])}))",
      file,
    ]).toString();
    const got = JSON.parse(py);
    assert.deepEqual(got.shape, field.shape);
    assert.equal(got.dtype, "float32");
    // cell [lead 3 (index 2), lat 0 (index 5), lon 26 (index 3)] equals /point at that node
    const p = (await get(`${srv.url}/point?lat=0&lon=26&var=t2m&run=1`, H())).json();
    assert.equal(got.v, p.values[3]);
    const { data } = parseNpy(r.body);
    for (let lead = 0; lead < 4; lead++) assert.equal(data[lead * 121 + 5 * 11 + 3], p.values[lead + 1]);
  });

  test("a box across the antimeridian comes back contiguous and eastward", async () => {
    const q = "var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=0&lat_max=4&lon_min=170&lon_max=-170";
    const r = await get(exportUrl("forecast~global", q), H());
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    assert.deepEqual(field.lon, { first: 170, step: 2, count: 11 });
    const { data, shape } = parseNpy(r.body);
    assert.deepEqual(shape, [1, 3, 11]);
    const west = (await get(`${srv.url}/point?lat=2&lon=178&var=t2m&run=0`, H())).json();
    const east = (await get(`${srv.url}/point?lat=2&lon=-178&var=t2m&run=0`, H())).json();
    assert.equal(data[1 * 11 + 4], west.values[0]);
    assert.equal(data[1 * 11 + 6], east.values[0]);
  });

  test("a lead larger than a slab goes in bands of rows: the .npy and the GeoTIFF are the same as whole leads", async () => {
    // Rows reversed from storage order, across the antimeridian; 31 floats a row, so 0.0005 MiB
    // (524 bytes) is bands of 4 rows, the last of 3.
    const q = "var=t2m&time_index=1&lead_start=1&lead_stop=3&lat_min=-30&lat_max=30&lon_min=150&lon_max=-150";
    const settings = srv.running.ctx.settings;
    const saved = settings.read_slab_mb;
    const npy: Buffer[] = [];
    const tiff: Buffer[] = [];
    try {
      for (const mb of [0, 0.0005]) {
        settings.read_slab_mb = mb;
        const n = await get(exportUrl("forecast~global", q), H());
        const t = await get(exportUrl("forecast~global", q).replace("/npy?", "/tiff?"), H());
        assert.equal(n.status, 200, n.body.toString());
        assert.equal(t.status, 200, t.body.toString());
        assert.equal(Number(t.headers.get("content-length")), t.body.length);
        npy.push(n.body);
        tiff.push(t.body);
      }
    } finally {
      settings.read_slab_mb = saved;
    }
    assert.ok(npy[1].equals(npy[0]), "the .npy in bands differs from whole leads");
    assert.ok(tiff[1].equals(tiff[0]), "the GeoTIFF in bands differs from whole leads");
    // The GeoTIFF's values (after its head) are the .npy's, each lead's rows north first.
    const { shape, data } = parseNpy(npy[0]);
    const [leads, ny, nx] = shape;
    const values = tiff[0].subarray(tiff[0].length - leads * ny * nx * 4);
    const north = new Float32Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.length));
    for (let l = 0; l < leads; l++) {
      for (let r = 0; r < ny; r++) {
        const want = data.subarray((l * ny + (ny - 1 - r)) * nx, (l * ny + (ny - r)) * nx);
        assert.deepEqual(north.subarray((l * ny + r) * nx, (l * ny + r + 1) * nx), want, `lead ${l} row ${r}`);
      }
    }
  });

  test("the body is the same whatever the slab size: one lead at a time, a few, all at once", async () => {
    // Across the antimeridian (two column runs per slab), rows reversed from storage order and a
    // lead range not starting at 0.
    const q = "var=t2m&time_index=1&lead_start=1&lead_stop=6&lat_min=-30&lat_max=30&lon_min=150&lon_max=-150";
    const settings = srv.running.ctx.settings;
    const saved = settings.read_slab_mb;
    const bodies: Buffer[] = [];
    try {
      // 0 → one lead per slab; 31 × 61 floats per lead here, so 0.02 MiB is 2 leads per slab.
      for (const mb of [0, 0.02, saved]) {
        settings.read_slab_mb = mb;
        const r = await get(exportUrl("forecast~global", q), H());
        assert.equal(r.status, 200, r.body.toString());
        bodies.push(r.body);
      }
    } finally {
      settings.read_slab_mb = saved;
    }
    assert.deepEqual(parseNpy(bodies[0]).shape, [6, 31, 31]);
    assert.ok(bodies[1].equals(bodies[0]), "two leads per slab differ from one");
    assert.ok(bodies[2].equals(bodies[0]), "one slab differs from one lead per slab");
    // And the values are the stored ones: every lead of the south-east corner against /point.
    const { data } = parseNpy(bodies[0]);
    const p = (await get(`${srv.url}/point?lat=-30&lon=-150&var=t2m&run=1`, H())).json();
    for (let lead = 0; lead < 6; lead++) assert.equal(data[lead * 31 * 31 + 30], p.values[lead + 1]);
  });

  test("over field_export_max_mb → 413 with sizes, and no chunk was read", async () => {
    await get(`${srv.url}/api/export`, H()); // metadata warm
    srv.running.ctx.store.backend.reset();
    const q = "var=t2m&time_index=0&lead_start=0&lead_stop=6&lat_min=-90&lat_max=90&lon_min=-180&lon_max=180";
    const r = await get(exportUrl("forecast~global", q), H());
    assert.equal(r.status, 413);
    const p = r.json();
    assert.equal(p.limit_mb, 0.25);
    assert.ok(p.requested_mb > 0.25);
    assert.match(p.advice, /narrow/);
    const chunkReads = srv.running.ctx.store.backend.keysRead().filter((k) => /\/c\//.test(k));
    assert.deepEqual(chunkReads, []);
  });

  test("levels: required for level fields, rejected elsewhere", async () => {
    const base = "time_index=0&lead_start=0&lead_stop=1&lat_min=40&lat_max=50&lon_min=0&lon_max=10";
    assert.equal((await get(exportUrl("forecast~global", `var=t&${base}&level=500`), H())).status, 200);
    const missing = await get(exportUrl("forecast~global", `var=t&${base}`), H());
    assert.equal(missing.status, 400);
    assert.equal(missing.json().param, "level");
    assert.equal((await get(exportUrl("forecast~global", `var=t2m&${base}&level=500`), H())).status, 400);
  });

  test("bad input names the parameter; unknown group 404; bad id 400", async () => {
    const ok = "var=t2m&time_index=0&lead_start=0&lead_stop=1&lat_min=40&lat_max=50&lon_min=0&lon_max=10";
    const cases: [string, string][] = [
      [ok.replace("time_index=0", "time_index=9"), "time_index"],
      [ok.replace("time_index=0", "time_index=-1"), "time_index"],
      [ok.replace("lead_stop=1", "lead_stop=99"), "lead_stop"],
      [ok.replace("lead_start=0&lead_stop=1", "lead_start=3&lead_stop=1"), "lead_stop"],
      [ok.replace("lat_min=40&lat_max=50", "lat_min=50&lat_max=40"), "lat_min"],
      [ok.replace("lat_min=40", "lat_min=NaN"), "lat_min"],
      [ok.replace("lon_max=10", "lon_max=Infinity"), "lon_max"],
      [ok.replace("var=t2m&", ""), "var"],
    ];
    for (const [q, param] of cases) {
      const r = await get(exportUrl("forecast~global", q), H());
      assert.equal(r.status, 400, q);
      assert.equal(r.json().param, param, q);
    }
    assert.equal((await get(exportUrl("forecast~mars", ok), H())).status, 404);
    assert.equal((await get(exportUrl("global", ok), H())).status, 400);
    assert.equal((await get(exportUrl("forecast~global", ok), {})).status, 401);
  });
});
