// A new cycle of an unstructured group (one more run in its metadata) rebuilds the group but not
// its cells: the geometry made for the same centres (index included) is taken again, so a new
// cycle costs a read and a comparison of the coordinates, not an index. Coordinates that changed
// make a new geometry, and /point-level answers follow them. A store written with the project's
// ZarrWriter (ICON layout, clat/clon in radians), runs appended as a producer appends them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, test } from "node:test";
import { ZarrWriter } from "../../src/sample/zarr-writer.ts";
import { Store } from "../../src/store/store.ts";
import { appendCellRun, writeOneRunAxes } from "../helpers/cell-run.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const N = 20_000;
const dir = tempDir("gridcast-cell-cycles-");
const store = join(dir, "icon.zarr");
after(() => cleanup(dir));

/** Cells spread over the sphere (a Fibonacci lattice) turned by `turn` radians of longitude. */
function lattice(turn: number): { lat: Float64Array; lon: Float64Array } {
  const lat = new Float64Array(N);
  const lon = new Float64Array(N);
  for (let k = 0; k < N; k++) {
    lat[k] = Math.asin(1 - (2 * k + 1) / N);
    lon[k] = ((k * Math.PI * (3 - Math.sqrt(5)) + turn) % (2 * Math.PI)) - Math.PI;
  }
  return { lat, lon };
}

async function write(): Promise<void> {
  const w = new ZarrWriter(store, 1);
  w.plainGroup("forecast", 3);
  const g = w.group("forecast/icon", 3, {});
  await writeOneRunAxes(g);
  const { lat, lon } = lattice(0);
  for (const [name, values, standard] of [
    ["clat", lat, "latitude"],
    ["clon", lon, "longitude"],
  ] as const) {
    await g
      .array(name, {
        shape: [N],
        chunks: [N],
        dtype: "float64",
        dims: ["ncells"],
        fill: 0,
        attrs: { units: "radian", standard_name: standard },
      })
      .writeAll(values);
  }
  g.array("t_2m", {
    shape: [1, 1, N],
    chunks: [1, 1, N],
    dtype: "float32",
    dims: ["time", "lead_time", "ncells"],
    fill: "NaN",
    attrs: { units: "K", standard_name: "air_temperature", CDI_grid_type: "unstructured" },
  });
  g.close();
  w.rootGroup({});
  await w.close();
}

test("a new cycle takes the cells' geometry made for the same centres; changed centres make a new one", async () => {
  await write();
  const s = new Store(store, { checkMs: 0 });
  const first = await s.forecastGroup("forecast/icon");
  assert.equal(first.runs.length, 1);
  await appendCellRun(store, "forecast/icon", ["t_2m"]);
  s.refresh();
  const second = await s.forecastGroup("forecast/icon");
  assert.equal(second.runs.length, 2, "the new cycle is seen");
  assert.notEqual(second, first);
  assert.equal(second.grid.cells, first.grid.cells, "the same centres: the same geometry and index");

  // The producer moves its cells (clat/clon rewritten) with the next cycle.
  const moved = lattice(0.3);
  const w = new ZarrWriter(store, 1);
  // (A copy: the writer hands its buffer to its thread.)
  await w.writeCompressed("forecast/icon/clon/c/0", moved.lon.slice());
  await w.close();
  await appendCellRun(store, "forecast/icon", ["t_2m"]);
  s.refresh();
  const third = await s.forecastGroup("forecast/icon");
  assert.equal(third.runs.length, 3);
  assert.notEqual(third.grid.cells, second.grid.cells, "new centres: a new geometry");
  const want = (moved.lon[7] * 180) / Math.PI;
  assert.ok(Math.abs(third.grid.cells!.centre(7)[1] - want) < 1e-9, `${third.grid.cells!.centre(7)[1]} vs ${want}`);
  const near = third.grid.cells!.nearest((moved.lat[7] * 180) / Math.PI, want);
  assert.equal(near.cell, 7);
});
