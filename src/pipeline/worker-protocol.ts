// The messages between the pool (pool.ts) and its tile threads (worker.ts): what a thread is
// started with, the job it is handed, and what it reports back.
import type { TileFormat } from "../published/format.ts";
import type { LeadResult } from "../published/manifest.ts";
import type { Job } from "./jobs.ts";

export interface WorkerInit {
  store: string;
  cacheMb: number;
  /** Budget of one cell grid's tables, MiB (setting cell_grid_mb). */
  cellGridMb?: number;
  /** Name of the dataset at the store root (setting root_group_name), when set. */
  rootGroupName?: string;
  buildDir: string;
  maxZoom: number;
  tiles: TileFormat;
  /** @2x tiles of base layers up to this zoom; -1 for none. */
  hidpiMaxZoom: number;
}

export type ToWorker = { job: Job };
export type FromWorker =
  | { type: "tiles"; n: number }
  | { type: "done"; results: LeadResult[] }
  | { type: "error"; name: string; message: string };
