// zarrita (FetchStore, the key added through its fetch option) opens the v3 view of every /data
// dataset from the root zarr.json's consolidated metadata and must read exactly what /point and the
// .npy export report, and decode the instants /point reports.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as zarr from "zarrita";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { recodedVariants } from "./data-fixtures.ts";

let storeDir: string;
let srv: TestServer;
let key: string;

before(async () => {
  storeDir = await sampleStore();
  recodedVariants(storeDir);
  srv = await testServer(storeDir);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

type Arr = zarr.Array<zarr.DataType, zarr.Readable>;

function openStore(path: string) {
  const store = new zarr.FetchStore(`${srv.url}${path}`, {
    fetch: (request) => {
      const headers = new Headers(request.headers);
      headers.set("X-API-Key", key);
      return fetch(new Request(request, { headers }));
    },
  });
  return zarr.withConsolidatedMetadata(store, { format: "v3" });
}

/** Float32 of each physical value, CF packing applied as a zarrita user would. */
function physical(arr: Arr, data: ArrayLike<number | bigint>): Float32Array {
  const a = arr.attrs as Record<string, unknown>;
  const scale = typeof a.scale_factor === "number" ? a.scale_factor : 1;
  const offset = typeof a.add_offset === "number" ? a.add_offset : 0;
  const fill = a._FillValue === "NaN" ? Number.NaN : (a._FillValue as number | undefined);
  return Float32Array.from(Array.from(data, Number), (v) => (v === fill ? Number.NaN : v * scale + offset));
}

function readNpy(body: Buffer): Float32Array {
  assert.equal(body.subarray(1, 6).toString("latin1"), "NUMPY");
  const headerLen = body[6] === 1 ? body.readUInt16LE(8) : body.readUInt32LE(8);
  const start = (body[6] === 1 ? 10 : 12) + headerLen;
  assert.match(body.subarray(0, start).toString("latin1"), /'descr': '<f4'/);
  const data = body.subarray(start);
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
}

function indexOf(coord: Float64Array, value: number, isLon: boolean): number {
  let best = 0;
  let bestD = Number.POSITIVE_INFINITY;
  coord.forEach((c, i) => {
    let d = Math.abs(c - value);
    if (isLon) d = Math.min(d % 360, 360 - (d % 360));
    if (d < bestD) [best, bestD] = [i, d];
  });
  assert.ok(bestD < 1e-9, `${value} is not a grid node`);
  return best;
}

function axis(spec: { first?: number; step?: number; count: number; values?: number[] }): number[] {
  return spec.values ?? Array.from({ length: spec.count }, (_, k) => spec.first! + k * spec.step!);
}

function assertSame(actual: Float32Array, expected: ArrayLike<number>, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let finite = 0;
  for (let i = 0; i < actual.length; i++) {
    const e = Math.fround(expected[i]);
    if (Number.isNaN(e)) assert.ok(Number.isNaN(actual[i]), `${what}[${i}]: ${actual[i]} where NaN expected`);
    else {
      assert.equal(actual[i], e, `${what}[${i}]`);
      finite++;
    }
  }
  assert.ok(finite > 0, `${what}: no values at all`);
}

test("zarrita reads every dataset's v3 view: values equal /point and the .npy export", async () => {
  const h = { "X-API-Key": key };
  const { datasets } = (await get(`${srv.url}/data/datasets`, h)).json();
  assert.equal(datasets.length, 3);
  for (const d of datasets as { id: string; group: string; zarr: string; variables: { name: string }[] }[]) {
    const root = zarr.root(await openStore(d.zarr));
    const coord = async (name: string) => {
      const arr = await zarr.open.v3(root.resolve(name), { kind: "array" });
      return (await zarr.get(arr)).data as ArrayLike<number | bigint>;
    };
    const lat = Float64Array.from(Array.from(await coord("lat"), Number));
    const lon = Float64Array.from(Array.from(await coord("lon"), Number));
    const runHours = Array.from(await coord("time"), Number);
    const leadHours = Array.from(await coord("lead_time"), Number);
    const run = runHours.length - 1;
    const [pLat, pLon] =
      d.id === "forecast~global"
        ? [-31, 101]
        : [lat[Math.floor(lat.length / 3)], lon[Math.floor((2 * lon.length) / 3)]];

    for (const { name } of d.variables) {
      const arr = (await zarr.open.v3(root.resolve(name), { kind: "array" })) as unknown as Arr;
      const hasLevel = arr.dimensionNames?.includes("level");
      const level = hasLevel ? "&level=500" : "";
      const p = (
        await get(`${srv.url}/point?lat=${pLat}&lon=${pLon}&var=${name}&group=${d.group}&run=${run}${level}`, h)
      ).json();
      assert.equal(p.group, d.group);
      const iy = indexOf(lat, p.grid_lat, false);
      const ix = indexOf(lon, p.grid_lon, true);
      const lv = hasLevel ? [0] : [];
      const col = await zarr.get(arr, [run, null, ...lv, iy, ix]);
      assertSame(
        physical(arr, col.data as ArrayLike<number>),
        p.values.map((v: number | null) => v ?? Number.NaN),
        `${d.id}/${name} point`,
      );
      const valid = leadHours.map((l) => new Date((runHours[run] + l) * 3_600_000).toISOString().slice(0, 19));
      assert.deepEqual(valid, p.times, `${d.id}/${name} times`);

      const sorted = (c: Float64Array) => [...c].sort((a, b) => a - b);
      const [la, lo] = [sorted(lat), sorted(lon)];
      const box =
        d.id === "forecast~global"
          ? [-21, 9, 60, 81]
          : [la[2], la[Math.floor(la.length / 2)], lo[3], lo[Math.floor(lo.length / 2)]];
      const r = await get(
        `${srv.url}/api/export/${d.id}/npy?var=${name}&time_index=0&lead_start=1&lead_stop=3` +
          `&lat_min=${box[0]}&lat_max=${box[1]}&lon_min=${box[2]}&lon_max=${box[3]}${level}`,
        h,
      );
      assert.equal(r.status, 200);
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      const rows = axis(field.lat).map((v) => indexOf(lat, v, false));
      const cols = axis(field.lon).map((v) => indexOf(lon, v, true));
      const [r0, r1] = [Math.min(...rows), Math.max(...rows) + 1];
      const [c0, c1] = [Math.min(...cols), Math.max(...cols) + 1];
      const sub = await zarr.get(arr, [0, zarr.slice(1, 4), ...lv, zarr.slice(r0, r1), zarr.slice(c0, c1)]);
      const vals = physical(arr, sub.data as ArrayLike<number>);
      const st = sub.stride.slice(-3);
      const picked = new Float32Array(3 * rows.length * cols.length);
      let k = 0;
      for (let l = 0; l < 3; l++)
        for (const ry of rows)
          for (const cx of cols) picked[k++] = vals[l * st[0] + (ry - r0) * st[1] + (cx - c0) * st[2]];
      assertSame(picked, readNpy(r.body), `${d.id}/${name} box`);
    }
  }
});
