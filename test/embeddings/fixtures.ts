// Shared pieces of the embedding tests (and bench/embeddings.ts): a server over a fresh tiny
// sample store with its embedding indexes published, the items the sample generator says it wrote,
// an extra large item, and independent readers (zarrita directly, numpy).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { FileSystemStore } from "@zarrita/storage";
import Value from "typebox/value";
import * as zarr from "zarrita";
import type { Settings } from "../../src/config.ts";
import { writeEmbeddingIndexes } from "../../src/embeddings/index-writer.ts";
import { tileGeometry, tileNameAt } from "../../src/embeddings/mgrs.ts";
import { FAMILIES, itemExists, itemPath, PERIODS, PRODUCTS } from "../../src/sample/embeddings.ts";
import { PRESETS } from "../../src/sample/presets.ts";
import { ZarrWriter } from "../../src/sample/zarr-writer.ts";
import { Store } from "../../src/store/store.ts";
import { PYTHON, type TestServer, testServer } from "../helpers/harness.ts";

export const SEED = 7;

/** Item names the generator wrote for preset tiny, seed 7, by its own rules (not by reading the store). */
export function expectedItems(): string[] {
  const tiles = [...new Set(PRESETS.tiny.tilePoints.map(([lon, lat]) => tileNameAt(lon, lat)))];
  const out: string[] = [];
  for (const f of FAMILIES)
    for (const p of PRODUCTS)
      for (const per of PERIODS)
        for (const t of tiles)
          if (itemExists(SEED, f, p, per, t)) out.push(itemPath(f, p, per, t).replaceAll("/", "~"));
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Write the embedding indexes into <out>/current, which the server takes as the published build. */
export function publish(srv: TestServer, storeDir: string) {
  return writeEmbeddingIndexes(new Store(storeDir), join(srv.running.ctx.settings.out, "current"));
}

export async function publishedServer(storeDir: string, overrides: Partial<Settings> = {}): Promise<TestServer> {
  const srv = await testServer(storeDir, overrides);
  await publish(srv, storeDir);
  return srv;
}

/**
 * An extra map item written next to the sample's, shape (y, x, feature) with 2 × 2 spatial chunks.
 * Values vary along every axis so a misplaced slice cannot pass a comparison.
 */
export async function writeBigItem(
  storeDir: string,
  shape: [number, number, number],
  at: [number, number] = [9.18, 48.78],
) {
  const tile = tileNameAt(at[0], at[1]);
  const g = tileGeometry(tile);
  const path = itemPath("geofm", "map", PERIODS[0], tile);
  const [ny, nx, nf] = shape;
  const res = g.size_m / nx;
  const w = new ZarrWriter(storeDir, 1);
  const group = w.group(`embeddings/${path}`, 3, {
    crs: g.crs,
    transform: [res, 0, g.origin.easting, 0, -res, g.origin.northing + g.size_m],
    bbox: g.bbox,
    mgrs_tile: tile,
    family: "geofm",
    product: "map",
    period: PERIODS[0],
    model_version: "v1.2",
    feature_count: nf,
  });
  const values = new Float32Array(ny * nx * nf);
  for (let i = 0; i < ny; i++)
    for (let j = 0; j < nx; j++)
      for (let f = 0; f < nf; f++) values[(i * nx + j) * nf + f] = i + j / 1024 + f / (1024 * 1024);
  await group
    .array("latent", {
      shape,
      chunks: [Math.ceil(ny / 2), Math.ceil(nx / 2), nf],
      dtype: "float32",
      dims: ["y", "x", "feature"],
      fill: "NaN",
    })
    .writeAll(values);
  group.close();
  await w.flush();
  await w.close(); // stops the writer's worker thread
  return { tile, path, name: path.replaceAll("/", "~") };
}

/** A slice read with zarrita straight from the store directory, C order. */
export async function zarritaSlice(storeDir: string, path: string, ranges: [number, number][]): Promise<Float32Array> {
  const node = await zarr.open(zarr.root(new FileSystemStore(storeDir)).resolve(`embeddings/${path}/latent`), {
    kind: "array",
  });
  const got = await zarr.get(
    node,
    ranges.map(([a, b]) => zarr.slice(a, b)),
  );
  return got.data as Float32Array;
}

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** What numpy makes of a .npy body: shape, dtype, memory order and a hash of its data bytes. */
export function numpyLoad(body: Uint8Array): { shape: number[]; dtype: string; c_contiguous: boolean; sha256: string } {
  const code = [
    "import io, sys, json, hashlib, numpy as np",
    "a = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)",
    "print(json.dumps({'shape': list(a.shape), 'dtype': str(a.dtype), 'c_contiguous': bool(a.flags.c_contiguous),",
    "  'sha256': hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}))",
  ].join("\n");
  return JSON.parse(execFileSync(PYTHON, ["-c", code], { input: body, maxBuffer: 1 << 20 }).toString("utf8"));
}

export const bytesOf = (a: Float32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Zero the server's store read counters and drop its decoded chunks, so every read shows up. */
export function resetReads(srv: TestServer): void {
  srv.running.ctx.store.backend.reset();
  srv.running.ctx.store.cache.invalidate();
}

/** Keys of latent chunks read since the last resetReads. */
export const latentChunksRead = (srv: TestServer): string[] =>
  srv.running.ctx.store.backend.keysRead().filter((k) => /\/latent\/c\//.test(k));

/** Whether a body matches its documented schema (a plain boolean: the body keeps its loose type). */
export const conforms = (schema: object, body: unknown): boolean => Value.Check(schema as never, body);
