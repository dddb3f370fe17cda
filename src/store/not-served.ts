// Nodes that look like data but are no forecast group gridcast serves, each with the reason and
// the remedy, so a store laid out another way (Utah's HRRR-Zarr: one group per level/variable, the
// data in a nested sub-group, no CRS) is never ignored without a word. What is looked at: the
// root's entries other than forecast/ and embeddings/ when the root is no dataset itself, and the
// sub-groups of each discovered group (gridcast reads only the arrays directly in a group). The
// walk is bounded (NOT_SERVED_NODES_MAX nodes, NOT_SERVED_DEPTH_MAX levels), so its cost does not
// grow with the store.
import { StoreUnavailableError } from "../errors.ts";
import type { NodeMeta } from "./metadata.ts";

/** At most this many nodes are looked at in one survey. */
export const NOT_SERVED_NODES_MAX = 512;
/** How deep below a root entry or a group's sub-group the survey looks for data. */
export const NOT_SERVED_DEPTH_MAX = 6;
/** At most this many nodes are reported (the rest are counted in one more entry). */
export const NOT_SERVED_REPORT_MAX = 100;

export interface NotServed {
  /** Path of the node in the store. */
  path: string;
  /** "not served: <why>", with what would serve it. */
  reason: string;
}

export interface SurveySource {
  node(path: string): Promise<NodeMeta | undefined>;
  children(path: string): Promise<string[]>;
}

/** Dimension names of projected x/y axes (CF and GRIB-converted stores such as HRRR-Zarr). */
const XY_DIMS = new Set(["projection_x_coordinate", "projection_y_coordinate", "x", "y"]);
const TOP_LEVEL = new Set(["forecast", "embeddings"]);

const join = (path: string, name: string) => (path === "" ? name : `${path}/${name}`);
const looksLikeData = (m: NodeMeta) => m.kind === "array" && (m.array?.shape.length ?? 0) >= 2;

/**
 * Every node that looks like data and is not served, below `root` ("" for the store root, when it
 * is no dataset) and below each of `groups` (paths of the discovered groups: their sub-groups).
 */
export async function surveyNotServed(
  source: SurveySource,
  groups: { id: string; path: string }[],
  rootIsDataset: boolean,
): Promise<NotServed[]> {
  const out: NotServed[] = [];
  const budget = { nodes: NOT_SERVED_NODES_MAX };
  if (!rootIsDataset) {
    // An unlistable store without consolidated metadata has no entries to survey.
    for (const name of await childrenOf(source, "")) {
      if (TOP_LEVEL.has(name)) continue;
      await walk(source, name, 0, budget, out, (path, meta, arrays) => outsideReason(path, meta, arrays));
    }
  }
  for (const g of groups) {
    for (const name of await childrenOf(source, g.path)) {
      if (g.path === "" && TOP_LEVEL.has(name)) continue;
      const path = join(g.path, name);
      const meta = await source.node(path);
      if (meta?.kind !== "group") continue;
      await walk(source, path, 0, budget, out, () => subGroupReason(g.id));
    }
  }
  if (budget.nodes <= 0) {
    out.push({ path: "", reason: `not surveyed further: more than ${NOT_SERVED_NODES_MAX} nodes looked at` });
  }
  if (out.length > NOT_SERVED_REPORT_MAX) {
    const more = out.length - NOT_SERVED_REPORT_MAX;
    out.length = NOT_SERVED_REPORT_MAX;
    out.push({ path: "", reason: `and ${more} more nodes not served` });
  }
  return out;
}

/** A node's children; none where the store cannot list them (an HTTP store without consolidated metadata). */
async function childrenOf(source: SurveySource, path: string): Promise<string[]> {
  try {
    return await source.children(path);
  } catch (e) {
    if (e instanceof StoreUnavailableError) return [];
    throw e;
  }
}

/**
 * The groups holding data below `path` (itself included), each reported once with `why`; an array
 * that looks like data directly at a root entry is reported as itself.
 */
async function walk(
  source: SurveySource,
  path: string,
  depth: number,
  budget: { nodes: number },
  out: NotServed[],
  why: (path: string, meta: NodeMeta, arrays: NodeMeta[]) => string,
): Promise<void> {
  if (budget.nodes-- <= 0) return;
  const meta = await source.node(path);
  if (!meta) return;
  if (meta.kind === "array") {
    if (looksLikeData(meta)) out.push({ path, reason: why(path, meta, [meta]) });
    return;
  }
  const kids: NodeMeta[] = [];
  for (const name of await childrenOf(source, path)) {
    if (budget.nodes-- <= 0) return;
    const k = await source.node(join(path, name));
    if (k) kids.push(k);
  }
  const data = kids.filter(looksLikeData);
  if (data.length > 0) {
    out.push({ path, reason: why(path, meta, kids) });
    return;
  }
  if (depth >= NOT_SERVED_DEPTH_MAX) return;
  for (const k of kids) if (k.kind === "group") await walk(source, k.path, depth + 1, budget, out, why);
}

/** Why a group holding data outside forecast/ is not served, and what would serve it. */
function outsideReason(path: string, _meta: NodeMeta, nodes: NodeMeta[]): string {
  const data = nodes.filter(looksLikeData);
  const dims = new Set(data.flatMap((d) => d.array?.dimension_names ?? []));
  const mapped = nodes.some(
    (n) => typeof n.attrs.grid_mapping_name === "string" || typeof n.attrs.grid_mapping === "string",
  );
  const where =
    "and it is not a group below forecast/ nor a dataset at the store root (gridcast serves forecast/<name>, " +
    `or the dataset the store is opened at: open the store at ${path})`;
  if ([...dims].some((d) => XY_DIMS.has(d)) && !mapped) {
    const xy = [...dims].filter((d) => XY_DIMS.has(d)).join(", ");
    return (
      `not served: no CRS — its arrays (${data.map((d) => d.path.split("/").pop()).join(", ")}) lie on ${xy} and no ` +
      "CF grid_mapping variable says in which projection (add one, e.g. HRRR's lambert_conformal_conic, or " +
      `latitude/longitude coordinates), ${where}`
    );
  }
  return `not served: it holds arrays (${data.map((d) => d.path.split("/").pop()).join(", ")}) ${where}`;
}

function subGroupReason(groupId: string): string {
  return (
    `not served: a sub-group of ${groupId}; gridcast reads only the arrays directly in a group ` +
    "(make it a group of its own below forecast/, or open the store at it)"
  );
}
