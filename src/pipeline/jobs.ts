// The work of a build: one Job per layer × run holding that run's leads (one worker renders them
// all while the chunk cache still holds the run), sorted by id, and the plan hash shards compare.
import { runPart, tileDir } from "../published/layout.ts";
import type { MapStyle } from "../registry/registry.ts";
import { sha } from "./fingerprint.ts";
import type { LayerSpec, Recipe } from "./layer-spec.ts";

export interface LeadJob {
  /** <layer>/<run token>.<drawing>/<lead hours>: the manifest key and the tile directory below tiles/. */
  key: string;
  index: number;
  hours: number;
  fingerprint: string;
  /** Tile directory relative to the build root. */
  dir: string;
  /** Set when the previous build has this fingerprint: hard-link its tiles instead of rendering. */
  reuse?: { dir: string; uniform: number; bytes: number; hidpi?: number };
}

export interface Job {
  /** <layer>/<run token>; jobs sort by it, which makes sharding deterministic. */
  id: string;
  layer: string;
  group: string;
  variable: string;
  levelIndex: number | null;
  run: number;
  runIso: string;
  style: MapStyle;
  recipe: Recipe;
  tilesPerLead: number;
  leads: LeadJob[];
  /** Set when the job renders only a slice of each lead's pyramid (see splitForThreads). */
  part?: { index: number; count: number };
}

export function jobsOf(layers: LayerSpec[]): Job[] {
  const jobs: Job[] = [];
  for (const l of layers) {
    for (const r of l.runs) {
      jobs.push({
        id: `${l.id}/${r.token}`,
        layer: l.id,
        group: l.group,
        variable: l.variable,
        levelIndex: l.levelIndex,
        run: r.index,
        runIso: r.iso,
        style: l.style,
        recipe: l.recipe,
        tilesPerLead: l.tilesPerLead,
        leads: r.leads.map((ld) => ({
          // The drawing is part of the key: tiles of another renderer are other tiles.
          key: `${l.id}/${runPart(r.token, l.drawing)}/${ld.hours}`,
          index: ld.index,
          hours: ld.hours,
          fingerprint: ld.fingerprint,
          dir: tileDir(l.id, r.token, ld.hours, l.drawing),
        })),
      });
    }
  }
  return jobs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function planHash(jobs: Job[]): string {
  return sha(jobs.map((j) => j.leads.map((l) => [l.key, l.fingerprint])));
}
