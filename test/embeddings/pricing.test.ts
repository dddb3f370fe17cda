// The same information costs the same whatever values= asks for: a .npy slice is priced, limited
// and (when cut short) settled by the size of its physical answer (float32, 4 bytes a value), so
// values=raw of an int8 or int16 latent costs what the physical slice costs and meets the same
// 413. Quantized items written by Debian's xarray + zarr 2; real HTTP over loopback; a real
// client (Python's socket, small receive buffer) cutting a raw body short.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { tileGeometry } from "../../src/embeddings/mgrs.ts";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { cleanup, get, PYTHON, sampleStore, type TestServer, until } from "../helpers/harness.ts";
import { numpyLoad, publishedServer } from "./fixtures.ts";

const MIB = 1024 * 1024;
const BASE = 2;
const TILE = "32TNS";
const PERIOD = "2024_01_01_2024_12_31";
const nameOf = (family: string) => `${family}~rf~v1.0~base~map~${PERIOD}~${TILE}`;
const I8 = nameOf("i8"); // (520, 512, 32) int8
const I16 = nameOf("i16"); // (260, 256, 32) int16

let storeDir: string;
let srv: TestServer;
let scratch: string;

before(async () => {
  storeDir = await sampleStore();
  scratch = mkdtempSync(join(tmpdir(), "gridcast-pricing-"));
  const g = tileGeometry(TILE);
  const spec = join(scratch, "spec.json");
  writeFileSync(
    spec,
    JSON.stringify({
      tile: TILE,
      period: PERIOD,
      epsg: g.epsg,
      easting: g.origin.easting,
      northing: g.origin.northing,
    }),
  );
  execFileSync(PYTHON, [join(import.meta.dirname, "pricing_items.py"), storeDir, spec], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  srv = await publishedServer(storeDir, { credit_cost_npy_base: BASE });
});
after(async () => {
  await srv?.close();
  cleanup(storeDir, scratch);
});

const npy = (name: string, q: string, k: string) =>
  get(`${srv.url}/api/embeddings/npy/${name}?${q}`, { "X-API-Key": k });
/** base + one credit per started MiB of float32 values. */
const price = (values: number) => BASE + Math.ceil((values * 4) / MIB);

describe("values=raw and values=physical cost the same", () => {
  const cases: [string, string, number, string][] = [
    // item, ranges, values in the slice, stored dtype
    [I8, "y_stop=33", 33 * 512 * 32, "int8"], // 2.06 MiB physical, 0.52 MiB raw
    [I8, "y_stop=200&x_start=7&x_stop=300&feature_stop=17", 200 * 293 * 17, "int8"],
    [I8, "y_start=8&y_stop=520&feature_stop=32", 512 * 512 * 32, "int8"], // exactly 32 MiB physical
    [I16, "y_stop=130", 130 * 256 * 32, "int16"],
  ];
  for (const [name, q, count, dtype] of cases) {
    test(`${name.split("~")[0]} ${q}: same credits, same usage cost, raw body in ${dtype}`, async () => {
      const charged: number[] = [];
      for (const values of ["physical", "raw"]) {
        const k = await srv.key(["embeddings"], 1000);
        const r = await npy(name, `${q}&values=${values}`, k);
        assert.equal(r.status, 200, r.body.toString().slice(0, 300));
        const np = numpyLoad(r.body);
        assert.equal(np.dtype, values === "raw" ? dtype : "float32");
        assert.equal(
          np.shape.reduce((a, b) => a * b, 1),
          count,
        );
        charged.push(Number(r.headers.get("x-credits-charged")));
        const [row] = await srv.running.ctx.ledger.usage(parseKeyId(k)!);
        assert.equal(row.cost, price(count), `${values}: usage row`);
        assert.equal(row.bytes, r.body.length);
      }
      assert.deepEqual(charged, [price(count), price(count)], "physical then raw");
    });
  }

  test("one value over the limit is 413 for both, with the same physical size; nothing charged", async () => {
    const k = await srv.key(["embeddings"], 1000);
    const id = parseKeyId(k)!;
    // 520 × 512 × 32 values: 32.5 MiB as float32, over the default 32 MiB; 8.125 MiB as stored int8.
    const sizes: number[] = [];
    for (const values of ["physical", "raw"]) {
      const r = await npy(I8, `values=${values}`, k);
      assert.equal(r.status, 413, `${values}: ${r.body.toString().slice(0, 300)}`);
      const p = r.json() as { requested_bytes: number; detail: string };
      sizes.push(p.requested_bytes);
      assert.match(p.detail, /32\.500 MiB of float32 physical values/);
    }
    assert.deepEqual(sizes, [520 * 512 * 32 * 4, 520 * 512 * 32 * 4]);
    assert.equal(await srv.running.ctx.ledger.balance(id), 1000);
    assert.equal((await srv.running.ctx.ledger.usage(id)).length, 0);
  });
});

/** Reads `stop` body bytes with a 4 KiB receive buffer, then resets the connection. */
const CUTTER = String.raw`
import json, socket, struct, sys
host, port, path, key, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\n\r\n" % (path, key)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
head, body = buf.split(b"\r\n\r\n", 1)
got = len(body)
while got < stop:
    chunk = s.recv(min(4096, stop - got))
    if not chunk:
        break
    got += len(chunk)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print(json.dumps({"head": head.decode(), "got": got}))
`;

describe("a values=raw slice cut short", () => {
  test("settled per MiB of physical values sent: an int8 body pays a credit per 256 KiB", async (t) => {
    const k = await srv.key(["embeddings"], 1000);
    const id = parseKeyId(k)!;
    const count = 512 * 512 * 32; // 8 MiB of int8, 32 MiB as float32
    const full = price(count);
    const u = new URL(srv.url);
    const read = MIB; // far short of the 8 MiB body even with the server's send buffer full (4 MiB at most)
    const r: { head: string; got: number } = await new Promise((ok, fail) =>
      execFile(
        PYTHON,
        ["-c", CUTTER, u.hostname, u.port, `/api/embeddings/npy/${I8}?y_stop=512&values=raw`, k, String(read)],
        (err, out) => (err ? fail(err) : ok(JSON.parse(out))),
      ),
    );
    assert.match(r.head, new RegExp(`x-credits-charged: ${full}\\r`, "i"));
    const total = Number(/content-length: (\d+)/i.exec(r.head)![1]);
    const header = total - count;
    await until("the settlement", () => srv.logs.some((l) => l.event === "settled" && l.key_id === id));
    const [row] = await srv.running.ctx.ledger.usage(id);
    t.diagnostic(`read ${r.got} of ${total}; kernel took ${row.bytes}; charged ${row.cost} of ${full}`);
    assert.ok(row.bytes < total, "cut short");
    // Each 256 KiB of int8 sent is one MiB of physical values.
    assert.equal(row.cost, BASE + Math.ceil((row.bytes - header) / (MIB / 4)));
    assert.ok(row.cost >= BASE + Math.ceil((read - header) / (MIB / 4)), "never less than what the client read");
    assert.ok(row.cost < full);
    assert.equal(await srv.running.ctx.ledger.balance(id), 1000 - row.cost);
  });
});
