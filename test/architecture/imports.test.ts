// The source tree's import graph, read from the files themselves: no import cycles (type-only
// imports included: a cycle of types is still two modules that cannot be read apart) and no
// import from a lower layer up into a higher one. The layer order is the one ARCHITECTURE.md and
// the README's layout section describe.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";

const SRC = resolve(import.meta.dirname, "../../src");

/** Lower first. A module may import its own folder, the shared files of src/, and lower ranks. */
const RANK: Record<string, number> = {
  ".": 0, // errors, config, native, confined reads, npy, read-ahead …
  types: 0, // declarations for untyped packages
  registry: 1,
  store: 2,
  ledger: 2,
  forecast: 3,
  embeddings: 3,
  render: 4,
  "zarr-publish": 4,
  sample: 4,
  published: 5,
  pipeline: 6,
  http: 7,
  cli: 8,
};

type Graph = Map<string, string[]>;

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

const SPECIFIER =
  /(?:^|[\n;])\s*(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)|new URL\(\s*["'](\.[^"']+)["']\s*,\s*import\.meta\.url/g;

/** Relative imports of every .ts file below root, resolved to absolute paths. */
function importGraph(root: string): Graph {
  const graph: Graph = new Map();
  for (const file of sources(root)) {
    const targets: string[] = [];
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec.startsWith(".")) targets.push(resolve(dirname(file), spec));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components of more than one module, or of one that imports itself (Tarjan). */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)!.includes(v)) found.push(scc);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const folderOf = (root: string, file: string): string => {
  const parts = relative(root, file).split("/");
  return parts.length === 1 ? "." : parts[0];
};

test("the detector finds a cycle, type-only and dynamic imports included", () => {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-imports-"));
  try {
    writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b.ts";\nexport type A = B;\n');
    writeFileSync(join(dir, "b.ts"), 'export type B = 1;\nexport const c = () => import("./c.ts");\n');
    writeFileSync(join(dir, "c.ts"), 'export { x } from "./a.ts";\nimport "./d.ts";\n');
    writeFileSync(join(dir, "d.ts"), "export const d = 1;\n");
    const found = cycles(importGraph(dir)).map((c) => c.map((f) => relative(dir, f)).sort());
    assert.deepEqual(found, [["a.ts", "b.ts", "c.ts"]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("src/ has no import cycles", () => {
  const graph = importGraph(SRC);
  assert.ok(graph.size > 100, `read ${graph.size} modules`);
  const found = cycles(graph).map((c) => c.map((f) => relative(SRC, f)).join(" → "));
  assert.deepEqual(found, [], `import cycles:\n${found.join("\n")}`);
});

test("every folder of src/ has a layer, and no module imports a higher one", () => {
  const folders = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());
  assert.deepEqual(
    folders.filter((f) => RANK[f] === undefined),
    [],
    "folders without a layer",
  );
  const upward: string[] = [];
  for (const [file, targets] of importGraph(SRC)) {
    const from = folderOf(SRC, file);
    for (const t of targets) {
      const to = folderOf(SRC, t);
      if (to === from || to === ".") continue;
      if (RANK[to] >= RANK[from]) upward.push(`${relative(SRC, file)} → ${relative(SRC, t)}`);
    }
  }
  assert.deepEqual(upward, []);
});

test("only store/ imports zarrita, and render/ draws without the pipeline, HTTP or the store", () => {
  const wrong: string[] = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(file, "utf8");
    const folder = folderOf(SRC, file);
    if (folder !== "store" && /from\s+["'](zarrita|@zarrita\/[^"']+)["']/.test(text)) wrong.push(relative(SRC, file));
  }
  for (const [file, targets] of importGraph(SRC)) {
    if (folderOf(SRC, file) !== "render") continue;
    for (const t of targets) {
      if (["store", "forecast", "embeddings", "published", "pipeline", "http"].includes(folderOf(SRC, t))) {
        wrong.push(`${relative(SRC, file)} → ${relative(SRC, t)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
