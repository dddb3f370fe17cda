// A forecast cycle appended to a sample store on disk the way a careful producer does it (xarray's
// append_dim, dynamical.org's updates): the new run's chunks first, then the time coordinate,
// then each array's metadata, the consolidated documents last. The new run is a byte copy of an
// earlier one, so a reader can tell which cycle every value it got came from.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ZarrWriter } from "../../src/sample/zarr-writer.ts";

export const GLOBAL = "forecast/global";
/** The data arrays of the sample store's global group (all with a leading run axis). */
export const GLOBAL_VARS = ["msl", "t", "t2m", "tcc", "tp_1h", "u10", "v10"];

type Doc = { shape: number[]; chunk_grid: { configuration: { chunk_shape: number[] } } };

/** Chunk files of run `run` of a [time, ...] array: relative keys below its c/<run>/. */
export function runChunks(storeDir: string, array: string, run: number, group = GLOBAL): string[] {
  const root = join(storeDir, group, array, "c", String(run));
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => statSync(join(root, f)).isFile());
}

/** Overwrite (or create) run `to`'s chunks with run `from`'s bytes, file by file. */
export function copyRun(storeDir: string, from: number, to: number, vars = GLOBAL_VARS, group = GLOBAL): void {
  for (const v of vars) {
    for (const rel of runChunks(storeDir, v, from, group)) {
      const dst = join(storeDir, group, v, "c", String(to), rel);
      mkdirSync(dirname(dst), { recursive: true });
      writeFileSync(dst, readFileSync(join(storeDir, group, v, "c", String(from), rel)));
    }
  }
}

/**
 * Append one run to the global group, a copy of run `copyOf`, one run step after the last of
 * `runs` (the ISO times the store holds now). Returns the new run's ISO time (no zone).
 */
export async function appendRun(storeDir: string, runs: string[], copyOf: number): Promise<string> {
  const G = GLOBAL;
  const group = JSON.parse(readFileSync(join(storeDir, G, "zarr.json"), "utf8"));
  const meta = group.consolidated_metadata.metadata as Record<string, Doc>;
  const n = meta.time.shape[0];
  copyRun(storeDir, copyOf, n);
  const hours = runs.map((iso) => BigInt(Date.parse(`${iso}Z`) / 3_600_000));
  const next = hours[hours.length - 1] + (hours[hours.length - 1] - hours[hours.length - 2]);
  hours.push(next);
  const w = new ZarrWriter(storeDir);
  await w.writeCompressed(`${G}/time/c/0`, BigInt64Array.from(hours));
  await w.close();
  const grow = (d: Doc, isTime: boolean) => {
    d.shape[0] = n + 1;
    if (isTime) d.chunk_grid.configuration.chunk_shape = [n + 1];
  };
  for (const name of [...GLOBAL_VARS, "time"]) {
    const file = join(storeDir, G, name, "zarr.json");
    const doc = JSON.parse(readFileSync(file, "utf8")) as Doc;
    grow(doc, name === "time");
    writeFileSync(file, JSON.stringify(doc));
    grow(meta[name], name === "time");
  }
  const rootFile = join(storeDir, "zarr.json");
  const root = JSON.parse(readFileSync(rootFile, "utf8"));
  for (const name of [...GLOBAL_VARS, "time"])
    grow(root.consolidated_metadata.metadata[`${G}/${name}`], name === "time");
  writeFileSync(rootFile, JSON.stringify(root));
  writeFileSync(join(storeDir, G, "zarr.json"), JSON.stringify(group));
  return new Date(Number(next) * 3_600_000).toISOString().slice(0, 19);
}
