// The addon as a fresh machine builds it: compiled with the blosc, zstd, lz4 and zlib headers
// hidden from the compiler (as on a Debian with no -dev package), linking none of those libraries,
// it decodes what numcodecs writes — two c-blosc versions (Debian's python3-numcodecs and today's
// numcodecs in the xarray + zarr 3 stack) — byte for byte, including BloscLZ, which is its own
// code. A compression library missing at run time leaves its chunks to JavaScript, still exact.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, PYTHON, tempDir } from "../../helpers/harness.ts";
import { zarr3Python } from "../../helpers/zarr3-python.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
type Addon = { decodeSync(src: Uint8Array, dst: Uint8Array): number; version(): string; compressors(): string };

let dir: string;
let addonPath: string;
let buildLog: string;

before(() => {
  dir = tempDir("gridcast-fresh-build-");
  addonPath = join(dir, "gridcast.node");
  const built = spawnSync("bash", ["bin/build-native.sh"], {
    cwd: ROOT,
    env: { ...process.env, GRIDCAST_NATIVE_HIDE_DEV_HEADERS: "1", GRIDCAST_NATIVE_OUT: addonPath },
    encoding: "utf8",
  });
  buildLog = built.stderr;
  assert.equal(built.status, 0, built.stderr);
});
after(() => cleanup(dir));

function load(): Addon {
  const m = { exports: {} as Addon };
  process.dlopen(m, addonPath);
  return m.exports;
}

describe("the addon built without any -dev package", () => {
  test("builds with the compression headers hidden and says in one line which decoder it built", () => {
    assert.match(buildLog, /compiling with the blosc, zstd, lz4 and zlib headers hidden/);
    const line = buildLog.trim().split("\n").at(-1) ?? "";
    assert.match(
      line,
      /^native addon: built .*gridcast\.node: Blosc decoder gridcast C \(blosclz; lz4 \d[^;]*; zstd \d/,
    );
    // No compression library is a link-time dependency: they are opened at run time.
    const deps = execFileSync("ldd", [addonPath], { encoding: "utf8" });
    assert.doesNotMatch(deps, /blosc|zstd|lz4|libz\./, deps);
    assert.match(load().compressors(), /^blosclz,lz4,lz4hc,zlib,zstd$/);
  });

  const writers = [
    ["Debian's numcodecs (c-blosc 1.21.3)", PYTHON],
    ["today's numcodecs (xarray + zarr 3 stack)", zarr3Python()],
  ] as const;
  for (const [label, python] of writers) {
    test(`decodes ${label}'s chunks byte for byte: every compressor, shuffle, type size, long runs, far matches`, {
      skip: !python && "no xarray + zarr 3 client stack here",
    }, () => {
      const out = join(dir, label.replace(/\W+/g, "-"));
      execFileSync(python as string, [join(ROOT, "test/python/blosc_stress.py"), out]);
      const cases = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as { name: string; bytes: number }[];
      const addon = load();
      const seen = new Set<string>();
      for (const c of cases) {
        const enc = readFileSync(join(out, `${c.name}.enc`));
        const raw = readFileSync(join(out, `${c.name}.raw`));
        const got = new Uint8Array(c.bytes);
        assert.equal(addon.decodeSync(enc, got), raw.length, c.name);
        assert.ok(Buffer.from(got).equals(raw), `${c.name} differs`);
        // A flipped byte inside the streams is refused or decodes to the stated size, never more.
        const bad = Buffer.from(enc);
        bad[16 + ((bad.length - 16) >> 1)] ^= 0x5a;
        const n = addon.decodeSync(bad, new Uint8Array(c.bytes));
        assert.ok(n === raw.length || (n < 0 && n !== -103), `${c.name} mutated: ${n}`);
        seen.add(c.name.split("-")[1]);
      }
      assert.deepEqual([...seen].sort(), ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]);
      assert.ok(cases.length > 300);
    });
  }

  test("a compression library missing at run time: its chunks decode in JavaScript, exactly, and the logs say so", () => {
    const out = join(dir, "skip");
    execFileSync(PYTHON, [join(ROOT, "test/python/codec_chunks.py"), out]);
    const script = `
      import { readFileSync } from "node:fs";
      import { join } from "node:path";
      import { nativeDecoderInUse, nativeAddon } from ${JSON.stringify(join(ROOT, "src/native.ts"))};
      import { nativeCodecs } from ${JSON.stringify(join(ROOT, "src/store/codecs/register.ts"))};
      const dir = process.argv[1];
      const cases = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      let decoded = 0, unavailable = 0, viaLibrary = 0;
      for (const c of cases) {
        if (!c.config.id.endsWith("blosc")) continue;
        const { id, ...config } = c.config;
        const enc = new Uint8Array(readFileSync(join(dir, c.name + ".enc")));
        const raw = readFileSync(join(dir, c.name + ".raw"));
        if (nativeAddon().decodeSync(enc, new Uint8Array(raw.length)) === -103) unavailable++;
        // Compressed (not stored) with a compressor other than BloscLZ (code 0 in the flags' top bits).
        if (enc[2] >> 5 !== 0 && (enc[2] & 2) === 0) viaLibrary++;
        const codec = nativeCodecs[id].fromConfig(config, { dataType: c.dtype, shape: c.shape });
        const got = await codec.decode(enc);
        if (!Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(raw)) throw new Error(c.name + " differs");
        decoded++;
      }
      console.log(JSON.stringify({ decoded, unavailable, viaLibrary, line: nativeDecoderInUse(), zstd: typeof nativeAddon().zstdDecode }));
    `;
    const res = spawnSync(process.execPath, ["--input-type=module", "-e", script, out], {
      cwd: ROOT,
      env: { ...process.env, GRIDCAST_NATIVE_SKIP: "lz4,zstd,zlib" },
      encoding: "utf8",
    });
    assert.equal(res.status, 0, res.stderr);
    const got = JSON.parse(res.stdout) as {
      decoded: number;
      unavailable: number;
      viaLibrary: number;
      line: string;
      zstd: string;
    };
    assert.ok(got.decoded > 100, `${got.decoded} chunks`);
    // Exactly the lz4, lz4hc, zstd and zlib chunks went to JavaScript; blosclz stayed in C.
    assert.ok(got.viaLibrary > 40, JSON.stringify(got));
    assert.equal(got.unavailable, got.viaLibrary, JSON.stringify(got));
    assert.match(got.line, /^native, gridcast C \(blosclz; lz4 missing; zstd missing; zlib missing\)$/);
    assert.equal(got.zstd, "undefined");
  });
});
