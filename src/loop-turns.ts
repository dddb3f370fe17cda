// Bulk work on the main thread in bounded turns. An export fills, copies and flips its slabs on
// the main thread (megabytes each); 24 of them at once, unpaced, kept the event loop busy for most
// of a second, and /healthz waited behind them. Bulk work goes through pace() instead: the bytes
// processed since the loop last turned are counted process-wide, and a piece that would take the
// count past TURN_BYTES waits for the next turn (setImmediate: after the loop's I/O), in the order
// the pieces asked. Between two turns the main thread so spends at most TURN_BYTES of bulk work
// (or one piece, when a piece alone is larger: callers cut their work with inSlices), whatever
// the number of exports.

/** Bulk bytes the main thread may process between two turns of the event loop. */
export const TURN_BYTES = 1024 * 1024;

let spent = 0;
let armed = false;
/** Pieces waiting for a turn, oldest first: their sizes and what lets them go. */
const waiting: { bytes: number; go: () => void }[] = [];

// Tests and benches: the most bytes granted within one turn, every byte granted so far (work is
// done in the turn it is granted in), the pieces that had to wait.
let largest = 0;
let paced = 0;
let waits = 0;

function arm(): void {
  if (armed) return;
  armed = true;
  setImmediate(newTurn);
}

/** A new turn: the count starts again, and waiting pieces go in order while they fit (one at least). */
function newTurn(): void {
  armed = false;
  if (spent > largest) largest = spent;
  spent = 0;
  while (waiting.length > 0 && (spent === 0 || spent + waiting[0].bytes <= TURN_BYTES)) {
    const w = waiting.shift()!;
    spent += w.bytes;
    paced += w.bytes;
    w.go();
  }
  if (spent > 0) arm();
}

/**
 * Accounts `bytes` of bulk work about to be done on this thread: undefined when it fits in the
 * current turn (do it now), or a promise that resolves in a later turn, the bytes then accounted
 * to that turn. Pieces never overtake one another.
 */
export function pace(bytes: number): Promise<void> | undefined {
  if (fitsNow(bytes)) return undefined;
  waits++;
  arm();
  return new Promise((go) => waiting.push({ bytes, go }));
}

/**
 * Accounts `bytes` of bulk work to the current turn and answers true when they fit in it (nothing
 * waiting before them); false, accounting nothing, when they would have to wait (then pace()).
 */
export function fitsNow(bytes: number): boolean {
  if (waiting.length > 0 || (spent > 0 && spent + bytes > TURN_BYTES)) return false;
  paced += bytes;
  spent += bytes;
  arm();
  return true;
}

/**
 * work(from, to) over items [0, count) in slices of at most TURN_BYTES (one item at least), each
 * slice paced: a loop over a whole slab never holds the main thread for more than a turn's bytes.
 */
export async function inSlices(
  count: number,
  bytesPerItem: number,
  work: (from: number, to: number) => void,
): Promise<void> {
  const per = Math.max(1, Math.floor(TURN_BYTES / Math.max(1, bytesPerItem)));
  for (let from = 0; from < count; from += per) {
    const to = Math.min(count, from + per);
    const wait = pace((to - from) * bytesPerItem);
    if (wait) await wait;
    work(from, to);
  }
}

/** What pace() has seen since the last reset (tests, benches). */
export function turnStats(): { largest: number; paced: number; waits: number } {
  return { largest: Math.max(largest, spent), paced, waits };
}

export function resetTurnStats(): void {
  largest = 0;
  paced = 0;
  waits = 0;
}
