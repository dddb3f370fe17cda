// Stores with the CF encodings producers write, written by the real writers — xarray + zarr 3 (a v3
// store: float _FillValue base64 in the attributes) and xarray + zarr 2 (a v2 store: the marker in
// .zarray's fill_value) — and every route compared with what xarray reads from the same store:
// /point, the .npy export, the click value, a map tile's pixels at missing and present cells, and
// /data opened with default settings by both client generations. Two variables carry encodings
// gridcast does not understand and are refused wherever they would be served.
// The variables and their encodings: test/python/cf_stores.py.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { lonLatToTile, pixelLat, pixelLon, TILE_SIZE } from "../../src/render/tiles.ts";
import { describeStore } from "../../src/store/describe.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { zarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "../pipeline/build-fixture.ts";
import { decodeRgba } from "../render/decode.ts";

const SCRIPT = join(import.meta.dirname, "../python/cf_stores.py");
const SERVED = ["d2m", "msl", "t2m", "tcc"];
// time 2 × lead 3 × lat 6 (50 → 45) × lon 8 (5 → 12); lat 48..47 × lon 8..9 missing in every field.
const [NT, NL, NY, NX] = [2, 3, 6, 8];
const lat = (iy: number) => 50 - iy;
const lon = (ix: number) => 5 + ix;
const MISSING_NODE = { iy: 2, ix: 3 };
const PRESENT_NODE = { iy: 4, ix: 1 };

type Truth = Record<string, (number | null)[]> & { raw: Record<string, (number | null)[]> };

const at = (run: number, lead: number, iy: number, ix: number) => ((run * NL + lead) * NY + iy) * NX + ix;
const f32 = (v: number | null) => (v === null ? null : Math.fround(v));

// xarray's reading of the stores: today's xarray (it reads v2 stores too) unpacks in float64
// arithmetic as gridcast does, so values compare exactly. Without it, Debian's older xarray reads
// them, which unpacks int16 in float32 arithmetic: then a value may differ in its last bit or two.
const TRUTH_PYTHON = zarr3Python("the CF encodings test (xarray's reading)") ?? PYTHON;
const TOLERANCE = TRUTH_PYTHON === PYTHON ? 3e-7 : 0;

/** A decoded value as gridcast answers it (float32) against xarray's; null for missing. */
function same(got: number | null, want: number | null, what: string): void {
  if (want === null || got === null || TOLERANCE === 0) {
    assert.equal(got, f32(want), what);
    return;
  }
  assert.ok(Math.abs(got - want) <= TOLERANCE * Math.abs(want), `${what}: ${got} vs ${want}`);
}

function parseNpy(buf: Buffer): { shape: number[]; data: Float32Array } {
  const hlen = buf.readUInt16LE(8);
  const header = buf.subarray(10, 10 + hlen).toString("latin1");
  const shape = /'shape': \(([^)]*)\)/
    .exec(header)![1]
    .split(",")
    .filter((s) => s.trim())
    .map(Number);
  return { shape, data: new Float32Array(new Uint8Array(buf.subarray(10 + hlen)).buffer) };
}

const WRITERS = [
  { name: "xarray + zarr 3 writes a v3 store", python: zarr3Python("the CF encodings test (v3 store)"), format: 3 },
  { name: "xarray + zarr 2 writes a v2 store", python: PYTHON, format: 2 },
];

for (const writer of WRITERS) {
  describe(writer.name, { skip: writer.python === null ? "xarray + zarr 3 is not available here" : false }, () => {
    const py = writer.python as string;
    let root: string;
    let storeDir: string;
    let truth: Truth;
    let srv: TestServer;
    let key: string;
    let warnings: string[];
    const H = () => ({ "X-API-Key": key });

    before(async () => {
      root = tempDir();
      storeDir = join(root, "cf.zarr");
      execFileSync(py, [SCRIPT, "write", storeDir, String(writer.format)]);
      truth = JSON.parse(execFileSync(TRUTH_PYTHON, [SCRIPT, "truth", storeDir], { encoding: "utf8" }));
      srv = await testServer(storeDir);
      key = await srv.key(["weather"]);
      const report = await build({ store: storeDir, out: srv.running.ctx.settings.out, maxZoom: 6, leads: [0] });
      warnings = report.warnings;
    });
    after(async () => {
      await srv?.close();
      cleanup(root);
    });

    test("the store holds values that are wrong unless decoded (the test would notice a missing step)", () => {
      const m = at(1, 0, MISSING_NODE.iy, MISSING_NODE.ix);
      const p = at(1, 0, PRESENT_NODE.iy, PRESENT_NODE.ix);
      for (const v of SERVED) {
        assert.equal(truth[v][m], null, `${v}: xarray reads the missing cell as missing`);
        assert.notEqual(truth.raw[v][m], null, `${v}: the store holds a number there`);
      }
      // Packed and _Unsigned values differ from their stored integers everywhere.
      assert.ok(truth.raw.d2m[p]! < 0 && truth.d2m[p]! > 240, "d2m is stored as negative int16");
      assert.ok(Number.isInteger(truth.raw.tcc[p]) && truth.tcc[p]! <= 1);
    });

    test("/point: every decoded series equals xarray's, missing cells null", async () => {
      for (const v of SERVED) {
        for (const node of [MISSING_NODE, PRESENT_NODE]) {
          for (const run of [0, 1]) {
            const r = await get(`${srv.url}/point?lat=${lat(node.iy)}&lon=${lon(node.ix)}&var=${v}&run=${run}`, H());
            assert.equal(r.status, 200, r.body.toString());
            const values = r.json().values;
            assert.equal(values.length, NL);
            for (let lead = 0; lead < NL; lead++) {
              same(
                values[lead],
                truth[v][at(run, lead, node.iy, node.ix)],
                `${v} run ${run} lead ${lead} ${JSON.stringify(node)}`,
              );
            }
          }
        }
      }
    });

    test("the .npy export of a box equals xarray's values cell for cell (NaN where missing)", async () => {
      for (const v of SERVED) {
        const q = `var=${v}&time_index=1&lead_start=0&lead_stop=2&lat_min=45&lat_max=50&lon_min=5&lon_max=12`;
        const r = await get(`${srv.url}/api/export/forecast~cf/npy?${q}`, H());
        assert.equal(r.status, 200, r.body.toString());
        const field = JSON.parse(r.headers.get("x-svc-field")!);
        const { shape, data } = parseNpy(r.body);
        assert.deepEqual(shape, [NL, NY, NX]);
        const south = field.lat.first === 45;
        let missing = 0;
        for (let lead = 0; lead < NL; lead++) {
          for (let row = 0; row < NY; row++) {
            const iy = south ? NY - 1 - row : row;
            for (let ix = 0; ix < NX; ix++) {
              const got = data[(lead * NY + row) * NX + ix];
              const want = truth[v][at(1, lead, iy, ix)];
              if (want === null) {
                missing++;
                assert.ok(Number.isNaN(got), `${v} lead ${lead} [${iy},${ix}]: ${got} where xarray reads missing`);
              } else same(got, want, `${v} lead ${lead} [${iy},${ix}]`);
            }
          }
        }
        assert.equal(missing, NL * 4, `${v}: the missing block`);
      }
    });

    test("the click value equals xarray's and is null at a missing cell", async () => {
      for (const v of SERVED) {
        for (const node of [MISSING_NODE, PRESENT_NODE]) {
          const r = await get(
            `${srv.url}/api/forecast/value?layer=cf.${v}&lat=${lat(node.iy)}&lon=${lon(node.ix)}&lead=3`,
          );
          assert.equal(r.status, 200, r.body.toString());
          same(r.json().value, truth[v][at(1, 1, node.iy, node.ix)], `${v} ${JSON.stringify(node)}`);
        }
      }
    });

    test("map tiles: transparent inside the missing block, drawn beside it", async () => {
      const z = 6;
      const alphaAt = async (layer: string, la: number, lo: number) => {
        const { x, y } = lonLatToTile(lo, la, z);
        const r = await get(`${srv.url}/api/forecast/tile/${z}/${x}/${y}?layer=${layer}`);
        assert.equal(r.status, 200, `${layer} tile ${z}/${x}/${y}: ${r.status}`);
        const { data } = await decodeRgba(r.body);
        // The pixel whose centre lies nearest the point.
        let best = 0;
        let bestD = Number.POSITIVE_INFINITY;
        for (let row = 0; row < TILE_SIZE; row++) {
          for (let col = 0; col < TILE_SIZE; col++) {
            const d = Math.abs(pixelLat(z, y, row) - la) + Math.abs(pixelLon(z, x, col) - lo);
            if (d < bestD) {
              bestD = d;
              best = row * TILE_SIZE + col;
            }
          }
        }
        return data[best * 4 + 3];
      };
      for (const v of ["d2m", "msl", "t2m"]) {
        // Between the four missing nodes (48..47 N, 8..9 E), and between four present ones.
        assert.equal(await alphaAt(`cf.${v}`, 47.5, 8.5), 0, `${v}: a missing cell is transparent`);
        assert.equal(await alphaAt(`cf.${v}`, 45.5, 6.5), 255, `${v}: a present cell is drawn`);
      }
    });

    test("/data opened with default settings by both client generations reads what xarray reads", async () => {
      const truthFile = join(root, "truth.json");
      writeFileSync(truthFile, JSON.stringify(truth));
      const url = `${srv.url}/data/datasets/forecast~cf/zarr/`;
      const clients = [
        // Today's xarray reads /data exactly as it reads the store; Debian's older one may differ
        // in the last bit of unpacked values (it unpacks int16 in float32 arithmetic).
        { python: zarr3Python("the CF encodings test (/data)"), rtol: String(TOLERANCE) },
        { python: PYTHON, rtol: "3e-7" },
      ];
      // The written attributes against the encoding rules (the only v3 check where today's client
      // is not installed): the v3 _FillValue is what the v2 view's fill_value is, base64 of a
      // little-endian float64 for floats, an integer otherwise.
      for (const v of SERVED) {
        const v3 = (await get(`${url}${v}/zarr.json`, H())).json();
        const v2 = (await get(`${url}${v}/.zarray`, H())).json();
        const fill = v3.attributes._FillValue;
        const v2Fill = v2.fill_value === "NaN" ? Number.NaN : v2.fill_value;
        assert.equal(v3.attributes._FillValue === undefined, v2.fill_value === null, `${v}: a marker in both views`);
        if (fill === undefined) continue;
        if (v3.data_type.startsWith("float")) {
          assert.match(fill, /^[A-Za-z0-9+/]{11}=$/, `${v}: float _FillValue in base64`);
          assert.ok(Object.is(Buffer.from(fill, "base64").readDoubleLE(0), v2Fill), `${v}: ${fill} vs ${v2Fill}`);
        } else assert.equal(fill, v2Fill, v);
      }
      for (const c of clients) {
        if (!c.python) continue;
        // Asynchronous: the server answering the client runs in this process.
        const { stdout } = await promisify(execFile)(c.python, [SCRIPT, "data", url, key, truthFile, c.rtol], {
          encoding: "utf8",
          timeout: 120_000,
        });
        const out = JSON.parse(stdout);
        assert.deepEqual(out.variables, SERVED, `${out.zarr}: the refused variables are not published`);
        for (const v of SERVED) assert.equal(out.checked[v].missing, NT * NL * 4, `${out.zarr} ${v}`);
      }
    });

    test("encodings gridcast does not understand: refused by name in inspect, the build and every route", async () => {
      const problems: Record<string, RegExp> = { r2: /_Unsigned "maybe"/, sp: /scale_factor "0\.5"/ };
      const store = new Store(storeDir);
      const info = await describeStore(store);
      const g = info.forecast_groups.find((x) => x.id === "forecast/cf")!;
      assert.deepEqual(g.variables.map((v) => v.name).sort(), SERVED);
      for (const [v, re] of Object.entries(problems)) {
        const u = g.unregistered.find((x) => x.stored === v);
        assert.equal(u?.refused?.variable, v);
        assert.match(u!.refused!.problem, re);
        assert.ok(
          warnings.some((w) => w.includes(`forecast/cf/${v}`) && re.test(w)),
          `build warns about ${v}: ${warnings}`,
        );
        for (const url of [
          `${srv.url}/point?lat=47&lon=8&var=${v}`,
          `${srv.url}/api/export/forecast~cf/npy?var=${v}&time_index=0&lead_start=0&lead_stop=0&lat_min=45&lat_max=46&lon_min=5&lon_max=6`,
          `${srv.url}/api/forecast/value?layer=cf.${v}&lat=47&lon=8`,
        ]) {
          const r = await get(url, H());
          assert.equal(r.status, 500, `${url}: ${r.body}`);
          assert.equal(r.json().type, "/problems/unsupported-encoding");
          assert.match(r.json().detail, new RegExp(`^${v} in forecast/cf`));
          assert.match(r.json().detail, re);
        }
      }
      const listing = (await get(`${srv.url}/data/datasets`, H())).json();
      const skipped = listing.datasets[0].skipped.map((s: { stored: string }) => s.stored).sort();
      assert.deepEqual(skipped, ["r2", "sp"]);
    });
  });
}
