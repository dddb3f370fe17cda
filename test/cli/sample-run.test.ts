// `gridcast sample --run <time>` adds a forecast cycle to a sample store for rehearsals: the next
// build publishes the new run, the earlier runs' chunk files are left as they were, and xarray
// reads the grown store.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, PYTHON, sampleStore, tempDir } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, "../../bin/gridcast");
const work = tempDir();
after(() => cleanup(work));

async function gridcast(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GRIDCAST_")));
  try {
    const r = await run(process.execPath, [BIN, ...args], { cwd: work, env, encoding: "utf8", timeout: 300_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: Number(err.code ?? 1), stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
  }
}

const latestRun = (out: string) => {
  const catalog = JSON.parse(readFileSync(join(out, "current/catalog.json"), "utf8"));
  const layer = catalog.layers.find((l: { id: string }) => l.id === "alps.t2m");
  return layer.runs
    .map((r: { run: string }) => r.run)
    .sort()
    .at(-1) as string;
};

test("sample --run appends a cycle that the next build publishes", async () => {
  const store = await sampleStore();
  const out = join(work, "out");
  try {
    const sel = { store, out, maxZoom: 1, groups: ["alps"], vars: ["t2m"], leads: [0] };
    await build(sel);
    assert.equal(latestRun(out), "2026-11-20T12:00:00");
    // An earlier run's chunk: it must not be rewritten.
    const oldChunk = join(store, "forecast/alps/t2m/c/1/0/0/0");
    const before = statSync(oldChunk);

    const added = await gridcast(["sample", "--out", store, "--run", "2026-11-21T00:00Z", "--json"]);
    assert.equal(added.code, 0, added.stderr);
    const summary = JSON.parse(added.stdout);
    assert.deepEqual(summary.runs, ["2026-11-20T00:00:00Z", "2026-11-20T12:00:00Z", "2026-11-21T00:00:00Z"]);
    const after = statSync(oldChunk);
    assert.equal(after.ino, before.ino, "the earlier run's chunk file is the same file");
    assert.equal(after.mtimeMs, before.mtimeMs, "and was not written");

    // The next build publishes the new run (not "nothing new").
    const next = await build(sel);
    assert.equal(next.unchanged, undefined);
    assert.equal(latestRun(out), "2026-11-21T00:00:00");

    // xarray (Debian's, zarr 2) reads the grown store's v2 group: three runs, the new one's field present.
    const py = await run(
      PYTHON,
      [
        "-c",
        "import sys, xarray as xr, numpy as np\n" +
          "ds = xr.open_zarr(sys.argv[1] + '/forecast/europe')\n" +
          "v = ds[sorted(ds.data_vars)[0]].isel(time=-1, lead_time=0)\n" +
          "print(len(ds.time), str(ds.time.values[-1])[:13], bool(np.isfinite(v.values).any()))",
        store,
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    assert.equal(py.stdout.trim(), "3 2026-11-21T00 True");

    // Runs are appended: one not after the latest is refused, by name, exit 2.
    const earlier = await gridcast(["sample", "--out", store, "--run", "2026-11-20T06:00Z"]);
    assert.equal(earlier.code, 2, earlier.stderr);
    assert.match(earlier.stderr, /--run 2026-11-20T06:00:00Z is not after the store's latest run 2026-11-21T00:00:00Z/);
  } finally {
    cleanup(store);
  }
});
