// Well-known text geometries as EDR queries give them in `coords`: POINT, MULTIPOINT, LINESTRING,
// POLYGON and MULTIPOLYGON, with the Z, M and ZM forms. Strict: every number a plain decimal,
// every parenthesis closed, rings closed; a refusal names what is wrong and where.
import { InvalidParameterError } from "../../errors.ts";

export type WktKind = "POINT" | "MULTIPOINT" | "LINESTRING" | "POLYGON" | "MULTIPOLYGON";

/** One vertex: x (longitude), y (latitude), and z / m when the geometry carries them. */
export interface Vertex {
  x: number;
  y: number;
  z?: number;
  m?: number;
}

export type Geometry =
  | { type: "POINT"; points: Vertex[] }
  | { type: "MULTIPOINT"; points: Vertex[] }
  | { type: "LINESTRING"; points: Vertex[] }
  /** Rings: the outer first, then holes; each closed (first vertex repeated last). */
  | { type: "POLYGON"; polygons: Vertex[][][] }
  | { type: "MULTIPOLYGON"; polygons: Vertex[][][] };

/** Most vertices a geometry may hold: a request larger than this is refused before anything is read. */
export const WKT_MAX_VERTICES = 10_000;

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const HEAD = /^\s*(POINT|MULTIPOINT|LINESTRING|POLYGON|MULTIPOLYGON)\s*(ZM|Z|M)?\s*/i;

type Nested = Nested[] | number[];

const fault = (param: string, what: string) => new InvalidParameterError(param, `${param}: ${what}`);

/** Parses `text` as one of the `allowed` geometry kinds; anything else is a 400 naming `param`. */
export function parseWkt(text: string, allowed: readonly WktKind[], param = "coords"): Geometry {
  const head = HEAD.exec(text);
  if (!head) {
    throw fault(param, `expected well-known text ${allowed.join(" or ")}(...), got "${clip(text)}"`);
  }
  const type = head[1].toUpperCase() as WktKind;
  if (!allowed.includes(type)) throw fault(param, `this query takes ${allowed.join(" or ")}, not ${type}`);
  const dims = (head[2] ?? "").toUpperCase();
  const rest = text.slice(head[0].length);
  if (/^EMPTY\s*$/i.test(rest)) throw fault(param, `${type} EMPTY holds no position`);
  const reader = new Reader(rest, param);
  const tree = reader.list();
  reader.end();
  const width = (t: number[]) => {
    const want = dims === "" ? [2, 3] : dims === "ZM" ? [4] : [3];
    if (!want.includes(t.length)) {
      throw fault(param, `a ${type}${dims ? ` ${dims}` : ""} vertex has ${want.join(" or ")} numbers, got ${t.length}`);
    }
    // Without a tag, a third number is z (POINT(lon lat z)); with M alone it is m.
    const v: Vertex = { x: t[0], y: t[1] };
    if (dims === "M") v.m = t[2];
    else if (t.length >= 3) v.z = t[2];
    if (dims === "ZM") v.m = t[3];
    if (!(v.y >= -90 && v.y <= 90)) throw fault(param, `latitude ${v.y} is not within -90..90`);
    if (!(v.x >= -180 && v.x <= 360)) throw fault(param, `longitude ${v.x} is not within -180..360`);
    return v;
  };
  const tuple = (n: Nested, what: string): number[] => {
    if (n.length > 0 && typeof n[0] === "number") return n as number[];
    // MULTIPOINT((x y), (x y)): each point in its own parentheses.
    if (n.length === 1 && Array.isArray(n[0]) && typeof (n[0] as Nested)[0] === "number") return n[0] as number[];
    throw fault(param, `expected ${what}`);
  };
  const vertices = (list: Nested, what: string): Vertex[] => {
    if (list.length === 0 || typeof list[0] === "number") return [width(list as number[])];
    return (list as Nested[]).map((n) => width(tuple(n, what)));
  };
  const ring = (n: Nested): Vertex[] => {
    if (!Array.isArray(n) || n.length === 0 || typeof n[0] === "number")
      throw fault(param, "expected a ring (x y, ...)");
    const r = (n as Nested[]).map((t) => width(tuple(t, "a vertex")));
    const a = r[0];
    const b = r[r.length - 1];
    if (r.length < 4) throw fault(param, `a polygon ring needs at least 4 vertices (closed), got ${r.length}`);
    if (a.x !== b.x || a.y !== b.y)
      throw fault(param, "a polygon ring is not closed (its last vertex must repeat its first)");
    return r;
  };
  const polygon = (n: Nested): Vertex[][] => {
    if (!Array.isArray(n) || n.length === 0 || typeof n[0] === "number") {
      throw fault(param, "expected a polygon ((x y, ...))");
    }
    return (n as Nested[]).map(ring);
  };
  let out: Geometry;
  switch (type) {
    case "POINT": {
      if (tree.length === 0 || typeof tree[0] !== "number") throw fault(param, "POINT takes one vertex: POINT(x y)");
      out = { type, points: [width(tree as number[])] };
      break;
    }
    case "MULTIPOINT":
      out = { type, points: vertices(tree, "a point (x y)") };
      break;
    case "LINESTRING": {
      const points = vertices(tree, "a vertex (x y)");
      if (points.length < 2) throw fault(param, "a LINESTRING needs at least 2 vertices");
      out = { type, points };
      break;
    }
    case "POLYGON":
      out = { type, polygons: [polygon(tree)] };
      break;
    case "MULTIPOLYGON":
      if (tree.length === 0 || typeof tree[0] === "number") throw fault(param, "expected MULTIPOLYGON(((x y, ...)))");
      out = { type, polygons: (tree as Nested[]).map(polygon) };
      break;
  }
  return out;
}

/** A recursive reader of parenthesised lists of space-separated numbers. */
class Reader {
  #at = 0;
  #vertices = 0;
  readonly text: string;
  readonly param: string;
  constructor(text: string, param: string) {
    this.text = text;
    this.param = param;
  }

  #skip() {
    while (this.#at < this.text.length && /\s/.test(this.text[this.#at])) this.#at++;
  }

  list(depth = 0): Nested {
    this.#skip();
    if (depth > 4) throw fault(this.param, "parentheses nested too deep");
    if (this.text[this.#at] !== "(") throw fault(this.param, `expected "(" at character ${this.#at + 1}`);
    this.#at++;
    const items: Nested[] = [];
    let tuple: number[] | undefined;
    // Right after a nested list only "," or ")" may follow.
    let afterList = false;
    for (;;) {
      this.#skip();
      const c = this.text[this.#at];
      if (c === undefined) throw fault(this.param, 'unclosed parenthesis: the text ends before its ")"');
      if (c === "(") {
        if (tuple) throw fault(this.param, `unexpected "(" at character ${this.#at + 1}`);
        if (afterList) throw fault(this.param, `missing "," before character ${this.#at + 1}`);
        items.push(this.list(depth + 1));
        afterList = true;
      } else {
        if (afterList && c !== "," && c !== ")") {
          throw fault(this.param, `unexpected "${c}" at character ${this.#at + 1}`);
        }
        if (c !== "," && c !== ")") {
          const m = /^[^\s,()]+/.exec(this.text.slice(this.#at));
          const word = m ? m[0] : c;
          if (!NUMBER.test(word)) throw fault(this.param, `"${clip(word)}" is not a number`);
          const n = Number(word);
          if (!Number.isFinite(n)) throw fault(this.param, `"${clip(word)}" is out of range`);
          tuple ??= [];
          tuple.push(n);
          this.#at += word.length;
          continue;
        }
      }
      this.#skip();
      const next = this.text[this.#at];
      if (next === ",") {
        if (tuple) items.push(this.#vertex(tuple));
        else if (!items.length) throw fault(this.param, `unexpected "," at character ${this.#at + 1}`);
        tuple = undefined;
        afterList = false;
        this.#at++;
        continue;
      }
      if (next === ")") {
        this.#at++;
        if (tuple) {
          // (x y) alone is the tuple itself; (x y, x y) a list of them.
          if (!items.length) return this.#vertex(tuple) as number[];
          items.push(this.#vertex(tuple));
        }
        if (!items.length) throw fault(this.param, "empty parentheses");
        return items;
      }
      if (next === undefined) throw fault(this.param, 'unclosed parenthesis: the text ends before its ")"');
      if (next === "(") throw fault(this.param, `missing "," before character ${this.#at + 1}`);
    }
  }

  #vertex(t: number[]): number[] {
    if (++this.#vertices > WKT_MAX_VERTICES) {
      throw fault(this.param, `more than ${WKT_MAX_VERTICES} vertices`);
    }
    return t;
  }

  end() {
    this.#skip();
    if (this.#at < this.text.length) {
      throw fault(this.param, `unexpected "${clip(this.text.slice(this.#at))}" after the geometry`);
    }
  }
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/** The vertices of a point or line geometry (empty for polygons). */
export const verticesOf = (g: Geometry): Vertex[] => ("points" in g ? g.points : []);
/** The polygons of a polygon geometry (empty for points and lines). */
export const polygonsOf = (g: Geometry): Vertex[][][] => ("polygons" in g ? g.polygons : []);
