// Tile worker thread: its own Store and caches; renders one job per message from the pool.
import { parentPort, workerData } from "node:worker_threads";
import { ArchiveSink } from "../published/archive-sink.ts";
import { Store } from "../store/store.ts";
import { CoverageCache } from "./coverage.ts";
import type { RenderContext } from "./job-walk.ts";
import { renderOrientationJob } from "./orientation-job.ts";
import { renderJob } from "./render-job.ts";
import type { FromWorker, ToWorker, WorkerInit } from "./worker-protocol.ts";
import { TileWriter } from "./write.ts";

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (m: FromWorker): void => port.postMessage(m);

const sink = init.tiles === "pmtiles" ? new ArchiveSink() : undefined;
const ctx: RenderContext = {
  store: new Store(init.store, {
    cacheMb: init.cacheMb,
    cellGridMb: init.cellGridMb,
    rootGroupName: init.rootGroupName,
  }),
  buildDir: init.buildDir,
  maxZoom: init.maxZoom,
  // A PMTiles archive holds one tile per z/x/y: no @2x there.
  hidpiMaxZoom: sink ? -1 : init.hidpiMaxZoom,
  coverage: new CoverageCache(),
  writer: sink ?? new TileWriter(),
  onTiles: (n) => {
    if (n > 0) post({ type: "tiles", n });
  },
};

port.on("message", ({ job }: ToWorker) => {
  (job.recipe.kind === "orientation" ? renderOrientationJob : renderJob)(ctx, job).then(
    (results) => {
      sink?.flush(); // the job's archive parts are complete before it is reported done
      post({ type: "done", results });
    },
    (e: unknown) => {
      const err = e instanceof Error ? e : new Error(String(e));
      // The cause says what the store layer saw (codec, file, network); an operator needs it.
      const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
      post({ type: "error", name: err.name, message: `${err.message}${cause}` });
    },
  );
});
