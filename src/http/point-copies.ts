// The published build's point copies as /point and the map click read them: one reader per
// build (its copies' headers read once), none with point_copy 0.
import type { PointCopies } from "../forecast/point-copy.ts";
import { PointCopyReader } from "../published/point-copy.ts";
import type { Snapshot } from "../published/snapshot.ts";
import type { AppContext } from "./context.ts";

/** The point copies of the published build, one reader per server (its headers read once per build). */
const copyReaders = new WeakMap<AppContext, PointCopyReader>();

/**
 * The reader of the build being served. A request keeps the reader it got for as long as it runs;
 * once another build is served the old reader closes its files, and a request still holding it
 * (one waiting for a header or a version) opens, reads and closes instead.
 */
function readerOf(app: AppContext, snap: Snapshot): PointCopyReader {
  let r = copyReaders.get(app);
  if (r?.dir !== snap.dir) {
    r?.close();
    const backend = app.store.backend;
    r = new PointCopyReader(snap.dir, backend.stampNow && ((key) => backend.stampNow!(key)));
    copyReaders.set(app, r);
  }
  return r;
}

/**
 * The reader of the published build's point copies; undefined with point_copy 0. Before the
 * server has opened a build (its first requests), the copies wait for it.
 */
export function pointCopies(app: AppContext): PointCopies | undefined {
  if (app.settings.point_copy === 0) return undefined;
  const snap = app.published.now();
  if (snap) return readerOf(app, snap);
  return { column: async (q) => ((s) => (s ? readerOf(app, s).column(q) : undefined))(await app.published.current()) };
}

/** The reader of the published build's copies once a build is open; undefined with none or point_copy 0. */
export async function publishedCopyReader(app: AppContext): Promise<PointCopyReader | undefined> {
  if (app.settings.point_copy === 0) return undefined;
  const snap = await app.published.current();
  return snap ? readerOf(app, snap) : undefined;
}

/**
 * A reader of the published build's copies of its own (its counts and open files apart from the
 * served one's): for a warm-up that reads through the very code /point runs.
 */
export async function scratchCopyReader(app: AppContext): Promise<PointCopyReader | undefined> {
  if (app.settings.point_copy === 0) return undefined;
  const snap = await app.published.current();
  const backend = app.store.backend;
  return snap ? new PointCopyReader(snap.dir, backend.stampNow && ((key) => backend.stampNow!(key))) : undefined;
}
