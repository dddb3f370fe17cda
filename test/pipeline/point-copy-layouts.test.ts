// The build's point copy gives /point the very answers the store gives, on every layout the
// project has producer fixtures for: stores written by xarray as producers write them (regular
// lat/lon either way up, a regional patch, an ensemble with member=all, pressure levels, packed
// int16 with _Unsigned and fill values, unstructured cells and HEALPix, a projected Lambert grid,
// a curvilinear grid with no projection stated and a cfgrib grid whose projection is recovered,
// a run ingested only partly, a chunk never written).
// Each store is built once; one server answers every question with the copy, then with
// point_copy 0 (the store), and the two bodies must be byte for byte the same. While the copy
// answers, no chunk of a copied variable is read from the store. A small box exported as .npy
// is read from the copy too (cells aside, gathered from the store), with the store's very bytes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pointCopies } from "../../src/http/point-copies.ts";
import type { PointCopyListing } from "../../src/published/manifest.ts";
import type { PointCopyReader } from "../../src/published/point-copy.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, tempDir, testServer } from "../helpers/harness.ts";
import { zarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "./build-fixture.ts";

const TEST = join(import.meta.dirname, "..");
let dir = "";

before(() => {
  dir = tempDir("gridcast-point-copy-");
  const quiet = { stdio: ["ignore", "pipe", "inherit"] as ["ignore", "pipe", "inherit"] };
  execFileSync(PYTHON, [join(TEST, "python", "producer_stores.py"), "write", dir], quiet);
  execFileSync(PYTHON, [join(TEST, "python", "layout_stores.py"), "write", dir], quiet);
  execFileSync(PYTHON, [join(TEST, "python", "cf_stores.py"), "write", join(dir, "cf.zarr"), "2"], quiet);
  execFileSync(PYTHON, [join(TEST, "forecast", "cells", "stores.py"), "write", dir], quiet);
  const venv = zarr3Python("the point copy of a projected grid");
  if (venv) {
    execFileSync(venv, [join(TEST, "forecast", "projected", "write_stores.py"), "lcc", join(dir, "hrrr.zarr")]);
    execFileSync(venv, [join(TEST, "python", "layout_stores.py"), "zarr3", dir], quiet);
    // Grids stored with 2-D latitude/longitude and no x/y values: the nodes come from pyproj (the
    // venv), the stores from Debian's xarray as cfgrib and a projection-less producer write them.
    const curvilinear = join(TEST, "forecast", "curvilinear", "write_stores.py");
    const coords = join(dir, "coords.npz");
    execFileSync(venv, [curvilinear, "coords", coords], quiet);
    for (const mode of ["nocrs", "cfgrib"]) {
      execFileSync(PYTHON, [curvilinear, mode, join(dir, `${mode}.zarr`), coords], quiet);
    }
  }
});
after(() => cleanup(dir));

/** A fixed sequence of numbers in [0, 1): the same points every run. */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Every question asked of a store: points in each copied variable's bbox, each level, members. */
async function questions(
  storeDir: string,
  copies: PointCopyListing[],
  perVar: number,
): Promise<{ latest: string[]; older: string[] }> {
  const store = new Store(storeDir);
  const out: string[] = [];
  const older: string[] = [];
  const next = uniform(42);
  for (const c of copies) {
    const group = await store.forecastGroup(c.group);
    const v = group.variables.get(c.variable)!;
    const [w, s, e, n] = v.grid.bbox;
    const levels = v.roles.includes("level") ? group.levels!.map(String) : [undefined];
    const members = v.roles.includes("member") ? [undefined, "all", String(group.members!.at(-1))] : [undefined];
    for (let i = 0; i < perVar; i++) {
      const lat = s + (n - s) * next();
      const lon = w + (e - w) * next();
      for (const level of levels) {
        for (const member of members) {
          let q = `lat=${lat.toFixed(4)}&lon=${lon.toFixed(4)}&var=${c.variable}&group=${c.group}`;
          if (level !== undefined) q += `&level=${level}`;
          if (member !== undefined) q += `&member=${member}`;
          out.push(q);
        }
      }
    }
    // An earlier run (when there is one) is not in the copy: the store answers it.
    if (group.runs.length > 1) older.push(`lat=${s}&lon=${w}&var=${c.variable}&group=${c.group}&run=0`);
  }
  return { latest: out, older };
}

/** Reads of chunks of the copied variables' arrays (metadata documents and coordinates aside). */
function chunkReads(store: Store, paths: string[]): string[] {
  const strip = (p: string) => p.replace(/^\/+/, "");
  return [...store.backend.reads.keys()].filter(
    (k) => paths.some((p) => k.startsWith(`${strip(p)}/`)) && !/(zarr\.json|\.zarray|\.zattrs|\.zgroup)$/.test(k),
  );
}

async function compare(name: string, perVar = 6): Promise<void> {
  const storeDir = join(dir, name);
  const out = join(dir, `${name}.out`);
  const report = await build({ store: storeDir, out, maxZoom: 0, orientation: false, allowMissingGroups: true });
  const copies = report.point_copy!.copies;
  assert.ok(copies.length > 0, `${name}: the build wrote no point copy`);
  const manifest = JSON.parse(readFileSync(join(out, "current", "manifest.json"), "utf8"));
  assert.deepEqual(
    manifest.point_copies.map((c: PointCopyListing) => c.key),
    copies.map((c) => c.key),
  );
  const srv = await testServer(storeDir, { out });
  try {
    const key = await srv.key(["weather"]);
    const H = { "X-API-Key": key };
    const { latest, older } = await questions(storeDir, copies, perVar);
    const asked = [...latest, ...older];
    const store = srv.running.ctx.store;
    const group = (id: string) => store.forecastGroup(id);
    const paths: string[] = [];
    for (const c of copies) paths.push((await group(c.group)).variables.get(c.variable)!.array.path);
    // The groups discovered, the build adopted and the copies looked up (the warm-up) once ready.
    assert.equal((await get(`${srv.url}/readyz`)).status, 200);
    store.backend.reads.clear();
    const reader = pointCopies(srv.running.ctx) as PointCopyReader;
    const hits0 = reader.hits;
    const withCopy: string[] = [];
    const ask = async (q: string) => {
      const r = await get(`${srv.url}/point?${q}`, H);
      withCopy.push(`${r.status} ${r.body.toString()}`);
    };
    for (const q of latest) await ask(q);
    const answered = withCopy.filter((a) => a.startsWith("200")).length;
    assert.equal(reader.hits - hits0, answered, `${name}: every answer of the latest run came from the copy`);
    assert.deepEqual(chunkReads(store, paths), [], `${name}: the copy answered, yet chunks were read`);
    // A run the copy does not hold is read from the store.
    for (const q of older) await ask(q);
    assert.equal(reader.hits - hits0, answered);
    srv.running.ctx.settings.point_copy = 0;
    for (const [i, q] of asked.entries()) {
      const r = await get(`${srv.url}/point?${q}`, H);
      assert.equal(`${r.status} ${r.body.toString()}`, withCopy[i], `${name}: ${q}`);
    }
    assert.ok(withCopy.filter((a) => a.startsWith("200")).length >= asked.length / 2, `${name}: most points answered`);
    // Small boxes: the .npy export reads the copy (unless gathered from cells) with the store's bytes.
    const next = uniform(7);
    for (const c of copies) {
      const g = await group(c.group);
      const v = g.variables.get(c.variable)!;
      const [w, s, e, n] = v.grid.bbox;
      const lat = s + (n - s) * (0.3 + 0.4 * next());
      const lon = w + (e - w) * (0.3 + 0.4 * next());
      const dy = 2 * v.grid.dlat;
      const dx = 2 * v.grid.dlon;
      const latest = g.runs.indexOf(Math.max(...g.runs));
      let q =
        `var=${c.variable}&time_index=${latest}&lead_start=0&lead_stop=${g.leads.length - 1}` +
        `&lat_min=${(lat - dy).toFixed(4)}&lat_max=${(lat + dy).toFixed(4)}` +
        `&lon_min=${(lon - dx).toFixed(4)}&lon_max=${(lon + dx).toFixed(4)}`;
      if (v.roles.includes("level")) q += `&level=${g.levels!.at(-1)}`;
      const url = `${srv.url}/api/export/${c.group.replace("/", "~")}/npy?${q}`;
      srv.running.ctx.settings.point_copy = 1;
      const hits1 = reader.hits;
      const viaCopy = await get(url, H);
      const fromCopy = reader.hits - hits1;
      srv.running.ctx.settings.point_copy = 0;
      const viaStore = await get(url, H);
      srv.running.ctx.settings.point_copy = 1;
      // (A run ingested only partly refuses the whole run's leads, alike both ways.)
      assert.equal(viaCopy.status, viaStore.status, `${name} ${c.variable}: ${viaCopy.body.toString()}`);
      assert.ok(
        viaCopy.body.equals(viaStore.body),
        `${name} ${c.variable}: the box from the copy differs from the store's`,
      );
      assert.equal(viaCopy.headers.get("x-svc-field"), viaStore.headers.get("x-svc-field"));
      if (viaCopy.status !== 200) continue;
      const copied = v.grid.cells ? 0 : 1;
      assert.equal(
        fromCopy,
        copied,
        `${name} ${c.variable}: the box ${copied ? "came from the copy" : "is gathered from the store"}`,
      );
      // The EDR cube of the same box reads it the same way.
      if (v.roles.includes("level") || v.roles.includes("member") || g.runs.length > 1) continue;
      const bbox = [lon - dx, lat - dy, lon + dx, lat + dy].map((x) => x.toFixed(4)).join(",");
      const hits2 = reader.hits;
      const cube = await get(
        `${srv.url}/edr/collections/${c.group.replace("/", "~")}/cube?bbox=${bbox}&parameter-name=${c.variable}`,
        H,
      );
      assert.ok(cube.status === 200 || cube.status === 204, `${name} ${c.variable} cube: ${cube.body.toString()}`);
      if (cube.status === 200)
        assert.equal(reader.hits - hits2, copied, `${name} ${c.variable}: the EDR cube and the copy`);
    }
  } finally {
    await srv.close();
  }
}

test("regular lat/lon, latitude descending, one run (ECMWF open data via cfgrib)", () => compare("ecmwf_oper.zarr"));
test("an ensemble of two runs, member=all and a member by number (GEFS via cfgrib)", () => compare("gefs.zarr"));
test("latitude ascending, longitudes 0..355 (WeatherBench2 forecast)", () => compare("wb2_hres.zarr"));
test("a limited-area model in its own units (COSMO-like)", () => compare("cosmo.zarr"));
test("pressure levels in hPa (CDS ERA5) and in Pa (CMIP)", async () => {
  await compare("era5_cds.zarr");
  await compare("cmip.zarr");
});
test("a regional grid across the antimeridian", () => compare("dateline.zarr"));
test("packed int16 with _Unsigned, fill values and missing values", () => compare("cf.zarr"));
test("unstructured cells: ICON triangles, octahedral reduced Gaussian, HEALPix", () => compare("cells.zarr", 10));
test("an anemoi-datasets ensemble on cells", () => compare("anemoi.zarr"));
test("a projected Lambert conformal grid (HRRR as dynamical.org lays it out)", async (t) => {
  if (!zarr3Python("the point copy of a projected grid")) return t.skip("no xarray + zarr 3 client");
  await compare("hrrr.zarr");
});
test("a curvilinear grid (2-D latitude/longitude, no projection) and a cfgrib HRRR (projection recovered)", async (t) => {
  if (!zarr3Python("the point copy of a curvilinear grid")) return t.skip("no xarray + zarr 3 client (pyproj)");
  await compare("nocrs.zarr");
  await compare("cfgrib.zarr");
});
test("a dynamical.org-style run ingested to 6 h only, and a store appended with a chunk never written", async (t) => {
  if (!zarr3Python("the point copy of a partly ingested run")) return t.skip("no xarray + zarr 3 client");
  await compare("dynamical.zarr");
  await compare("appended.zarr");
});
