// Cell grids at the sizes producers write and the degenerate ones a broken coordinate gives, each
// written with the project's own Zarr writer (v3, zstd) as metadata and a few chunks (the rest
// read as the fill value), served over loopback:
//  - whole HEALPix grids at nside 2048, 4096 and 8192 (50 M to 805 M cells): /point, the click
//    value and a box export answer from computed centres, nothing allocated per cell (the
//    server's resident memory barely moves), and a whole-globe export is 413 from its counts;
//  - an ICON group declaring 2e9 cells: refused by name (clat) before anything is read;
//  - 20,000 ICON cells at one point (a coordinate read as its fill value) and 20,000 cells 1e-5°
//    apart: a whole-globe export is 413 sized by counts, no per-node list made.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ZarrWriter } from "../../src/sample/zarr-writer.ts";
import { healpixCentre, healpixNearest } from "../../src/store/healpix.ts";
import { cleanup, get, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const RUN_HOURS = 481_000; // 2024-11-15T16:00Z, hours since 1970
/** Cells per chunk of the large grids: 4 MiB of float32. */
const CHUNK = 1 << 20;
const NSIDES = [2048, 4096, 8192];
/** Points the HEALPix tests ask for (well inside the chunks written for them). */
const POINTS: [number, number][] = [
  [47.3, 8.5],
  [-33.9, 151.2],
];

let dir = "";
let srv: TestServer;
let key = "";

/** A value that names its cell (exact in float32: below 2^24). */
const cellValue = (cell: number) => 200 + (cell % 100_003) / 1000;

async function writeStore(root: string): Promise<Map<string, Set<number>>> {
  const w = new ZarrWriter(root, 1);
  w.plainGroup("forecast", 3);
  const timeAxes = async (g: ReturnType<ZarrWriter["group"]>) => {
    await g
      .array("time", {
        shape: [1],
        chunks: [1],
        dtype: "int64",
        dims: ["time"],
        fill: 0,
        attrs: {
          units: "hours since 1970-01-01 00:00:00",
          calendar: "proleptic_gregorian",
          standard_name: "forecast_reference_time",
        },
      })
      .writeAll(BigInt64Array.of(BigInt(RUN_HOURS)));
    await g
      .array("lead_time", {
        shape: [2],
        chunks: [2],
        dtype: "int32",
        dims: ["lead_time"],
        fill: 0,
        attrs: { units: "hours", standard_name: "forecast_period", dtype: "timedelta64[ns]" },
      })
      .writeAll(Int32Array.of(0, 6));
  };
  const written = new Map<string, Set<number>>();
  for (const nside of NSIDES) {
    const g = w.group(`forecast/hp${nside}`, 3, {});
    await timeAxes(g);
    g.array("crs", {
      shape: [],
      chunks: [],
      dtype: "int32",
      dims: [],
      fill: 0,
      attrs: { grid_mapping_name: "healpix", healpix_nside: nside, healpix_order: "nested" },
    });
    const n = 12 * nside * nside;
    const t2m = g.array("t2m", {
      shape: [1, 2, n],
      chunks: [1, 1, CHUNK],
      dtype: "float32",
      dims: ["time", "lead_time", "cell"],
      fill: "NaN",
      attrs: { units: "K", standard_name: "air_temperature", grid_mapping: "crs", _FillValue: "NaN" },
    });
    // Only the chunks holding the test points (both leads) exist.
    const chunks = new Set(
      POINTS.map(([lat, lon]) => Math.floor(healpixNearest(nside, "nested", lat, lon).cell / CHUNK)),
    );
    for (const c of chunks) {
      for (const lead of [0, 1]) {
        const buf = t2m.chunkBuffer() as Float32Array;
        for (let k = 0; k < CHUNK; k++) buf[k] = cellValue(c * CHUNK + k) + lead;
        await t2m.writeChunk([0, lead, c], buf);
      }
    }
    written.set(`hp${nside}`, chunks);
    g.close();
  }
  // ICON declaring 2e9 cells: metadata only.
  const cdi = { CDI_grid_type: "unstructured" };
  const icon = (name: string, n: number, chunk: number) => {
    const g = w.group(`forecast/${name}`, 3, {});
    const coord = (c: string, standard: string) =>
      g.array(c, {
        shape: [n],
        chunks: [chunk],
        dtype: "float64",
        dims: ["ncells"],
        fill: 0,
        attrs: { units: "radian", standard_name: standard },
      });
    const lat = coord("clat", "latitude");
    const lon = coord("clon", "longitude");
    g.array("t_2m", {
      shape: [1, 2, n],
      chunks: [1, 1, chunk],
      dtype: "float32",
      dims: ["time", "lead_time", "ncells"],
      fill: "NaN",
      attrs: { units: "K", standard_name: "air_temperature", _FillValue: "NaN", ...cdi },
    });
    return { g, lat, lon };
  };
  for (const [name, n, chunk] of [
    ["icon2e9", 2e9, 1_000_000],
    ["onepoint", 20_000, 20_000],
  ] as const) {
    const { g } = icon(name, n, chunk);
    await timeAxes(g);
    g.close();
  }
  // 20,000 cells 1e-5° apart around 47°N 8°E (a 0.001° × 0.002° patch): a step of next to nothing.
  {
    const { g, lat, lon } = icon("nearpoint", 20_000, 20_000);
    await timeAxes(g);
    const rad = Math.PI / 180;
    await lat.writeAll(Float64Array.from({ length: 20_000 }, (_, i) => (47 + (i % 100) * 1e-5) * rad));
    await lon.writeAll(Float64Array.from({ length: 20_000 }, (_, i) => (8 + Math.floor(i / 100) * 1e-5) * rad));
    g.close();
  }
  w.rootGroup({});
  await w.close();
  return written;
}

before(async () => {
  dir = tempDir("gridcast-cells-large-");
  await writeStore(join(dir, "large.zarr"));
  srv = await testServer(join(dir, "large.zarr"), { default_forecast_group: "forecast/hp2048" });
  key = await srv.key(["weather"], 100_000);
});

after(async () => {
  await srv?.close();
  cleanup(dir);
});

const H = () => ({ "X-API-Key": key });
const RAD = Math.PI / 180;
function angle(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const a = [
    Math.cos(lat1 * RAD) * Math.cos(lon1 * RAD),
    Math.cos(lat1 * RAD) * Math.sin(lon1 * RAD),
    Math.sin(lat1 * RAD),
  ];
  const b = [
    Math.cos(lat2 * RAD) * Math.cos(lon2 * RAD),
    Math.cos(lat2 * RAD) * Math.sin(lon2 * RAD),
    Math.sin(lat2 * RAD),
  ];
  return Math.acos(Math.min(1, a[0] * b[0] + a[1] * b[1] + a[2] * b[2]));
}

/** The cell of a chunk of CHUNK nested pixels nearest to the point, by brute force over the chunk. */
function bruteNearestInChunk(nside: number, chunk: number, lat: number, lon: number): number {
  let best = -1;
  let bestAngle = Number.POSITIVE_INFINITY;
  for (let p = chunk * CHUNK; p < (chunk + 1) * CHUNK; p++) {
    const [clat, clon] = healpixCentre(nside, "nested", p);
    const a = angle(lat, lon, clat, clon);
    if (a < bestAngle) {
      bestAngle = a;
      best = p;
    }
  }
  return best;
}

describe("whole HEALPix grids at producers' sizes", () => {
  for (const nside of NSIDES) {
    test(`nside ${nside}: /point and the click value answer the nearest pixel, no per-cell table made`, async () => {
      const rss0 = process.memoryUsage().rss;
      for (const [lat, lon] of POINTS) {
        const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m&group=forecast/hp${nside}`, H());
        assert.equal(r.status, 200, r.body.toString());
        const p = r.json();
        // The nearest pixel by brute force over the 2^20 pixels of its chunk (a block of
        // 1024 × 1024 pixels around the point, the point well inside it).
        const near = healpixNearest(nside, "nested", lat, lon).cell;
        const brute = bruteNearestInChunk(nside, Math.floor(near / CHUNK), lat, lon);
        const [blat, blon] = healpixCentre(nside, "nested", brute);
        assert.ok(Math.abs(p.grid_lat - blat) < 1e-6 && Math.abs(p.grid_lon - blon) < 1e-6, JSON.stringify(p));
        assert.deepEqual(
          p.values.map((v: number) => Math.round(v * 1000) / 1000),
          [cellValue(brute), cellValue(brute) + 1].map((v) => Math.round(Math.fround(v) * 1000) / 1000),
        );
        const click = await get(`${srv.url}/api/forecast/value?layer=hp${nside}.t2m&lat=${lat}&lon=${lon}&lead=6`);
        assert.equal(click.status, 200, click.body.toString());
        const v = click.json();
        assert.ok(Math.abs(v.value - Math.fround(cellValue(brute) + 1)) < 1e-3, JSON.stringify(v));
      }
      // Centres of every pixel would be 16 bytes a cell (805 MB at nside 2048, 12.9 GB at 8192).
      const grew = process.memoryUsage().rss - rss0;
      assert.ok(grew < 300 * 1024 * 1024, `resident memory grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
    });

    test(`nside ${nside}: a box export answers from computed centres; the whole globe is 413 from its counts`, async () => {
      const [lat, lon] = POINTS[0];
      const box = `lat_min=${lat - 0.05}&lat_max=${lat + 0.05}&lon_min=${lon - 0.05}&lon_max=${lon + 0.05}`;
      const base = `${srv.url}/api/export/forecast~hp${nside}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=1`;
      const r = await get(`${base}&${box}`, H());
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      const hlen = r.body.readUInt16LE(8);
      const data = new Float32Array(new Uint8Array(r.body.subarray(10 + hlen)).buffer);
      const step = field.cells.step_deg;
      const [nl, ny, nx] = field.shape;
      assert.equal(data.length, nl * ny * nx);
      for (let iy = 0; iy < ny; iy++) {
        for (let ix = 0; ix < nx; ix++) {
          const cell = healpixNearest(nside, "nested", field.lat.first + iy * step, field.lon.first + ix * step).cell;
          assert.ok(Math.abs(data[iy * nx + ix] - Math.fround(cellValue(cell))) < 1e-3, `node ${iy},${ix}`);
          assert.ok(Math.abs(data[ny * nx + iy * nx + ix] - Math.fround(cellValue(cell) + 1)) < 1e-3);
        }
      }
      const globe = await get(`${base}&lat_min=-90&lat_max=90&lon_min=-180&lon_max=180`, H());
      assert.equal(globe.status, 413, globe.body.toString());
      assert.equal(globe.json().type, "/problems/too-large");
    });
  }
});

describe("listings of whole HEALPix grids", () => {
  test("the export catalogue counts every cell (the grid's coordinates hold only its first and last centres)", async () => {
    const r = await get(`${srv.url}/api/export`, H());
    assert.equal(r.status, 200, r.body.toString());
    for (const nside of NSIDES) {
      const g = r.json().groups.find((x: { group: string }) => x.group === `forecast/hp${nside}`);
      assert.ok(g, `forecast/hp${nside} listed`);
      assert.equal(g.coordinates.lat.count, 12 * nside * nside);
      assert.equal(g.coordinates.lon.count, 12 * nside * nside);
      const [lat0] = healpixCentre(nside, "nested", 0);
      assert.ok(
        Math.abs(
          Math.min(g.coordinates.lat.min, g.coordinates.lat.max) -
            Math.min(lat0, healpixCentre(nside, "nested", 12 * nside * nside - 1)[0]),
        ) < 1e-9,
      );
    }
  });
});

describe("declared cell counts and degenerate grids", () => {
  test("an ICON group declaring 2e9 cells is refused by name (clat) before anything is read", async () => {
    const rss0 = process.memoryUsage().rss;
    const r = await get(`${srv.url}/point?lat=10&lon=10&var=t2m&group=forecast/icon2e9`, H());
    assert.equal(r.status, 503, r.body.toString());
    const body = r.body.toString();
    assert.match(body, /clat declares 2000000000 cells/);
    assert.match(body, /cell_grid_mb/);
    assert.ok(!body.includes(dir), body);
    const grew = process.memoryUsage().rss - rss0;
    assert.ok(grew < 200 * 1024 * 1024, `resident memory grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
  });

  for (const [group, what] of [
    ["onepoint", "at one point (coordinates read as their fill value)"],
    ["nearpoint", "1e-5° apart"],
  ] as const) {
    test(`20,000 cells ${what}: a whole-globe export is 413 from its counts, /point still answers`, async () => {
      const rss0 = process.memoryUsage().rss;
      const base = `${srv.url}/api/export/forecast~${group}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=1`;
      const globe = await get(`${base}&lat_min=-90&lat_max=90&lon_min=-180&lon_max=180`, H());
      assert.equal(globe.status, 413, globe.body.toString());
      assert.equal(globe.json().type, "/problems/too-large");
      const grew = process.memoryUsage().rss - rss0;
      assert.ok(grew < 200 * 1024 * 1024, `resident memory grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
      const [lat, lon] = group === "onepoint" ? [0, 0] : [47, 8];
      const p = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m&group=forecast/${group}`, H());
      assert.equal(p.status, 200, p.body.toString());
    });
  }
});

describe("views of a grid past its budget", () => {
  test("/data: the nside 8192 view is 413 naming cell_grid_mb; the listing still answers", async () => {
    const list = await get(`${srv.url}/data/datasets`, H());
    assert.equal(list.status, 200, list.body.toString());
    const rss0 = process.memoryUsage().rss;
    const r = await get(`${srv.url}/data/datasets/forecast~hp8192/zarr/zarr.json`, H());
    assert.equal(r.status, 413, r.body.toString());
    assert.match(r.body.toString(), /cell_grid_mb/);
    const grew = process.memoryUsage().rss - rss0;
    assert.ok(grew < 200 * 1024 * 1024, `resident memory grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
  });
});

describe("tiles of a grid past its budget", () => {
  test("build: the nside 2048 grid's tiles are refused naming cell_grid_mb, nothing allocated per cell", async () => {
    const rss0 = process.memoryUsage().rss;
    await assert.rejects(
      build({ store: join(dir, "large.zarr"), out: join(dir, "out"), maxZoom: 1, groups: ["forecast/hp2048"] }),
      (e: Error) => {
        assert.match(e.message, /healpix grid on cell \(tiles\) declares 50331648 cells/);
        assert.match(e.message, /cell_grid_mb/);
        return true;
      },
    );
    const grew = process.memoryUsage().rss - rss0;
    assert.ok(grew < 300 * 1024 * 1024, `resident memory grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
  });
});
