// Build throughput against GDAL on the same field and the same output disk: the z0–6 pyramid of
// one 0.25° layer (t2m, first run and lead of the xarray-written bench store) by `gridcast build`
// (store read and decode included) and by gdaldem color-relief + gdal2tiles.py with as many
// processes as the build has threads (the field handed to GDAL ready as a raster file). The build
// runs three times around GDAL's one; the median is compared.
// Target: build ≥ 30× gdal2tiles, PNG bytes per tile printed beside it.
//   node bench/gdal.ts
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, printRows } from "./lib.ts";
import { xarrayStore } from "./xarray.ts";

// z0–6 (5,461 tiles): gdal2tiles needs minutes for z7 on a shared 2-core machine.
const MAX_ZOOM = 6;
const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";
// Roughly the t2m colours of the gridcast style (kelvin → RGB), so GDAL colours as much as we do.
const RAMP = [
  "223 40 0 90",
  "243 30 60 200",
  "263 100 180 240",
  "273 240 240 240",
  "288 250 200 60",
  "303 220 60 30",
  "318 120 0 20",
];

function countFiles(dir: string): number {
  return pngs(dir).length;
}

function pngs(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".png"))
    .map((e) => join(e.parentPath, e.name));
}

/** Mean PNG bytes per tile; a file hard-linked for several tiles (one-colour tiles) counts once per tile. */
function bytesPerTile(dir: string): number {
  const files = pngs(dir);
  return files.reduce((n, f) => n + statSync(f).size, 0) / Math.max(1, files.length);
}

/**
 * Write back what earlier steps left dirty, so no timed step pays for another's disk work. Nothing
 * is removed between timed steps either: this disk is mounted with online discard, and a removed
 * tree of thousands of tiles slowed the next build's file creation by seconds of system time.
 */
function settle(): void {
  execFileSync("sync");
}

export async function run(): Promise<BenchRow[]> {
  const store = xarrayStore();
  const work = join(BENCH_DIR, "gdal");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const threads = availableParallelism();

  // gridcast's build takes seconds and GDAL's a minute: one short sample would catch whatever the
  // machine is doing at that moment, so the build runs three times (once before GDAL, twice after)
  // and the median is compared; the range is in the note.
  const builds: { seconds: number; tiles: number; bytesPerTile: number }[] = [];
  const build = async () => {
    const out = join(work, `gridcast-${builds.length}`);
    process.stderr.write(`gridcast build ${builds.length + 1}…\n`);
    settle();
    const t0 = performance.now();
    const built = await runBuild({
      store,
      out,
      concurrency: threads,
      reuse: false,
      groups: ["global"],
      vars: ["t2m"],
      leads: [0],
      maxZoom: MAX_ZOOM,
      // Like for like: gdal2tiles makes 256 px tiles only, so no 512 px @2x tiles here.
      hidpi: false,
      progress: false,
      webDir: null,
    });
    builds.push({
      seconds: (performance.now() - t0) / 1000,
      tiles: built.totals.tiles,
      bytesPerTile: bytesPerTile(out),
    });
  };
  await build();

  process.stderr.write("GDAL…\n");
  execFileSync(PYTHON, [resolve(import.meta.dirname, "gdal_field.py"), store, join(work, "field")]);
  writeFileSync(join(work, "ramp.txt"), `${RAMP.join("\n")}\n`);
  settle();
  const t1 = performance.now();
  const sh = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, { cwd: work, stdio: ["ignore", "ignore", "inherit"] });
  // Web Mercator stops at ±85.05°: crop to whole cells inside it first (GDAL cannot warp the poles).
  sh("gdal_translate", [
    "-q",
    "-a_srs",
    "EPSG:4326",
    "-projwin",
    "-179.875",
    "84.875",
    "179.875",
    "-84.875",
    "field.bil",
    "field.tif",
  ]);
  sh("gdaldem", ["color-relief", "-q", "-alpha", "field.tif", "ramp.txt", "rgba.tif"]);
  sh("gdal2tiles.py", [
    "-q",
    "--xyz",
    "-z",
    `0-${MAX_ZOOM}`,
    "-w",
    "none",
    `--processes=${threads}`,
    "rgba.tif",
    "tiles",
  ]);
  const gdalSeconds = (performance.now() - t1) / 1000;
  const gdalTiles = countFiles(join(work, "tiles"));
  const gdalBytes = bytesPerTile(join(work, "tiles"));
  await build();
  await build();
  rmSync(work, { recursive: true, force: true });

  const times = builds.map((b) => b.seconds).sort((a, b) => a - b);
  const buildSeconds = times[1];
  const buildTiles = builds[0].tiles;
  if (builds.some((b) => b.tiles !== buildTiles)) throw new Error("the three builds wrote different tile counts");
  const ours = buildTiles / buildSeconds;
  const theirs = gdalTiles / gdalSeconds;
  return [
    {
      bench: `build z0–${MAX_ZOOM}, one 0.25° layer, ${threads} threads, output on ${BENCH_DIR}`,
      figure: "tiles/s (whole build)",
      value: ours,
      baseline: "gdaldem + gdal2tiles.py tiles/s",
      baselineValue: theirs,
      ratio: ours / theirs,
      target: 30,
      note: `PNG bytes per tile ${builds[0].bytesPerTile.toFixed(0)} (gdal2tiles ${gdalBytes.toFixed(0)}); ${buildTiles} tiles in ${buildSeconds.toFixed(2)} s (median of 3 builds: ${builds.map((b) => b.seconds.toFixed(2)).join(", ")} s, ratios ${(buildTiles / times[2] / theirs).toFixed(1)}–${(buildTiles / times[0] / theirs).toFixed(1)}) vs ${gdalTiles} in ${gdalSeconds.toFixed(1)} s`,
    },
  ];
}

if (import.meta.main) printRows(await run());
