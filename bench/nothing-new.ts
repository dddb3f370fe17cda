// "Nothing new" on a published build of the demo store: a second `gridcast build` with nothing
// changed must say so at once, whatever the build's size, instead of staging a hard link per
// tile first. For each max zoom (the build's size grows about 4× a zoom), the store is built once,
// then built again and timed; the baseline, measured in the same run, is `gridcast inspect` on the
// same store (reading its metadata, which any build has to do). Target: ≤ 1 s at every size.
// With a second argument, another checkout of gridcast (e.g. /work/main) builds and decides the
// same in the same run, into its own output: the ratio this checkout / that one.
//   node bench/nothing-new.ts [max zooms, default 3,5,7] [other checkout]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchStore } from "./lib.ts";

const BIN = resolve(import.meta.dirname, "../bin/gridcast");
const zooms = (process.argv[2] ?? "3,5,7").split(",").map(Number);
const other = process.argv[3] ? resolve(process.argv[3], "bin/gridcast") : undefined;

function timed(args: string[], bin = BIN): { seconds: number; status: number | null; stdout: string; stderr: string } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  return { seconds: (performance.now() - t) / 1000, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const store = await benchStore("demo");
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
        const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1];
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
