// One more run appended to a v3 group written by ZarrWriter (tests and bench/cells-discovery.ts):
// the time coordinate and the named variables one longer along their first axis, in the arrays'
// own documents, the group's consolidated metadata and the root's, as a producer appending a run
// rewrites them. The new time value is written; the variables' new chunks are left to read as
// their fill value.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type GroupNode, ZarrWriter } from "../../src/sample/zarr-writer.ts";

interface Doc {
  shape: number[];
  chunk_grid?: { configuration: { chunk_shape: number[] } };
}

export async function appendCellRun(store: string, group: string, variables: string[]): Promise<void> {
  const timeFile = join(store, group, "time", "zarr.json");
  const n = (JSON.parse(readFileSync(timeFile, "utf8")) as Doc).shape[0];
  const grow = (doc: Doc, isTime: boolean) => {
    doc.shape[0] = n + 1;
    if (isTime && doc.chunk_grid) doc.chunk_grid.configuration.chunk_shape = [n + 1];
  };
  const w = new ZarrWriter(store, 1);
  await w.writeCompressed(
    `${group}/time/c/0`,
    BigInt64Array.from({ length: n + 1 }, (_, k) => 481_000n + 6n * BigInt(k)),
  );
  await w.close();
  const names = ["time", ...variables];
  for (const name of names) {
    const f = join(store, group, name, "zarr.json");
    const doc = JSON.parse(readFileSync(f, "utf8")) as Doc;
    grow(doc, name === "time");
    writeFileSync(f, JSON.stringify(doc));
  }
  const gfile = join(store, group, "zarr.json");
  const g = JSON.parse(readFileSync(gfile, "utf8"));
  for (const name of names) grow(g.consolidated_metadata.metadata[name], name === "time");
  writeFileSync(gfile, JSON.stringify(g));
  const rfile = join(store, "zarr.json");
  const r = JSON.parse(readFileSync(rfile, "utf8"));
  for (const name of names) grow(r.consolidated_metadata.metadata[`${group}/${name}`], name === "time");
  writeFileSync(rfile, JSON.stringify(r));
}

/** The one run (481,000 hours since 1970, the run appendCellRun counts on from) and lead 0 of a v3 group. */
export async function writeOneRunAxes(g: GroupNode): Promise<void> {
  await g
    .array("time", {
      shape: [1],
      chunks: [1],
      dtype: "int64",
      dims: ["time"],
      fill: 0,
      attrs: { units: "hours since 1970-01-01 00:00:00", standard_name: "forecast_reference_time" },
    })
    .writeAll(BigInt64Array.of(481_000n));
  await g
    .array("lead_time", {
      shape: [1],
      chunks: [1],
      dtype: "int32",
      dims: ["lead_time"],
      fill: 0,
      attrs: { units: "hours", standard_name: "forecast_period" },
    })
    .writeAll(Int32Array.of(0));
}
