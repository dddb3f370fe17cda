// Latents laid out the way producers publish them (rioxarray/GDAL grid mappings, AlphaEarth's int8
// with its rule in the attributes, geotessera's int8 with per-pixel scales, CF packing, ReLU
// latents full of zeros, vectors of every rank, sharded v3 with the index at the start), written
// by the real writers (Debian's xarray + zarr 2, today's xarray + zarr 3): geometry is checked
// against pyproj and the stored coordinates, every .npy against numpy reading the store and
// applying the producer's own de-quantization, and what gridcast cannot be sure of is refused by
// name at build, listed with its reason, and never guessed.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { tileGeometry } from "../../src/embeddings/mgrs.ts";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { cleanup, get, PYTHON, sampleStore, type TestServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { numpyLoad, publishedServer } from "./fixtures.ts";

const TILE = "32TNS";
const PERIOD = "2024_01_01_2024_12_31";
const HERE = import.meta.dirname;
const nameOf = (family: string, product = "map") => `${family}~rf~v1.0~base~${product}~${PERIOD}~${TILE}`;
const dirOf = (family: string, product = "map") =>
  join(storeDir, "embeddings", family, "rf", "v1.0", "base", product, PERIOD, TILE);

const SERVED = ["aef", "cfpack", "ftscale", "relu2", "relu2nd", "relu3", "rioxr", "shard", "tessera"];
const VECTORS = ["vec1d", "vec2d", "vec3", "vecfirst"];
const REFUSED: Record<string, RegExp> = {
  baddims: /dimension "time" that is none of y/,
  badtransform: /GeoTransform and the transform attribute disagree by \d+\.\d+ pixels/,
  nogeo: /states no CRS/,
};

let storeDir: string;
let srv: TestServer;
let key: string;
let venv: string;

/** A .npy body as shape, numpy descr and its data bytes. */
function parseNpy(body: Uint8Array): { shape: number[]; descr: string; data: Uint8Array } {
  const len = body[8] | (body[9] << 8);
  const header = Buffer.from(body.subarray(10, 10 + len)).toString("latin1");
  const descr = /'descr': '([^']+)'/.exec(header)![1];
  const shape = /'shape': \(([^)]*)\)/
    .exec(header)![1]
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  return { shape, descr, data: body.subarray(10 + len) };
}

const f32 = (d: Uint8Array) => new Float32Array(d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength));

/** What the producer's reader makes of an item (producers_truth.py), as a parsed .npy. */
function truth(family: string, product = "map", raw = false) {
  const out = execFileSync(
    venv,
    [join(HERE, "producers_truth.py"), dirOf(family, product), family, ...(raw ? ["raw"] : [])],
    {
      maxBuffer: 64 << 20,
    },
  );
  return parseNpy(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
}

/** Equal as float32 to within one part in 10^6, NaN where the truth has NaN. */
function assertClose(got: Float32Array, want: Float32Array, what: string) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    const g = got[i];
    if (Number.isNaN(w)) assert.ok(Number.isNaN(g), `${what}[${i}]: ${g}, want NaN`);
    else assert.ok(Math.abs(g - w) <= 1e-6 * Math.max(Math.abs(w), 1e-30), `${what}[${i}]: ${g}, want ${w}`);
  }
}

const npy = (name: string, q = "") =>
  get(`${srv.url}/api/embeddings/npy/${name}${q ? `?${q}` : ""}`, { "X-API-Key": key });
const item = (name: string) => get(`${srv.url}/api/embeddings/item/${name}`, { "X-API-Key": key });

before(async () => {
  venv = requireZarr3Python("producer layouts of EO latents");
  storeDir = await sampleStore();
  const g = tileGeometry(TILE);
  const wkt = execFileSync(venv, ["-c", `import pyproj; print(pyproj.CRS.from_epsg(${g.epsg}).to_wkt())`])
    .toString()
    .trim();
  const spec = join(mkdtempSync(join(tmpdir(), "gridcast-producers-")), "spec.json");
  writeFileSync(
    spec,
    JSON.stringify({
      tile: TILE,
      period: PERIOD,
      wkt,
      epsg: g.epsg,
      easting: g.origin.easting,
      northing: g.origin.northing,
    }),
  );
  execFileSync(PYTHON, [join(HERE, "producers.py"), storeDir, spec], { stdio: ["ignore", "ignore", "inherit"] });
  execFileSync(venv, [join(HERE, "producers.py"), storeDir, spec], { stdio: ["ignore", "ignore", "inherit"] });
  srv = await publishedServer(storeDir);
  key = await srv.key(["embeddings"], 1_000_000);
});

after(async () => {
  await srv?.close();
  cleanup(storeDir);
});

describe("geometry from the store, never guessed", () => {
  for (const family of ["rioxr", "aef"]) {
    test(`${family}: transform from the grid mapping, bbox and bbox_utm one extent (pyproj), coordinates as stored`, async () => {
      const r = await item(nameOf(family));
      assert.equal(r.status, 200, r.body.toString());
      const m = r.json();
      const gm = JSON.parse(
        readFileSync(join(dirOf(family), "spatial_ref", family === "aef" ? "zarr.json" : ".zattrs"), "utf8"),
      );
      const gt = (gm.attributes ?? gm).GeoTransform.split(" ").map(Number);
      const [c, a, b, f, d, e] = gt;
      assert.deepEqual(m.transform, [a, b, c, d, e, f]);
      assert.ok(m.geometry_sources.some((s: string) => /GeoTransform/.test(s)));
      assert.ok(m.geometry_sources.includes("the x/y coordinates"));
      const [ny, nx] = m.latent.served_shape;
      assert.deepEqual(m.bbox_utm, [c, f + e * ny, c + a * nx, f]);
      const py = [
        "import json, sys, pyproj",
        "b = json.loads(sys.argv[1])",
        "t = pyproj.Transformer.from_crs(int(sys.argv[2]), 4326, always_xy=True)",
        "print(json.dumps(t.transform_bounds(*b, densify_pts=50)))",
      ].join("\n");
      const want = JSON.parse(execFileSync(venv, ["-c", py, JSON.stringify(m.bbox_utm), String(m.epsg)]).toString());
      for (let i = 0; i < 4; i++)
        assert.ok(Math.abs(m.bbox[i] - want[i]) < 1e-7, `bbox[${i}] ${m.bbox[i]} vs ${want[i]}`);
      // The square of the tile is not the item's extent: the bbox must not be the tile's.
      assert.ok(Math.abs(m.bbox[0] - tileGeometry(TILE).bbox[0]) > 1e-3);
      // Stored coordinates: pixel centres half a pixel inside the transform's corners.
      assert.equal(m.coordinates.x.first, c + a / 2);
      assert.equal(m.coordinates.y.first, f + e / 2);
      assert.equal(m.coordinates.x.count, nx);
    });

    test(`${family}: locate finds the pixel the stored coordinates hold, for points all over the item`, async () => {
      const m = (await item(nameOf(family))).json();
      const [ny, nx] = m.latent.served_shape;
      // Centres from the stored coordinates (the truth), never from the transform gridcast serves.
      const cx = m.coordinates.x;
      const cy = m.coordinates.y;
      const pixels = [
        [0, 0],
        [ny - 1, nx - 1],
        [Math.floor(ny / 2), 3],
        [7, nx - 2],
      ];
      // Pixel centres (from the coordinates) to lon/lat with pyproj, then located by gridcast.
      const centres = pixels.map(([row, col]) => [cx.first + col * cx.step, cy.first + row * cy.step]);
      const py = [
        "import json, sys, pyproj",
        "t = pyproj.Transformer.from_crs(int(sys.argv[2]), 4326, always_xy=True)",
        "print(json.dumps([t.transform(x, y) for x, y in json.loads(sys.argv[1])]))",
      ].join("\n");
      const lonlat = JSON.parse(execFileSync(venv, ["-c", py, JSON.stringify(centres), String(m.epsg)]).toString());
      for (const [i, [lon, lat]] of lonlat.entries()) {
        const q = `lon=${lon}&lat=${lat}&family=${family}&product=map&period=${PERIOD}`;
        const r = await get(`${srv.url}/api/embeddings/locate?${q}`, { "X-API-Key": key });
        assert.equal(r.status, 200, r.body.toString());
        const loc = r.json();
        assert.equal(loc.item, nameOf(family));
        assert.equal(loc.inside, true);
        assert.deepEqual(loc.pixel, { row: pixels[i][0], col: pixels[i][1] }, `pixel ${pixels[i]}`);
      }
    });
  }

  test("sources that disagree, or no geometry at all: refused with the reason, never a made-up transform", async () => {
    for (const family of Object.keys(REFUSED)) {
      const r = await item(nameOf(family));
      assert.equal(r.status, 404, `${family} is not in the catalogue`);
    }
    const list = (await get(`${srv.url}/api/embeddings?limit=1000`, { "X-API-Key": key })).json();
    const names = list.items.map((i: { name: string }) => i.name);
    for (const family of Object.keys(REFUSED)) assert.ok(!names.includes(nameOf(family)), family);
  });
});

describe("axes by name, values as the producer means them", () => {
  for (const family of SERVED) {
    test(`${family}: the .npy is (y, x, feature) and equals the producer's own de-quantization`, async () => {
      const r = await npy(nameOf(family));
      assert.equal(r.status, 200, r.body.toString());
      const want = truth(family);
      const got = parseNpy(r.body);
      assert.equal(got.descr, "<f4");
      assert.deepEqual(got.shape, want.shape);
      assert.equal(want.descr, "<f4");
      if (family === "shard" || family === "rioxr") {
        assert.ok(Buffer.from(got.data).equals(Buffer.from(want.data)), "byte for byte");
      } else {
        assertClose(f32(got.data), f32(want.data), family);
      }
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.equal(field.values, "physical");
      assert.equal(field.dtype, "float32");
      assert.deepEqual(field.dims, ["y", "x", "feature"]);
      const m = (await item(nameOf(family))).json();
      assert.equal(field.stored_dtype, m.values.stored_dtype);
      assert.equal(field.quantization.scheme, m.values.quantization.scheme);
    });
  }

  test("schemes and stored types are stated in the header and the item metadata", async () => {
    const expect: Record<string, [string, string]> = {
      aef: ["signed_power", "int8"],
      tessera: ["scale_array", "int8"],
      ftscale: ["scale_array", "int16"],
      cfpack: ["cf_linear", "int16"],
      rioxr: ["raw", "float32"],
    };
    for (const [family, [scheme, dtype]] of Object.entries(expect)) {
      const m = (await item(nameOf(family))).json();
      assert.equal(m.values.quantization.scheme, scheme, family);
      assert.equal(m.values.stored_dtype, dtype, family);
      assert.equal(m.values.default, "physical");
    }
    const aef = (await item(nameOf("aef"))).json();
    assert.deepEqual([aef.values.quantization.divisor, aef.values.quantization.power], [127.5, 2]);
    assert.deepEqual(aef.values.missing.stored_values, [-128]);
    const tess = (await item(nameOf("tessera"))).json();
    assert.deepEqual(tess.values.quantization.scale_dims, ["y", "x"]);
    const rio = (await item(nameOf("rioxr"))).json();
    assert.deepEqual(rio.latent.axes, { y: "y", x: "x", feature: "band" });
    assert.deepEqual(rio.latent.dims, ["band", "y", "x"]);
  });

  test("the preview is in the same scale as the default .npy", async () => {
    const m = (await item(nameOf("aef"))).json();
    assert.equal(m.preview.values, "physical");
    const all = f32(parseNpy((await npy(nameOf("aef"))).body).data);
    const [, nx, nf] = m.latent.served_shape;
    assert.deepEqual(m.preview.shape, [4, 3, 3]);
    for (let i = 0; i < 4; i++)
      for (let j = 0; j < 3; j++)
        for (let k = 0; k < 3; k++) {
          const want = all[(i * 12 * nx + j * 12) * nf + k];
          assert.equal(m.preview.data[i][j][k], Number(want.toPrecision(7)), `preview[${i}][${j}][${k}]`);
        }
  });

  test("values=raw: the stored values in their stored type, nothing masked", async () => {
    for (const family of ["aef", "tessera"]) {
      const r = await npy(nameOf(family), "values=raw&y_stop=9&feature_start=2&feature_stop=7");
      assert.equal(r.status, 200, r.body.toString());
      const np = numpyLoad(r.body);
      assert.equal(np.dtype, "int8");
      const want = truth(family, "map", true);
      const wantFull = new Int8Array(
        want.data.buffer.slice(want.data.byteOffset, want.data.byteOffset + want.data.byteLength),
      );
      const [, nx, nf] = want.shape;
      const d = parseNpy(r.body).data;
      const got = new Int8Array(d.buffer, d.byteOffset, d.byteLength);
      let k = 0;
      for (let y = 0; y < 9; y++)
        for (let x = 0; x < nx; x++)
          for (let f = 2; f < 7; f++) assert.equal(got[k++], wantFull[(y * nx + x) * nf + f]);
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.deepEqual([field.values, field.dtype, field.stored_dtype], ["raw", "int8", "int8"]);
      assert.equal(field.missing.served_as, "as stored");
    }
  });

  test("feature-first and vector layouts: y_stop slices rows, a (64, 1, 1) vector is one pixel of 64 features", async () => {
    const r = await npy(nameOf("rioxr"), "y_stop=3&x_start=10&x_stop=14&feature_stop=5");
    const got = parseNpy(r.body);
    assert.deepEqual(got.shape, [3, 4, 5]);
    const want = truth("rioxr");
    const [, nx, nf] = want.shape;
    const all = f32(want.data);
    const vals = f32(got.data);
    let k = 0;
    for (let y = 0; y < 3; y++)
      for (let x = 10; x < 14; x++) for (let f = 0; f < 5; f++) assert.equal(vals[k++], all[(y * nx + x) * nf + f]);
    for (const family of VECTORS) {
      const v = await npy(nameOf(family, "vector"));
      assert.equal(v.status, 200, `${family}: ${v.body}`);
      const p = parseNpy(v.body);
      const w = truth(family, "vector");
      assert.deepEqual(p.shape, w.shape);
      assert.equal(p.shape[0] * p.shape[1], 1, family);
      assert.ok(Buffer.from(p.data).equals(Buffer.from(w.data)), family);
    }
    const m = (await item(nameOf("vec1d", "vector"))).json();
    assert.equal(m.transform, null);
    assert.deepEqual(m.latent.served_shape, [1, 1, 64]);
    assert.match(m.geometry_sources[0], /vector item with no geometry/);
  });
});

describe("missing values: xarray's fill_value rule unless the item declares its nodata", () => {
  test("ReLU latent in v3 (fill_value 0): every zero stays a zero", async () => {
    const got = f32(parseNpy((await npy(nameOf("relu3"))).body).data);
    const want = f32(truth("relu3").data);
    const zeros = want.filter((v) => v === 0).length;
    assert.ok(zeros > want.length / 4, "a ReLU latent is about half zeros");
    assert.equal(got.filter((v) => v === 0).length, zeros);
    assert.equal(got.filter(Number.isNaN).length, 0);
    const m = (await item(nameOf("relu3"))).json();
    assert.deepEqual(m.values.missing.stored_values, []);
    assert.match(m.values.missing.rule, /Zarr v3 fill_value is not a missing-value marker/);
  });

  test("ReLU latent in v2 with zarr's default fill_value 0 and nothing declared: masked as xarray masks it, and said so", async () => {
    const got = f32(parseNpy((await npy(nameOf("relu2"))).body).data);
    const want = f32(truth("relu2").data);
    assertClose(got, want, "relu2");
    assert.ok(got.filter(Number.isNaN).length > got.length / 4);
    const m = (await item(nameOf("relu2"))).json();
    assert.deepEqual(m.values.missing.stored_values, [0]);
    assert.match(m.values.missing.rule, /Zarr v2 fill_value/);
  });

  test("declared nodata -128 wins over the v2 fill_value: zeros stay, -128 is NaN", async () => {
    const got = f32(parseNpy((await npy(nameOf("relu2nd"))).body).data);
    const want = f32(truth("relu2nd").data);
    assertClose(got, want, "relu2nd");
    assert.ok(got.filter((v) => v === 0).length > 0);
    assert.equal(got.filter(Number.isNaN).length, (20 + 1) * 8);
    const m = (await item(nameOf("relu2nd"))).json();
    assert.deepEqual(m.values.missing.stored_values, [-128]);
    assert.match(m.values.missing.rule, /declared by the latent's nodata/);
  });
});

describe("sharded v3 with the shard index at the start", () => {
  test("the shard's index is at its start, and the .npy equals zarr-python's read byte for byte", async () => {
    const meta = JSON.parse(readFileSync(join(dirOf("shard"), "latent", "zarr.json"), "utf8"));
    assert.equal(meta.codecs[0].configuration.index_location, "start");
    // The index (4 inner chunks: offset, length pairs; crc32c) is followed at once by the first chunk.
    const fd = openSync(join(dirOf("shard"), "latent", "c", "0", "0", "0"), "r");
    const head = Buffer.alloc(16);
    readSync(fd, head, 0, 16, 0);
    assert.equal(Number(head.readBigUInt64LE(0)), 4 * 16 + 4);
    for (const q of ["", "y_start=13&y_stop=31&x_start=5&x_stop=39&feature_start=3&feature_stop=11"]) {
      const r = await npy(nameOf("shard"), q);
      assert.equal(r.status, 200, r.body.toString());
      const got = parseNpy(r.body);
      const full = truth("shard");
      if (!q) {
        assert.ok(Buffer.from(got.data).equals(Buffer.from(full.data)));
        continue;
      }
      const all = f32(full.data);
      const v = f32(got.data);
      let k = 0;
      for (let y = 13; y < 31; y++)
        for (let x = 5; x < 39; x++) for (let f = 3; f < 11; f++) assert.equal(v[k++], all[(y * 40 + x) * 16 + f]);
    }
  });
});

describe("catalogue completeness", () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [resolve(HERE, "../../bin/gridcast"), ...args], {
      encoding: "utf8",
      maxBuffer: 16 << 20,
    });

  test("inspect and build list every array they do not serve with its reason; build exits 3 unless --allow-skipped; names are stable", () => {
    const ins = cli(["inspect", "--store", storeDir, "--json"]);
    assert.equal(ins.status, 0, ins.stderr);
    const info = JSON.parse(ins.stdout);
    const skipped = new Map<string, string>(
      info.embeddings.skipped.map((s: { path: string; reason: string }) => [s.path, s.reason]),
    );
    for (const [family, reason] of Object.entries(REFUSED)) {
      const p = `embeddings/${family}/rf/v1.0/base/map/${PERIOD}/${TILE}`;
      assert.match(skipped.get(p) ?? "", reason, family);
    }
    assert.match(skipped.get("embeddings/notes/readme") ?? "", /not inside an item group/);
    assert.match(skipped.get(`embeddings/relu3/rf/v1.0/base/map/${PERIOD}/${TILE}/mask`) ?? "", /not served/);
    assert.equal(skipped.size, Object.keys(REFUSED).length + 2);

    const out = mkdtempSync(join(tmpdir(), "gridcast-producers-out-"));
    const out2 = mkdtempSync(join(tmpdir(), "gridcast-producers-out-"));
    try {
      const build = (extra: string[], to = out) =>
        cli(["build", "--store", storeDir, "--out", to, "--max-zoom", "0", "--vars", "t2m", "--json", ...extra]);
      const first = build([]);
      assert.equal(first.status, 3, first.stderr);
      const report = JSON.parse(first.stdout);
      assert.deepEqual(
        report.embeddings.skipped.map((s: { path: string }) => s.path).sort(),
        [...skipped.keys()].sort(),
      );
      const items = JSON.parse(readFileSync(join(out, "current", "embeddings", "items.json"), "utf8")).items;
      assert.equal(items.length, info.embeddings.items);
      for (const f of [...SERVED]) assert.ok(items.includes(nameOf(f)), f);
      for (const f of VECTORS) assert.ok(items.includes(nameOf(f, "vector")), f);
      // A build of its own: into the first output the same build is "nothing new" (exit 4).
      const again = build(["--allow-skipped"], out2);
      assert.equal(again.status, 0, again.stderr);
      assert.deepEqual(
        JSON.parse(readFileSync(join(out2, "current", "embeddings", "items.json"), "utf8")).items,
        items,
      );
    } finally {
      cleanup(out);
      cleanup(out2);
    }
  });
});

describe("strict parameters", () => {
  test("an unknown parameter is 400 naming it, before any read or charge, on every route", async () => {
    const id = parseKeyId(key)!;
    const before = await srv.running.ctx.ledger.balance(id);
    srv.running.ctx.store.backend.reset();
    for (const url of [
      `/api/embeddings/npy/${nameOf("rioxr")}?band_stop=3`,
      `/api/embeddings/npy/${nameOf("rioxr")}?y_stop=3&values=physical&extra=1`,
      `/api/embeddings/item/${nameOf("rioxr")}?verbose=1`,
      "/api/embeddings/locate?lon=9.5&lat=46.5&radius=3",
      "/api/forecast/catalog?foo=1",
    ]) {
      const r = await get(`${srv.url}${url}`, { "X-API-Key": key });
      assert.equal(r.status, 400, url);
      const p = r.json();
      assert.equal(
        p.param,
        /band_stop/.test(url) ? "band_stop" : [...new URL(url, "http://x").searchParams.keys()].at(-1),
      );
      assert.equal(r.headers.get("x-credits-charged"), null);
    }
    assert.deepEqual(srv.running.ctx.store.backend.keysRead(), []);
    const afterBalance = await srv.running.ctx.ledger.balance(id);
    assert.equal(afterBalance, before);
  });
});
