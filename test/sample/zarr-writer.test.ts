import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { bitRound, CLOUD_PACKING, packFraction } from "../../src/sample/quantize.ts";
import { type Format, type TypedArr, ZarrWriter } from "../../src/sample/zarr-writer.ts";

const dir = mkdtempSync(join(tmpdir(), "gridcast-zarr-writer-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const readJson = (rel: string) => JSON.parse(readFileSync(join(dir, rel), "utf8"));

async function writeArrays(format: Format) {
  const w = new ZarrWriter(join(dir, `v${format}`), 3);
  const g = w.group("grp", format, { title: "t" });
  // 5 × 7 in chunks of 2 × 3: edge chunks on both axes are partial and stored padded.
  const f32 = Float32Array.from({ length: 35 }, (_, i) => (i % 6 === 0 ? Number.NaN : i * 0.5));
  await g
    .array("f32", { shape: [5, 7], chunks: [2, 3], dtype: "float32", dims: ["y", "x"], fill: "NaN" })
    .writeAll(f32);
  const i16 = Int16Array.from({ length: 35 }, (_, i) => i - 17);
  await g.array("i16", { shape: [5, 7], chunks: [4, 4], dtype: "int16", dims: ["y", "x"], fill: -32767 }).writeAll(i16);
  const i64 = BigInt64Array.from([494_352n, 494_364n, -3n]);
  await g
    .array("i64", { shape: [3], chunks: [2], dtype: "int64", dims: ["t"], fill: format === 3 ? 0 : null })
    .writeAll(i64);
  g.close();
  await w.close();
  return { w, f32, i16, i64 };
}

async function readBack(format: Format, name: string): Promise<TypedArr> {
  const loc = zarr.root(new FileSystemStore(join(dir, `v${format}`))).resolve(`grp/${name}`);
  const arr = format === 3 ? await zarr.open.v3(loc, { kind: "array" }) : await zarr.open.v2(loc, { kind: "array" });
  return (await zarr.get(arr)).data as TypedArr;
}

const same = (a: ArrayLike<unknown>, b: ArrayLike<unknown>) =>
  assert.deepEqual(
    Array.from(a, (v) => (Number.isNaN(v) ? "NaN" : v)),
    Array.from(b, (v) => (Number.isNaN(v) ? "NaN" : v)),
  );

for (const format of [3, 2] as const) {
  describe(`zarr v${format} writer`, () => {
    const written = writeArrays(format);

    test("zarrita reads every dtype back, including padded edge chunks", async () => {
      const { f32, i16, i64 } = await written;
      same(await readBack(format, "f32"), f32);
      same(await readBack(format, "i16"), i16);
      same(await readBack(format, "i64"), i64);
    });

    test("metadata documents follow the format", async () => {
      const { w } = await written;
      assert.ok(w.files > 0 && w.bytes > 0);
      if (format === 3) {
        const a = readJson("v3/grp/f32/zarr.json");
        assert.equal(a.node_type, "array");
        assert.equal(a.fill_value, "NaN");
        assert.deepEqual(a.dimension_names, ["y", "x"]);
        assert.deepEqual(a.chunk_key_encoding, { name: "default", configuration: { separator: "/" } });
        assert.deepEqual(
          a.codecs.map((c: { name: string }) => c.name),
          ["bytes", "zstd"],
        );
        assert.deepEqual(a.codecs[1].configuration, { level: 3, checksum: false });
        const grp = readJson("v3/grp/zarr.json");
        assert.equal(grp.consolidated_metadata.kind, "inline");
        assert.equal(grp.consolidated_metadata.must_understand, false);
        assert.deepEqual(Object.keys(grp.consolidated_metadata.metadata).sort(), ["f32", "i16", "i64"]);
        assert.deepEqual(grp.consolidated_metadata.metadata.i16, readJson("v3/grp/i16/zarr.json"));
        // Chunk keys: c/<i>/<j>
        assert.ok(readFileSync(join(dir, "v3/grp/f32/c/2/2")).byteLength > 0);
      } else {
        const a = readJson("v2/grp/f32/.zarray");
        assert.equal(a.dtype, "<f4");
        assert.deepEqual(a.compressor, { id: "zstd", level: 3 });
        assert.equal(a.filters, null);
        assert.equal(a.order, "C");
        assert.equal(a.dimension_separator, ".");
        assert.equal(readJson("v2/grp/i64/.zarray").fill_value, null);
        assert.deepEqual(readJson("v2/grp/f32/.zattrs")._ARRAY_DIMENSIONS, ["y", "x"]);
        const zm = readJson("v2/grp/.zmetadata");
        assert.equal(zm.zarr_consolidated_format, 1);
        assert.deepEqual(zm.metadata["i16/.zarray"], readJson("v2/grp/i16/.zarray"));
        assert.deepEqual(zm.metadata[".zgroup"], { zarr_format: 2 });
        assert.ok(readFileSync(join(dir, "v2/grp/f32/2.2")).byteLength > 0);
      }
    });
  });
}

test("a writer that is never closed does not keep the process alive", async () => {
  const script = `
    import { ZarrWriter } from ${JSON.stringify(new URL("../../src/sample/zarr-writer.ts", import.meta.url).href)};
    const w = new ZarrWriter(${JSON.stringify(join(dir, "unclosed"))}, 1);
    const a = w.group("", 3).array("a", { shape: [2], chunks: [2], dtype: "float32", dims: ["x"], fill: "NaN" });
    await a.writeChunk([0], new Float32Array(2));
    await w.flush();`;
  const code = await new Promise<number | null>((resolve) => {
    const child = execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 20_000 }, () => {});
    child.on("exit", (c) => resolve(c));
  });
  assert.equal(code, 0);
  assert.ok(readFileSync(join(dir, "unclosed/a/c/0")).byteLength > 0);
});

test("a chunk of the wrong size or type is refused", async () => {
  const w = new ZarrWriter(join(dir, "bad"), 1);
  const a = w.group("", 3).array("a", { shape: [4], chunks: [2], dtype: "float32", dims: ["x"], fill: "NaN" });
  assert.throws(() => a.writeChunk([0], new Float32Array(3)));
  assert.throws(() => a.writeChunk([0], new Float64Array(2)));
});

test("bit rounding keeps NaN and stays within half a unit of the last kept bit", () => {
  const vals = Float32Array.from([Number.NaN, 273.15, -0.001234, 101325, 0, 1e-7]);
  const orig = Float32Array.from(vals);
  bitRound(vals, 10);
  assert.ok(Number.isNaN(vals[0]));
  for (let i = 1; i < vals.length; i++) {
    const tol = Math.abs(orig[i]) * 2 ** -11;
    assert.ok(Math.abs(vals[i] - orig[i]) <= tol, `${orig[i]} -> ${vals[i]}`);
    // The dropped mantissa bits are zero.
    assert.equal(new Uint32Array(Float32Array.of(vals[i]).buffer)[0] & 0x1fff, 0);
  }
  assert.notEqual(vals[1], orig[1]);
});

test("cloud packing maps 0..1 inside int16 and NaN to the fill value", () => {
  assert.equal(packFraction(Number.NaN), -32767);
  for (const v of [0, 0.25, 0.5, 1]) {
    const raw = packFraction(v);
    assert.ok(raw > -32767 && raw <= 32766);
    const back = raw * CLOUD_PACKING.scale_factor + CLOUD_PACKING.add_offset;
    assert.ok(back >= 0 && back <= 1 && Math.abs(back - v) < 1e-4, `${v} -> ${back}`);
  }
});
