// How an item group lays out its latent, read from metadata only: which array is the latent,
// which of its dimensions is y, x and feature (by name, in any order, any of them absent for
// vectors), how stored values become physical ones (a quantization scheme stated by the
// producer) and which stored values mean "missing". Anything gridcast cannot map with certainty
// is refused with the reason, by name: the item is then left out of the catalogue at build.
import { CorruptDataError } from "../errors.ts";
import { cfDecoding } from "../store/cf.ts";
import type { NodeMeta } from "../store/store.ts";

/** An item whose layout gridcast cannot read with certainty; the message says why. */
export class ItemRefusedError extends CorruptDataError {}

export type Role = "y" | "x" | "feature";
export const ROLES: readonly Role[] = ["y", "x", "feature"];

/** Dimension names per role (lower case). lat/lon only for items on a geographic CRS. */
const ROLE_NAMES: Record<Role, readonly string[]> = {
  y: ["y", "lat", "latitude", "northing", "row", "rows"],
  x: ["x", "lon", "longitude", "easting", "col", "cols", "column", "columns"],
  feature: [
    "feature",
    "features",
    "band",
    "bands",
    "channel",
    "channels",
    "dim",
    "dims",
    "dimension",
    "embedding",
    "embeddings",
    "embedding_dim",
  ],
};
const GEOGRAPHIC_NAMES = new Set(["lat", "latitude", "lon", "longitude"]);

export function roleOfDim(name: string): Role | undefined {
  const n = name.toLowerCase();
  return ROLES.find((r) => ROLE_NAMES[r].includes(n));
}

export interface Axes {
  /** Stored dimension of each role; -1 when the latent has none (that axis has length 1). */
  dimOf: Record<Role, number>;
  /** Role of each stored dimension, in stored order. */
  roles: Role[];
  /** The served shape: (y, x, feature). */
  shape: [number, number, number];
  /** Stored dimension names. */
  names: string[];
  /** Named lat/lon: a geographic item. */
  geographic: boolean;
}

/** Map an array's dimensions to y, x and feature by name; ItemRefusedError naming what fails. */
export function axesOf(meta: NodeMeta, what: string): Axes {
  const a = meta.array!;
  const names = a.dimension_names;
  if (!names || names.length !== a.shape.length || names.some((n) => typeof n !== "string" || n === "")) {
    throw new ItemRefusedError(
      `${what} has no dimension names (Zarr v3 dimension_names or v2 _ARRAY_DIMENSIONS); gridcast maps axes by name, never by position`,
    );
  }
  const dimOf: Record<Role, number> = { y: -1, x: -1, feature: -1 };
  const roles: Role[] = [];
  for (const [d, n] of names.entries()) {
    const role = roleOfDim(n);
    if (!role) {
      throw new ItemRefusedError(
        `${what} has a dimension "${n}" that is none of y (${ROLE_NAMES.y.join(", ")}), x (${ROLE_NAMES.x.join(", ")}) or feature (${ROLE_NAMES.feature.join(", ")})`,
      );
    }
    if (dimOf[role] >= 0) {
      throw new ItemRefusedError(`${what} has two ${role} dimensions: "${names[dimOf[role]]}" and "${n}"`);
    }
    dimOf[role] = d;
    roles.push(role);
  }
  const geo = names.filter((n) => GEOGRAPHIC_NAMES.has(n.toLowerCase()));
  if (geo.length > 0 && geo.length !== names.filter((n) => roleOfDim(n) !== "feature").length) {
    throw new ItemRefusedError(`${what} mixes geographic and projected dimension names: ${names.join(", ")}`);
  }
  const size = (r: Role) => (dimOf[r] < 0 ? 1 : a.shape[dimOf[r]]);
  return {
    dimOf,
    roles,
    shape: [size("y"), size("x"), size("feature")],
    names: [...names],
    geographic: geo.length > 0,
  };
}

// ---- quantization ----------------------------------------------------------------------------

export type Scheme =
  | { kind: "raw" }
  | { kind: "cf_linear"; scale_factor: number; add_offset: number }
  | { kind: "signed_power"; divisor: number; power: number; rule: string; source: string }
  | { kind: "scale_array"; array: string; path: string; roles: Role[] };

/** What a scheme means, in words, for the header and the item metadata. */
export function describeScheme(s: Scheme): string {
  switch (s.kind) {
    case "raw":
      return "stored values are the physical values";
    case "cf_linear":
      return `CF linear packing: physical = stored * ${s.scale_factor} + ${s.add_offset}`;
    case "signed_power":
      return `physical = sign(stored) * (abs(stored) / ${s.divisor}) ** ${s.power} (${s.source})`;
    case "scale_array":
      return `physical = stored * ${s.array}[${s.roles.join(", ")}] (per-${s.roles.length === 1 && s.roles[0] === "feature" ? "feature" : "pixel"} scales)`;
  }
}

const num = (v: unknown): number | undefined => {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
  return undefined;
};

/**
 * A de-quantization rule written as an expression, the AlphaEarth way: sign(x) * (abs(x) / D) ** P
 * (any variable name, ** or ^, factors in either order, optional outer parentheses). Undefined for
 * anything else.
 */
export function parseSignedPower(text: string): { divisor: number; power: number } | undefined {
  let t = text
    .replace(/\s+/g, "")
    .replace(/np\.|numpy\.|math\./g, "")
    .replace(/\^/g, "**");
  while (t.startsWith("(") && t.endsWith(")") && balanced(t.slice(1, -1))) t = t.slice(1, -1);
  const id = "([A-Za-z_]\\w*)";
  const numRe = "(\\d+(?:\\.\\d*)?|\\.\\d+)";
  const pow = [
    new RegExp(`^\\(?\\(abs\\(${id}\\)/${numRe}\\)\\*\\*${numRe}\\)?$`),
    new RegExp(`^\\(?\\(${id}/${numRe}\\)\\*\\*${numRe}\\)?$`),
  ];
  const split = [/^sign\(([A-Za-z_]\w*)\)\*(.+)$/, /^(.+)\*sign\(([A-Za-z_]\w*)\)$/];
  for (const [i, s] of split.entries()) {
    const m = s.exec(t);
    if (!m) continue;
    const signVar = i === 0 ? m[1] : m[2];
    const rest = i === 0 ? m[2] : m[1];
    for (const [k, p] of pow.entries()) {
      const q = p.exec(rest);
      if (!q || q[1] !== signVar) continue;
      const divisor = Number(q[2]);
      const power = Number(q[3]);
      // (x / D) ** P equals (|x| / D) ** P only for even P.
      if (k === 1 && power % 2 !== 0) return undefined;
      if (divisor > 0 && power > 0) return { divisor, power };
    }
  }
  return undefined;
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if (c === "(") depth++;
    else if (c === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

/** Attribute names that state a de-quantization rule (as text, or as an object). */
const RULE_KEYS = ["dequantization", "dequantize", "dequantization_rule", "quantization", "quantization_scheme"];
/** Attribute names that name an array of scales. */
const SCALE_KEYS = ["scales", "scale_array", "quantization_scales"];

/** netCDF's lossy-compression notes (_QuantizeBitRound...): values stay physical, nothing to undo. */
const isCompressionNote = (k: string) => k.startsWith("_Quantize");

function ruleFrom(v: unknown, where: string): Scheme {
  if (typeof v === "string") {
    const p = parseSignedPower(v);
    if (p) return { kind: "signed_power", ...p, rule: v, source: where };
    throw new ItemRefusedError(`${where} states a de-quantization rule gridcast does not understand: "${v}"`);
  }
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const kind = String(o.scheme ?? o.kind ?? o.name ?? "");
    const divisor = num(o.divisor);
    const power = num(o.power ?? o.exponent);
    if (/^(signed_power|signed_square|alphaearth)$/i.test(kind) && divisor && divisor > 0) {
      const pw = power ?? 2;
      return {
        kind: "signed_power",
        divisor,
        power: pw,
        rule: `sign(x) * (abs(x) / ${divisor}) ** ${pw}`,
        source: where,
      };
    }
    if (typeof o.rule === "string" || typeof o.expression === "string") {
      return ruleFrom(o.rule ?? o.expression, where);
    }
    throw new ItemRefusedError(`${where} states a quantization gridcast does not understand: ${JSON.stringify(v)}`);
  }
  throw new ItemRefusedError(`${where} states a quantization gridcast does not understand: ${JSON.stringify(v)}`);
}

/**
 * The quantization scheme of a latent: at most one of CF packing (scale_factor / add_offset), a
 * rule in the attributes of the latent or its group, or an array of scales; raw when none. Two at
 * once, or quantization attributes that say something else, are refused.
 */
export function schemeOf(
  latent: NodeMeta,
  group: NodeMeta | undefined,
  arrays: Map<string, NodeMeta>,
  axes: Axes,
  what: string,
): Scheme {
  const found: Scheme[] = [];
  const la = latent.attrs;
  const ga = group?.attrs ?? {};
  if (la.scale_factor !== undefined || la.add_offset !== undefined) {
    const p = cfDecoding(la, latent.array?.dtype ?? "float32", null, 3);
    const sf = la.scale_factor === undefined ? 1 : num(la.scale_factor);
    const ao = la.add_offset === undefined ? 0 : num(la.add_offset);
    if (sf === undefined || ao === undefined) {
      throw new ItemRefusedError(`${what} has scale_factor/add_offset that are not numbers`);
    }
    found.push({ kind: "cf_linear", scale_factor: p.scale, add_offset: p.offset });
  }
  for (const [attrs, where] of [
    [la, `the latent's attribute`],
    [ga, `the item group's attribute`],
  ] as const) {
    for (const k of Object.keys(attrs)) {
      if (isCompressionNote(k)) continue;
      if (RULE_KEYS.includes(k.toLowerCase())) {
        found.push(ruleFrom(attrs[k], `${where} "${k}"`));
      } else if (SCALE_KEYS.includes(k.toLowerCase())) {
        const name = attrs[k];
        if (typeof name !== "string" || !arrays.has(name)) {
          throw new ItemRefusedError(`${where} "${k}" names no array of this item: ${JSON.stringify(name)}`);
        }
        found.push(scaleArray(arrays.get(name)!, name, axes, what));
      } else if (/quantiz/i.test(k)) {
        throw new ItemRefusedError(`${what}: ${where} "${k}" describes a quantization gridcast does not understand`);
      }
    }
  }
  // geotessera's layout: the int8 latent beside an array of scales named so.
  if (!found.some((s) => s.kind === "scale_array")) {
    for (const n of ["scales", "scale"]) {
      const m = arrays.get(n);
      if (m && m !== latent) found.push(scaleArray(m, n, axes, what));
    }
  }
  const kinds = [...new Set(found.map((s) => JSON.stringify(s)))];
  if (kinds.length > 1) {
    throw new ItemRefusedError(`${what} states more than one quantization: ${found.map(describeScheme).join("; ")}`);
  }
  return found[0] ?? { kind: "raw" };
}

function scaleArray(meta: NodeMeta, name: string, axes: Axes, what: string): Scheme {
  const sa = axesOf(meta, `the scale array "${name}" of ${what}`);
  for (const r of sa.roles) {
    const n = meta.array!.shape[sa.dimOf[r]];
    const want = axes.shape[ROLES.indexOf(r)];
    if (n !== want && n !== 1) {
      throw new ItemRefusedError(`the scale array "${name}" of ${what} has ${n} along ${r}, the latent ${want}`);
    }
  }
  return { kind: "scale_array", array: name, path: meta.path, roles: sa.roles };
}

// ---- missing values ----------------------------------------------------------------------------

export interface MissingRule {
  /** Stored values that mean "missing" (NaN is always missing in float data). */
  values: number[];
  /** Where the rule comes from, for item metadata and the header. */
  source: string;
}

/** xarray writes _FillValue of a float in Zarr v3 attributes as base64 of a little-endian double. */
function decodeFill(v: unknown, floatType: boolean): unknown {
  if (floatType && typeof v === "string" && /^[A-Za-z0-9+/]{11}=$/.test(v)) {
    const b = Buffer.from(v, "base64");
    if (b.length === 8) return b.readDoubleLE(0);
  }
  return v;
}

/**
 * Which stored values are missing: the item's own declaration (_FillValue, missing_value or nodata,
 * on the latent or else on its group) when it makes one; otherwise xarray's rule for the Zarr
 * fill_value: the fill_value of a v2 array marks missing values, a v3 array's does not.
 */
export function missingOf(latent: NodeMeta, group: NodeMeta | undefined): MissingRule {
  const a = latent.array!;
  const floatType = a.dtype.startsWith("float");
  for (const [attrs, where] of [
    [latent.attrs, "the latent's"],
    [group?.attrs ?? {}, "the item group's"],
  ] as const) {
    const declared: Record<string, unknown> = {};
    const keys: string[] = [];
    for (const k of ["_FillValue", "missing_value", "nodata"]) {
      if (attrs[k] === undefined || attrs[k] === null) continue;
      keys.push(k);
      const v = decodeFill(attrs[k], floatType);
      declared[k === "nodata" ? "missing_value" : k] =
        k === "nodata" && declared.missing_value !== undefined ? [declared.missing_value, v].flat() : v;
    }
    if (keys.length) {
      const values = cfDecoding(declared, a.dtype, null, 3).missing;
      return { values, source: `declared by ${where} ${keys.join(", ")}` };
    }
  }
  if (latent.format === 2 && a.fill_value !== null && a.fill_value !== undefined) {
    const values = cfDecoding({}, a.dtype, a.fill_value, 2).missing;
    return {
      values,
      source: `the Zarr v2 fill_value (${JSON.stringify(a.fill_value)}), as xarray reads v2 stores; declare _FillValue, missing_value or nodata to say otherwise`,
    };
  }
  return {
    values: [],
    source:
      latent.format === 3
        ? "none declared (a Zarr v3 fill_value is not a missing-value marker, as in xarray)"
        : "none declared and no fill_value",
  };
}

// ---- which array is the latent ----------------------------------------------------------------

export interface Layout {
  latent: NodeMeta;
  axes: Axes;
  scheme: Scheme;
  missing: MissingRule;
  /** Arrays of the item group and what each is for (the latent included). */
  arrays: { name: string; use: string }[];
  /** Arrays of the group that are not served, each with the reason. */
  unused: { name: string; reason: string }[];
}

const GRID_MAPPING_NAMES = ["spatial_ref", "crs", "grid_mapping", "transverse_mercator"];

/** The grid-mapping variable named by an array's grid_mapping attribute ("crs" or "crs: x y"). */
export function gridMappingName(attrs: Record<string, unknown>): string | undefined {
  const g = attrs.grid_mapping;
  if (typeof g !== "string" || g.trim() === "") return undefined;
  return g.trim().split(/[:\s]/)[0];
}

/** Lay out an item group from its nodes (the group and its direct children). */
export function itemLayout(nodes: Map<string, NodeMeta>, base: string, what: string): Layout {
  const group = nodes.get(base);
  const arrays = new Map<string, NodeMeta>();
  for (const [p, m] of nodes) {
    if (m.kind === "array" && p.startsWith(`${base}/`) && !p.slice(base.length + 1).includes("/")) {
      arrays.set(p.slice(base.length + 1), m);
    }
  }
  const uses = new Map<string, string>();
  // Auxiliary arrays: 1-D coordinates named after their dimension, grid mappings, the preview,
  // scale arrays.
  for (const [n, m] of arrays) {
    const dims = m.array?.dimension_names;
    if (dims?.length === 1 && dims[0] === n) uses.set(n, "coordinate");
    const gm = gridMappingName(m.attrs);
    if (gm && arrays.has(gm)) uses.set(gm, "grid mapping");
    if (GRID_MAPPING_NAMES.includes(n) && (m.array?.shape.length ?? 0) <= 1 && !dims?.includes(n)) {
      uses.set(n, "grid mapping");
    }
  }
  if (arrays.has("preview")) uses.set("preview", "preview");
  for (const attrs of [group?.attrs ?? {}, ...[...arrays.values()].map((m) => m.attrs)]) {
    for (const k of SCALE_KEYS) if (typeof attrs[k] === "string" && arrays.has(attrs[k])) uses.set(attrs[k], "scales");
  }
  for (const n of ["scales", "scale"]) if (arrays.has(n) && !uses.has(n)) uses.set(n, "scales");

  let latentName: string;
  if (arrays.has("latent")) latentName = "latent";
  else {
    const candidates = [...arrays.keys()].filter((n) => !uses.has(n));
    if (candidates.length === 0) {
      throw new ItemRefusedError(
        arrays.size === 0
          ? `${what} holds no arrays`
          : `${what} has no latent array (its arrays ${[...arrays.keys()].join(", ")} are all coordinates, grid mappings, previews or scales)`,
      );
    }
    if (candidates.length > 1) {
      throw new ItemRefusedError(
        `${what} has several arrays that could be the latent (${candidates.join(", ")}); name the latent "latent"`,
      );
    }
    latentName = candidates[0];
  }
  uses.set(latentName, "latent");
  const latent = arrays.get(latentName)!;
  if (latent.array?.problem) throw new ItemRefusedError(`${what}: latent "${latentName}": ${latent.array.problem}`);
  const axes = axesOf(latent, `the latent "${latentName}" of ${what}`);
  const scheme = schemeOf(latent, group, arrays, axes, what);
  const missing = missingOf(latent, group);
  const unused: { name: string; reason: string }[] = [];
  for (const n of arrays.keys()) {
    if (!uses.has(n)) unused.push({ name: n, reason: `not served: the latent of ${what} is "${latentName}"` });
  }
  return {
    latent,
    axes,
    scheme,
    missing,
    arrays: [...uses].map(([name, use]) => ({ name, use })),
    unused,
  };
}
