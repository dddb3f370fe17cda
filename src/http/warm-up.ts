// What a server does once, right after it listens, so that its first /point is as fast as the
// next ones: the store's groups discovered (metadata, coordinates, the grid indexes the nearest
// node is found with), the published build opened, and each served variable's point copy of the
// latest run looked up (its header read, the version of the chunk it must match taken). /readyz
// answers only once this is done, so a load balancer sends no request before it.
//
// Nothing here reads values from the store: a variable without a copy is left for its first
// request, so the warm-up never costs what a store read of a whole-field chunk costs.
import { nearestNode } from "../forecast/grid-select.ts";
import { pointJson, pointSeries } from "../forecast/point.ts";
import { latestRun } from "../forecast/select.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";
import type { AppContext } from "./context.ts";
import { publishedCopyReader, scratchCopyReader } from "./point-copies.ts";

export interface WarmUp {
  /** Settles (never rejects) once the groups are discovered and the copies looked up. */
  done: Promise<void>;
  /** Variables whose copy of the latest run was found and matched (the tests count them). */
  copies: number;
}

const warmUps = new WeakMap<AppContext, WarmUp>();

/**
 * Starts a warm-up of a server (see the file's header): at start, and again when it adopts a new
 * build, so the first request after a publish does not pay for the new copies' headers either.
 */
export function startWarmUp(app: AppContext): WarmUp {
  const state: WarmUp = { done: Promise.resolve(), copies: 0 };
  state.done = run(app, state).catch((e: unknown) => {
    // The request that needs what failed reports it (with the group and key); here a line only.
    app.log({ level: "warn", event: "warm-up", message: `warm-up stopped: ${e instanceof Error ? e.message : e}` });
  });
  warmUps.set(app, state);
  return state;
}

/** The latest warm-up of a server, if one was started (else a settled one). */
export function warmUpOf(app: AppContext): Promise<void> {
  return warmUps.get(app)?.done ?? Promise.resolve();
}

async function run(app: AppContext, state: WarmUp): Promise<void> {
  const groups = await app.store.forecastGroups();
  for (const g of groups) await indexGrids(g);
  const copies = await publishedCopyReader(app);
  if (!copies) return;
  for (const group of groups) {
    if (group.runs.length === 0) continue;
    const run = latestRun(group);
    for (const v of group.variables.values()) {
      if (v.turn || v.plus) continue;
      // Any node does: the header is the copy's, and every node of a whole-field chunk shares it.
      const held = await copies.holds({
        group,
        v,
        run,
        level: v.roles.includes("level") ? 0 : undefined,
        member: v.roles.includes("member") ? 0 : undefined,
        iy: 0,
        ix: 0,
      });
      if (held) state.copies++;
      if (held && state.copies === 1) await compileReads(app, group, v);
    }
  }
}

/**
 * A few series read through the code /point runs (a reader of its own, so no count of the served
 * one moves): the functions of that path are compiled now, not during the first request.
 */
async function compileReads(app: AppContext, group: ForecastGroup, v: GroupVariable): Promise<void> {
  const scratch = await scratchCopyReader(app);
  if (!scratch) return;
  try {
    const [w, s, e, n] = v.grid.bbox;
    for (let i = 0; i < 4; i++) {
      const at = {
        lat: s + ((n - s) * (i + 0.5)) / 4,
        lon: w + ((e - w) * (i + 0.5)) / 4,
        var: v.name,
        group: group.id,
      };
      try {
        pointJson(await pointSeries(app.store, app.registry, at, scratch));
      } catch {
        // A level or member the read must be told, a point beyond the cells: nothing to compile there.
      }
    }
  } finally {
    scratch.close();
  }
}

/**
 * Each grid's nearest-node index built (a curvilinear or cell grid builds it on first use), one
 * grid a turn of the event loop: no more than the first request would hold it for.
 */
async function indexGrids(group: ForecastGroup): Promise<void> {
  const seen = new Set<object>();
  for (const v of group.variables.values()) {
    if (seen.has(v.grid)) continue;
    seen.add(v.grid);
    const [w, s, e, n] = v.grid.bbox;
    nearestNode(v.grid, (s + n) / 2, (w + e) / 2);
    await new Promise((ok) => setImmediate(ok));
  }
}
