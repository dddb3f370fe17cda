// Whether a finished build would publish exactly what is published already: the same layers,
// the same layer-run-leads drawn from the same data and style (their fingerprints), the same
// renderer and zooms, and byte-identical embedding indexes. Such a build publishes nothing and
// removes no kept build (docs/operating.md: "nothing new"); re-running a build after a cycle
// that has not arrived yet is then harmless.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ITEMS_FILE } from "../embeddings/index-files.ts";
import { MANIFEST } from "../published/layout.ts";
import { type Manifest, type ManifestEntry, readManifest } from "../published/manifest.ts";
import type { Job } from "./jobs.ts";
import type { LayerSpec } from "./layer-spec.ts";
import { currentBuild } from "./publish.ts";

/** What a build publishes, without what names or times the build itself. */
function content(
  m: Pick<
    Manifest<LayerSpec>,
    "max_zoom" | "hidpi_max_zoom" | "renderer" | "plan" | "layers" | "entries" | "point_copies"
  >,
): string {
  return JSON.stringify({
    max_zoom: m.max_zoom,
    hidpi_max_zoom: m.hidpi_max_zoom ?? -1,
    renderer: m.renderer,
    plan: m.plan,
    layers: m.layers,
    entries: m.entries.map((e) => [e.key, e.fingerprint, e.tiles, e.hidpi ?? 0]),
    point: (m.point_copies ?? []).map((c) => [c.key, c.revision, c.bytes]),
  });
}

/** SHA-256 over every file below a build's embedding index folder (path and bytes). */
function indexDigest(build: string): string {
  const root = join(build, ITEMS_FILE.split("/")[0]);
  const h = createHash("sha256");
  if (!existsSync(root)) return "none";
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
    .sort();
  for (const f of files) h.update(f.slice(root.length)).update("\0").update(readFileSync(f)).update("\0");
  return h.digest("hex");
}

/**
 * The published build's id when the finished build in `partial` (with `manifest`) holds nothing
 * that build does not; undefined when anything differs or nothing is published.
 */
export function unchangedSince(out: string, partial: string, manifest: Manifest<LayerSpec>): string | undefined {
  const prev = currentBuild(out);
  const published = prev && readManifest<LayerSpec>(join(prev.dir, MANIFEST));
  if (!prev || !published) return undefined;
  if (content(published) !== content(manifest)) return undefined;
  return indexDigest(prev.dir) === indexDigest(partial) ? prev.id : undefined;
}

/** What a plan would put in its manifest, as far as content() looks at it. */
export interface PlannedContent {
  max_zoom: number;
  hidpi_max_zoom: number;
  renderer: string;
  plan: string;
  layers: LayerSpec[];
}

/**
 * Decided before any tile is rendered or linked: the published build's id and entries when the
 * plan would publish exactly what it holds (every planned layer-run-lead drawn there already from
 * the same fingerprint, and the same layers, plan, zooms and renderer). The embedding indexes are
 * compared afterwards (sameIndexes), once written. A second build with nothing new then costs the
 * planning and the indexes, not a hard link per tile.
 */
export function publishedAsPlanned(
  out: string,
  planned: PlannedContent,
  jobs: readonly Job[],
):
  | { id: string; dir: string; manifest: Manifest<LayerSpec>; entries: ManifestEntry[]; pointCopies: string }
  | undefined {
  const prev = currentBuild(out);
  const published = prev && readManifest<LayerSpec>(join(prev.dir, MANIFEST));
  if (!prev || !published) return undefined;
  const byKey = new Map(published.entries.map((e) => [e.key, e]));
  const entries: ManifestEntry[] = [];
  for (const job of jobs) {
    for (const lead of job.leads) {
      const e = byKey.get(lead.key);
      if (!e || e.fingerprint !== lead.fingerprint) return undefined;
      entries.push({ ...e, reused: true, encoded: 0 });
    }
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // The point copies are compared once known (pointCopiesOf): left out here.
  if (content({ ...published, point_copies: [] }) !== content({ ...planned, entries, point_copies: [] }))
    return undefined;
  return {
    id: prev.id,
    dir: prev.dir,
    manifest: published,
    entries,
    pointCopies: pointCopiesOf(published.point_copies),
  };
}

/** What content() compares of a build's point copies. */
export function pointCopiesOf(copies: Manifest["point_copies"]): string {
  return JSON.stringify((copies ?? []).map((c) => [c.key, c.revision, c.bytes]));
}

/** True when two builds' embedding index folders hold the same files with the same bytes. */
export function sameIndexes(a: string, b: string): boolean {
  return indexDigest(a) === indexDigest(b);
}
