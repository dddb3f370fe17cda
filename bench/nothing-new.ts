// "Nothing new" on a published build of the demo store: a second `gridcast build` with nothing
// changed must say so at once, whatever the build's size, instead of staging a hard link per
// tile first. For each max zoom (the build's size grows about 4× a zoom), the store is built once,
// then built again and timed; the baseline, measured in the same run, is `gridcast inspect` on the
// same store (reading its metadata, which any build has to do). Target: ≤ 1 s at every size.
// The same is done on a copy of the demo store holding 20× its embedding items (each family's
// model version copied to 19 more, hard-linked): "nothing new" there, alternating with the demo
// store's, three times each; the ratio x20 / demo shows whether the decision grows with items.
// With a second argument, another checkout of gridcast (e.g. /work/main) builds and decides the
// same in the same run, into its own output: the ratio this checkout / that one.
//   node bench/nothing-new.ts [max zooms, default 3,5,7] [other checkout]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BENCH_DIR, benchStore } from "./lib.ts";

const BIN = resolve(import.meta.dirname, "../bin/gridcast");
const zooms = (process.argv[2] ?? "3,5,7").split(",").map(Number);
const other = process.argv[3] ? resolve(process.argv[3], "bin/gridcast") : undefined;

function timed(args: string[], bin = BIN): { seconds: number; status: number | null; stdout: string; stderr: string } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  return { seconds: (performance.now() - t) / 1000, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const store = await benchStore("demo");
/** The demo store with each family's embeddings copied to 19 more model versions (hard links). */
function manyItems(): string {
  const dir = join(BENCH_DIR, "store-demo-items-x20");
  if (existsSync(dir)) return dir;
  const part = `${dir}.part`;
  rmSync(part, { recursive: true, force: true });
  execFileSync("cp", ["-al", store, part]);
  for (const family of ["geofm", "terramind"]) {
    for (let v = 3; v <= 21; v++) {
      execFileSync("cp", [
        "-al",
        join(part, "embeddings", family, "rf", "v1.2"),
        join(part, "embeddings", family, "rf", `v1.${v}`),
      ]);
    }
  }
  execFileSync("mv", [part, dir]);
  return dir;
}
const many = manyItems();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
for (const z of zooms) {
  const out = mkdtempSync(join(tmpdir(), "gridcast-nothing-new-"));
  try {
    const args = ["build", "--store", store, "--out", out, "--max-zoom", String(z), "--json"];
    const first = timed(args);
    if (first.status !== 0) throw new Error(`first build failed: ${first.stderr}`);
    const tiles = JSON.parse(first.stdout).totals.tiles as number;
    const inspect = timed(["inspect", "--store", store]);
    const again = timed(args);
    if (again.status !== 4) throw new Error(`second build: exit ${again.status}, not 4: ${again.stderr}`);
    console.log(
      `max zoom ${z}: ${tiles} tiles built in ${first.seconds.toFixed(1)} s; nothing new said in ` +
        `${again.seconds.toFixed(2)} s (target ≤ 1 s); inspect ${inspect.seconds.toFixed(2)} s; ` +
        `ratio nothing-new / inspect ${(again.seconds / inspect.seconds).toFixed(2)}`,
    );
    {
      const outMany = mkdtempSync(join(tmpdir(), "gridcast-nothing-new-many-"));
      try {
        const argsMany = ["build", "--store", many, "--out", outMany, "--max-zoom", String(z), "--json"];
        const firstMany = timed(argsMany);
        if (firstMany.status !== 0) throw new Error(`first build of the x20 store failed: ${firstMany.stderr}`);
        const items = (r: { stdout: string }) => JSON.parse(r.stdout).embeddings?.items as number;
        const itemsMany = items(firstMany);
        const demo: number[] = [];
        const x20: number[] = [];
        for (let i = 0; i < 3; i++) {
          const a = timed(args);
          const b = timed(argsMany);
          if (a.status !== 4 || b.status !== 4)
            throw new Error(`second builds: exit ${a.status} and ${b.status}, not 4`);
          demo.push(a.seconds);
          x20.push(b.seconds);
        }
        console.log(
          `max zoom ${z}: nothing new, median of 3: demo store (${items(first)} items) ${median(demo).toFixed(2)} s, ` +
            `x20 store (${itemsMany} items, first build ${firstMany.seconds.toFixed(1)} s) ${median(x20).toFixed(2)} s, ` +
            `ratio x20 / demo ${(median(x20) / median(demo)).toFixed(2)}`,
        );
      } finally {
        rmSync(outMany, { recursive: true, force: true });
      }
    }
    if (other) {
      const theirs = mkdtempSync(join(tmpdir(), "gridcast-nothing-new-other-"));
      try {
        const args2 = ["build", "--store", store, "--out", theirs, "--max-zoom", String(z), "--json"];
        if (timed(args2, other).status !== 0) throw new Error("the other checkout's first build failed");
        // Alternating, three times each: the load on a shared machine moves.
        const ours: number[] = [];
        const them: number[] = [];
        for (let i = 0; i < 3; i++) {
          ours.push(timed(args).seconds);
          const t = timed(args2, other);
          if (t.status !== 4) throw new Error(`the other checkout's second build: exit ${t.status}`);
          them.push(t.seconds);
        }
        console.log(
          `max zoom ${z}: nothing new, median of 3: this checkout ${median(ours).toFixed(2)} s, ` +
            `${process.argv[3]} ${median(them).toFixed(2)} s, ratio ${(median(ours) / median(them)).toFixed(2)}`,
        );
      } finally {
        rmSync(theirs, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
console.log(
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
