// The published build's point copies as /point and the map click read them: one reader per
// build (its copies' headers read once), none with point_copy 0.
import type { PointCopies } from "../forecast/point-copy.ts";
import { PointCopyReader } from "../published/point-copy.ts";
import type { Snapshot } from "../published/snapshot.ts";
import type { AppContext } from "./context.ts";

/** The point copies of each published build, one reader per build (its headers read once). */
const copyReaders = new WeakMap<Snapshot, PointCopyReader>();

function readerOf(snap: Snapshot): PointCopyReader {
  let r = copyReaders.get(snap);
  if (!r) {
    r = new PointCopyReader(snap.dir);
    copyReaders.set(snap, r);
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
  if (snap) return readerOf(snap);
  return { column: async (q) => ((s) => (s ? readerOf(s).column(q) : undefined))(await app.published.current()) };
}
