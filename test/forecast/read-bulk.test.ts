// readBulk, the map build's read of a lead that is alone in its chunks: each chunk is decoded
// straight into the field on libuv's pool, outside the chunk cache, and only the part of it the
// lead lies in (the Blosc blocks it spans, and with LZ4 the head of the last one's byte planes).
// Compared bit for bit with what xarray reads from a store it wrote (chunks of every lead, so a
// lead is a small part of each chunk, at its start, middle and end), and with readValues where the
// stored values are not the physical ones (CF fill markers: then it must read as readValues does).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { readBulk, readValues, regionOf } from "../../src/forecast/read.ts";
import { nativeAddon } from "../../src/native.ts";
import { bufferStats } from "../../src/store/scan-buffers.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, PYTHON, tempDir } from "../helpers/harness.ts";

const LEADS = 25;
const dir = tempDir();
const forecast = join(dir, "forecast");
const cf = join(dir, "cf");
const small = join(dir, "small-chunks");

/** xarray's float32 values of t2m at run 0 and a lead, as bytes. */
function xarrayField(lead: number, store = forecast): Float32Array {
  const code = [
    "import sys, xarray as xr, numpy as np",
    "ds = xr.open_zarr(sys.argv[1], group='forecast/global', consolidated=True)",
    "sys.stdout.buffer.write(np.ascontiguousarray(ds['t2m'].isel(time=0, lead_time=int(sys.argv[2])).values, dtype='<f4').tobytes())",
  ].join("\n");
  const out = execFileSync(PYTHON, ["-c", code, store, String(lead)], { maxBuffer: 1 << 26 });
  return new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.length));
}

describe("readBulk: a lead read in bulk outside the chunk cache", () => {
  before(() => {
    // 1° global, one run, 25 leads in every chunk (xarray + zarr 2, Blosc LZ4 with byte shuffle).
    const script = join(import.meta.dirname, "../python/xarray_forecast.py");
    execFileSync(PYTHON, [script, forecast, "1", "1", String(LEADS), "90"]);
    execFileSync(PYTHON, [join(import.meta.dirname, "../python/cf_stores.py"), "write", cf, "2"]);
    // The same field in 15° chunks: 13 × 24 = 312 chunks for one lead.
    execFileSync(PYTHON, [script, small, "1", "1", "3", "15"]);
  });
  after(() => cleanup(dir));

  test("equals xarray's values bit for bit at the first, a middle and the last lead, and leaves the cache empty", async () => {
    const store = new Store(forecast);
    const group = await store.forecastGroup("forecast/global");
    const v = group.variables.get("t2m")!;
    assert.equal(v.array.chunks[v.roles.indexOf("lead")], LEADS, "every lead in each chunk");
    const inPlace = nativeAddon()?.decodeRuns !== undefined;
    // Coordinates are cached when the group opens; no t2m chunk may join them.
    const cached = store.cache.stats().entries;
    assert.equal(v.array.readsPhysicalInPlace(), inPlace, "float32 with a NaN fill: stored values are physical");
    for (const lead of [0, 1, 12, LEADS - 1]) {
      const got = await readBulk(v, regionOf(group, v, { run: 0, lead }));
      const want = xarrayField(lead);
      assert.equal(got.length, want.length);
      assert.deepEqual(new Uint8Array(got.buffer), new Uint8Array(want.buffer), `lead ${lead}`);
    }
    if (inPlace) assert.equal(store.cache.stats().entries, cached, "no chunk of t2m entered the cache");
  });

  test("an array whose stored values are not physical (CF fill markers) reads as readValues does", async () => {
    const store = new Store(cf);
    const [id] = await store.forecastGroupIds();
    const group = await store.forecastGroup(id);
    let checked = 0;
    for (const name of ["t2m", "msl"]) {
      const v = group.variables.get(name)!;
      assert.equal(v.array.readsPhysicalInPlace(), false, `${name} carries missing markers`);
      for (let lead = 0; lead < group.leads.length; lead++) {
        const region = regionOf(group, v, { run: 1, lead });
        const got = await readBulk(v, region);
        const want = await readValues(v, region);
        assert.deepEqual(got, want, `${name} lead ${lead}`);
        assert.ok(got.some(Number.isNaN), "the missing cells are NaN");
        checked++;
      }
    }
    assert.equal(checked, 6);
  });

  test("a field of hundreds of chunks is read a few chunks at a time, their buffers reused, and equals xarray", async (t) => {
    if (nativeAddon()?.decodeRuns === undefined) {
      t.skip("no addon: readBulk reads as readValues through the cache");
      return;
    }
    const store = new Store(small);
    const group = await store.forecastGroup("forecast/global");
    const v = group.variables.get("t2m")!;
    const region = regionOf(group, v, { run: 0, lead: 1 });
    const chunks = v.array.chunksFor(region).length;
    assert.equal(chunks, 13 * 24);
    const before = { ...bufferStats };
    bufferStats.peak = bufferStats.out;
    const got = await readBulk(v, region);
    assert.deepEqual(
      new Uint8Array(got.buffer, got.byteOffset, got.byteLength),
      new Uint8Array(xarrayField(1, small).buffer),
    );
    // Every chunk's stored bytes went through scan-buffers, at most a handful out at once (all of
    // them at once made a fresh zero-filled buffer per chunk of a 0.25° field: a tenth of a build).
    assert.equal(bufferStats.taken - before.taken, chunks);
    assert.equal(bufferStats.out, before.out, "every buffer came back");
    assert.ok(bufferStats.peak - before.out <= 8, `at most 8 chunks in flight, saw ${bufferStats.peak - before.out}`);
    assert.ok(bufferStats.fresh - before.fresh <= 8, "the rest reused the first ones' buffers");
  });
});
