// The publishing decisions on their own: which codec chains pass through and how they are spelled
// in each view, what the fill value means in each view, and which Range headers are honoured.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { parseRange } from "../../src/http/byte-reply.ts";
import { base64Double, cfDecoding } from "../../src/store/cf.ts";
import type { NodeMeta } from "../../src/store/store.ts";
import { compress } from "../../src/zarr-publish/chunk-codec.ts";
import { planEncoding } from "../../src/zarr-publish/encoding.ts";
import { planFill as planFillWith } from "../../src/zarr-publish/fill.ts";
import { PYTHON } from "../helpers/harness.ts";

type Json = Record<string, unknown>;

function v3(codecs: Json[], dtype = "float32", fill: unknown = "NaN", attrs: Json = {}): NodeMeta {
  return {
    kind: "array",
    format: 3,
    path: "forecast/x/a",
    attrs,
    raw: { "zarr.json": {} },
    array: { shape: [4, 4], chunks: [2, 2], dtype, fill_value: fill, dimension_names: ["lat", "lon"], codecs },
  };
}

function v2(zarray: Json, codecs: Json[], attrs: Json = {}): NodeMeta {
  return {
    kind: "array",
    format: 2,
    path: "forecast/x/a",
    attrs: { ...attrs, _ARRAY_DIMENSIONS: ["lat", "lon"] },
    raw: { ".zarray": zarray },
    array: {
      shape: [4, 4],
      chunks: [2, 2],
      dtype: "int16",
      fill_value: zarray.fill_value,
      dimension_names: ["lat", "lon"],
      codecs,
    },
  };
}

const bytes = (endian = "little") => ({ name: "bytes", configuration: { endian } });

describe("encoding", () => {
  test("zstd passes through; its v3-only checksum flag is not in the v2 compressor", () => {
    const e = planEncoding(v3([bytes(), { name: "zstd", configuration: { level: 5, checksum: true } }]));
    assert.equal(e.passthrough, true);
    assert.deepEqual(e.v2Compressor, { id: "zstd", level: 5 });
    assert.deepEqual(e.v3Codecs[1], { name: "zstd", configuration: { level: 5, checksum: true } });
  });

  test("blosc passes through: v2 spells shuffle as a number and has no typesize", () => {
    const e = planEncoding(
      v3([
        bytes(),
        {
          name: "blosc",
          configuration: { cname: "zstd", clevel: 4, shuffle: "bitshuffle", typesize: 4, blocksize: 0 },
        },
      ]),
    );
    assert.equal(e.passthrough, true);
    assert.deepEqual(e.v2Compressor, { id: "blosc", cname: "zstd", clevel: 4, shuffle: 2, blocksize: 0 });
    const back = planEncoding(
      v2({ order: "C", fill_value: 0 }, [
        bytes(),
        { name: "blosc", configuration: { id: "blosc", cname: "lz4", clevel: 5, shuffle: -1, blocksize: 0 } },
      ]),
    );
    assert.deepEqual(back.v3Codecs[1], {
      name: "blosc",
      configuration: { cname: "lz4", clevel: 5, shuffle: "shuffle", typesize: 2, blocksize: 0 },
    });
  });

  test("big-endian bytes pass through as such", () => {
    const e = planEncoding(v3([bytes("big"), { name: "gzip", configuration: { level: 6 } }]));
    assert.equal(e.passthrough, true);
    assert.equal(e.endian, "big");
    assert.deepEqual(e.v3Codecs, [bytes("big"), { name: "gzip", configuration: { level: 6 } }]);
  });

  test("chains without a v2 equivalent are re-encoded as little-endian bytes + zstd", () => {
    const chains: NodeMeta[] = [
      v3([{ name: "sharding_indexed", configuration: { chunk_shape: [1, 1], codecs: [bytes()] } }]),
      v3([bytes(), { name: "zstd", configuration: { level: 3 } }, { name: "crc32c" }]),
      v3([{ name: "transpose", configuration: { order: [1, 0] } }, bytes()]),
      v3([bytes(), { name: "lz4", configuration: {} }]),
      v2({ order: "C", fill_value: 0 }, [
        { name: "numcodecs.delta", configuration: { id: "delta" } },
        bytes(),
        { name: "zlib", configuration: { id: "zlib" } },
      ]),
      v2({ order: "F", fill_value: 0 }, [bytes(), { name: "zstd", configuration: { id: "zstd", level: 1 } }]),
    ];
    for (const m of chains) {
      const e = planEncoding(m);
      assert.equal(e.passthrough, false, JSON.stringify(m.array?.codecs));
      assert.equal(e.v2Compressor?.id, "zstd");
      assert.deepEqual(
        e.v3Codecs.map((c) => c.name),
        ["bytes", "zstd"],
      );
    }
  });

  test("a re-encoded blosc fill chunk is a frame numcodecs decodes", async () => {
    const values = Int16Array.from({ length: 64 }, (_, i) => i - 20);
    const frame = await compress(new Uint8Array(values.buffer), { id: "blosc" }, 2);
    const script =
      "import sys,numcodecs,numpy;print(list(numpy.frombuffer(numcodecs.Blosc().decode(bytes.fromhex(sys.argv[1])),'<i2')))";
    const { stdout } = await promisify(execFile)(PYTHON, ["-c", script, Buffer.from(frame).toString("hex")]);
    assert.deepEqual(JSON.parse(stdout), [...values]);
  });
});

/** The fill plan of an array, from the decoding the store layer reads it with. */
const planFill = (m: NodeMeta) => planFillWith(m, cfDecoding(m.attrs, m.array!.dtype, m.array!.fill_value, m.format));

describe("fill values", () => {
  test("v3 integer fill 0 without _FillValue: no missing marker in v2, unwritten chunks served filled", () => {
    const f = planFill(v3([bytes()], "int32", 0, { units: "hours" }));
    assert.equal(f.v2Fill, null);
    assert.equal(f.v3Fill, 0);
    assert.equal(f.v2ServesAbsent, true);
  });

  test("v3 packed integers: v2 fill_value is the CF _FillValue, moved out of the v2 attributes", () => {
    const f = planFill(v3([bytes()], "int16", -32767, { scale_factor: 0.5, _FillValue: -32767 }));
    assert.equal(f.v2Fill, -32767);
    assert.equal(f.v2ServesAbsent, false);
    assert.deepEqual(f.v2Attrs, { scale_factor: 0.5 });
    assert.deepEqual(f.v3Attrs, { scale_factor: 0.5, _FillValue: -32767 });
  });

  test("v3 float NaN fill: NaN in both views, unwritten chunks stay absent", () => {
    const f = planFill(v3([bytes()], "float32", "NaN", { _FillValue: "NaN" }));
    assert.ok(Number.isNaN(f.v2Fill!));
    assert.equal(f.v2ServesAbsent, false);
    // v3 readers (xarray + zarr 3) get the float _FillValue base64-encoded, as they write it.
    assert.deepEqual(f.v3Attrs, { _FillValue: "AAAAAAAA+H8=" });
  });

  test("v3 float fill in any form: base64 for v3 readers, the number as v2 fill_value", () => {
    for (const form of [9.999e20, base64Double(9.999e20), [9.999e20]]) {
      const f = planFill(v3([bytes()], "float32", "NaN", { _FillValue: form, missing_value: [1, 9.999e20] }));
      assert.equal(f.v2Fill, Math.fround(9.999e20), JSON.stringify(form));
      assert.deepEqual(f.v3Attrs, { _FillValue: base64Double(Math.fround(9.999e20)), missing_value: 1 });
      assert.deepEqual(f.v2Attrs, { missing_value: 1 });
    }
  });

  test("v2 fill_value becomes _FillValue for v3 readers", () => {
    const f = planFill(v2({ order: "C", fill_value: -9999 }, [bytes()], { units: "K" }));
    assert.equal(f.v2Fill, -9999);
    assert.equal(f.v3Fill, -9999);
    assert.deepEqual(f.v3Attrs, { units: "K", _FillValue: -9999 });
    assert.deepEqual(f.v2Attrs, { units: "K" });
  });
});

test("Range headers", () => {
  assert.deepEqual(parseRange("bytes=0-9", 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange("bytes=90-", 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange("bytes=-10", 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange("bytes=-500", 100), { start: 0, end: 99 });
  assert.deepEqual(parseRange("bytes=50-5000", 100), { start: 50, end: 99 });
  assert.equal(parseRange("bytes=100-", 100), "unsatisfiable");
  assert.equal(parseRange("bytes=-0", 100), "unsatisfiable");
  assert.equal(parseRange("bytes=0-0", 0), "unsatisfiable");
  // Ignored (whole body): other units, several ranges, reversed, malformed.
  for (const h of [undefined, "items=0-1", "bytes=0-1,5-6", "bytes=9-1", "bytes=-", "bytes=a-b"]) {
    assert.equal(parseRange(h, 100), undefined, String(h));
  }
});
