// Discovering a cell grid never holds the event loop for long (issue 53): its coordinates are read
// chunk by chunk into float64 (readValues) and turned into degrees, checked, searched and bounded
// in pieces paced by the loop's turns (loop-turns.ts). A regional ICON-layout store written with
// the project's ZarrWriter (clat/clon in radians, several chunks, across the antimeridian): the
// centres are the written ones, the bounds those a sort of every longitude gives, every
// coordinate's conversion went through turns of at most TURN_BYTES, and a request over loopback
// is answered while discovery runs. Counted in bytes granted, never in time.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, test } from "node:test";
import { resetTurnStats, TURN_BYTES, turnStats } from "../../src/loop-turns.ts";
import { ZarrWriter } from "../../src/sample/zarr-writer.ts";
import {
  ARC_BINS,
  arcOf,
  CENTRE_BYTES,
  cellGridOf,
  QUERY_BYTES,
  SPACING_SAMPLES,
  VALUE_BYTES,
} from "../../src/store/cell-grid.ts";
import type { CellAxes } from "../../src/store/cell-layouts.ts";
import { smallestArc } from "../../src/store/grid.ts";
import { healpixCentres } from "../../src/store/healpix.ts";
import { Store } from "../../src/store/store.ts";
import { writeOneRunAxes } from "../helpers/cell-run.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const N = 200_000;
const CHUNK = 65_536;
const dir = tempDir("gridcast-cell-turns-");
const store = join(dir, "icon.zarr");
after(() => cleanup(dir));

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Cells of a regional grid: latitudes 20..60, longitudes 150 east round to 150 west (radians). */
function regional(): { lat: Float64Array; lon: Float64Array } {
  const lat = new Float64Array(N);
  const lon = new Float64Array(N);
  const rnd = lcg(11);
  for (let k = 0; k < N; k++) {
    lat[k] = ((20 + 40 * rnd()) * Math.PI) / 180;
    const deg = 150 + 60 * rnd();
    lon[k] = ((deg > 180 ? deg - 360 : deg) * Math.PI) / 180;
  }
  return { lat, lon };
}

test("arcOf finds the arc a sort of every longitude finds", async () => {
  const rnd = lcg(7);
  const sets: Float64Array[] = [
    Float64Array.of(10),
    Float64Array.of(-170, 170),
    Float64Array.of(0, 90, 180, -90),
    Float64Array.from({ length: 5000 }, () => -180 + 360 * rnd()),
    Float64Array.from({ length: 5000 }, () => 160 + 40 * rnd()),
    Float64Array.from({ length: 5000 }, () => 10 + 0.001 * rnd()),
    Float64Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? -20 + rnd() : 100 + rnd())),
  ];
  for (const lons of sets) {
    const want = smallestArc(lons);
    const got = await arcOf(lons);
    // Exact whenever the largest gap is wider than a bin; within a bin of the circle otherwise.
    const tolerance = 360 - want.span > 360 / ARC_BINS ? 1e-9 : 360 / ARC_BINS;
    assert.ok(Math.abs(got.span - want.span) <= tolerance, `span ${got.span} vs ${want.span}`);
    if (tolerance < 1e-6) assert.equal(got.west, want.west);
  }
});

test("a regional grid of 200,000 cells is discovered in bounded turns, with the centres and bounds it stores", async () => {
  const { lat, lon } = regional();
  const w = new ZarrWriter(store, 1);
  w.plainGroup("forecast", 3);
  const g = w.group("forecast/icon", 3, {});
  await writeOneRunAxes(g);
  for (const [name, values, standard] of [
    ["clat", lat, "latitude"],
    ["clon", lon, "longitude"],
  ] as const) {
    await g
      .array(name, {
        shape: [N],
        chunks: [CHUNK],
        dtype: "float64",
        dims: ["ncells"],
        fill: 0,
        attrs: { units: "radian", standard_name: standard },
      })
      .writeAll(values.slice());
  }
  g.array("t_2m", {
    shape: [1, 1, N],
    chunks: [1, 1, CHUNK],
    dtype: "float32",
    dims: ["time", "lead_time", "ncells"],
    fill: "NaN",
    attrs: { units: "K", standard_name: "air_temperature", CDI_grid_type: "unstructured" },
  });
  g.close();
  w.rootGroup({});
  await w.close();

  const server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  try {
    resetTurnStats();
    let discovered = false;
    const group = Promise.resolve(new Store(store, { checkMs: 0 }).forecastGroup("forecast/icon")).finally(
      () => (discovered = true),
    );
    // Requests back to back while the group is discovered: answered between its slices.
    let answers = 0;
    while (!discovered) {
      await (await fetch(`http://127.0.0.1:${port}/`)).text();
      if (!discovered) answers++;
    }
    const grid = (await group).grid;
    const stats = turnStats();
    assert.ok(answers >= 3, `${answers} loopback answers while the grid was discovered`);
    // Every pass over the cells went through turns: both coordinates read (8 bytes a value) and
    // turned into degrees, the latitudes checked and bounded, the longitudes' arc, the spacing
    // sampled at every step-th cell and the first coverage probe (the north pole: outside).
    const step = Math.max(1, Math.floor(N / SPACING_SAMPLES));
    const passes = 2 * N * 8 + 2 * N * VALUE_BYTES + 3 * N * VALUE_BYTES;
    const searches = (Math.ceil(N / step) + 1) * QUERY_BYTES;
    assert.ok(stats.paced >= passes + searches, `${stats.paced} bytes went through turns, ${passes + searches} due`);
    assert.ok(stats.largest <= TURN_BYTES, `a turn was granted ${stats.largest} bytes`);

    const cells = grid.cells!;
    assert.equal(cells.n, N);
    for (const k of [0, 1, CHUNK - 1, CHUNK, N - 1]) {
      const [a, b] = cells.centre(k);
      assert.ok(Math.abs(a - (lat[k] * 180) / Math.PI) < 1e-9, `lat ${k}`);
      assert.ok(Math.abs(b - (lon[k] * 180) / Math.PI) < 1e-9, `lon ${k}`);
    }
    assert.equal(grid.global, false);
    // The bounds as a sort of every longitude puts them, widened by the spacing.
    const arc = smallestArc(cells.lon);
    const [west, south, east, north] = grid.bbox;
    const pad = grid.dlat;
    assert.ok(Math.abs(west - (arc.west - pad)) < 1e-6, `west ${west} vs ${arc.west - pad}`);
    assert.ok(Math.abs(east - (arc.west + arc.span + pad)) < 1e-6, `east ${east}`);
    assert.ok(south >= 20 - pad - 1e-9 && south < 20, `south ${south}`);
    assert.ok(north <= 60 + pad + 1e-9 && north > 60, `north ${north}`);
  } finally {
    server.close();
  }
});

test("a whole HEALPix grid's centres (for the /data view) are computed in bounded turns, once", async () => {
  const nside = 128;
  const axes = {
    layout: "healpix",
    dim: "cell",
    healpix: { nside, order: "nested", variable: "crs", attrs: {} },
    auxiliary: ["crs"],
  } as unknown as CellAxes;
  const { cells } = await cellGridOf(axes);
  resetTurnStats();
  await Promise.all([cells.centresReady(), cells.centresReady()]);
  const n = 12 * nside * nside;
  const stats = turnStats();
  assert.equal(stats.paced, n * CENTRE_BYTES, "every centre computed once, through turns");
  assert.ok(stats.largest <= TURN_BYTES);
  const want = healpixCentres(nside, "nested");
  assert.deepEqual(cells.lat, want.lat);
  assert.deepEqual(cells.lon, want.lon);
});
