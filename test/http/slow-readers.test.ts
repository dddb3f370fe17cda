// Steady slow readers are never cut; readers below the floor are. Real clients over loopback: a
// raw Python socket with an 8 KiB receive buffer reading at a fixed rate, so the body cannot sit
// in the kernel's buffers and the server's send queue stays full the whole time, which is what
// once made the watchdog cut readers that were taking bytes all along. With send_stall_ms at
// 1 s, a body of a few MiB read at a few hundred kB/s lasts many stall windows. (The bodies are
// larger than what the kernels buffer for one connection, about 3.3 MB here with the reader's
// small receive buffer: a smaller one would be taken by the kernel whole and never watched.)
import assert from "node:assert/strict";
import { type ChildProcess, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { publishedServer, writeBigItem } from "../embeddings/fixtures.ts";
import { cleanup, PYTHON, sampleStore, type TestServer, until } from "../helpers/harness.ts";

const MIB = 1024 * 1024;
const STALL_MS = 1000;
const FLOOR = 2048;
const FILE_BYTES = 6 * MIB;
// 128 × 128 × 96 float32: 6 MiB of data, a whole slice costs 1 + 6.
const SHAPE: [number, number, number] = [128, 128, 96];
const SLICE_COST = 7;
const READER = join(import.meta.dirname, "../helpers/paced_reader.py");

let storeDir: string;
let srv: TestServer;
let big: string;

before(async () => {
  storeDir = await sampleStore();
  big = (await writeBigItem(storeDir, SHAPE)).name;
  srv = await publishedServer(storeDir, { send_stall_ms: STALL_MS, send_floor_bytes_per_s: FLOOR });
  writeFileSync(join(srv.running.ctx.settings.out, "current", "big.bin"), randomBytes(FILE_BYTES));
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

interface Read {
  head: string;
  got: number;
  seconds: number;
}

/** One GET of `path` read at `rate` bytes a second to its end (or until the server closes). */
function paced(path: string, rate: number, headers: string[] = []): Promise<Read> & { stop(): void } {
  const u = new URL(srv.url);
  let child: ChildProcess | undefined;
  const done = new Promise<Read>((ok, fail) => {
    child = execFile(PYTHON, [READER, u.hostname, u.port, path, String(rate), ...headers], (err, out) =>
      err ? fail(err) : ok(JSON.parse(out)),
    );
  });
  return Object.assign(done, { stop: () => child?.kill() });
}

const declared = (r: Read) => Number(/content-length: (\d+)/i.exec(r.head)?.[1]);

test("steady readers at several rates above the floor get every byte; one below it is cut", async (t) => {
  const key = await srv.key(["embeddings"], 100);
  const id = parseKeyId(key)!;
  const logsBefore = srv.logs.length;
  // Below the floor: a window of 1 s passes with fewer than FLOOR bytes taken. Once cut, it is
  // stopped (the kernel would otherwise trickle it the bytes it still holds for an hour).
  const crawler = paced("/big.bin", FLOOR / 4);
  const crawled = crawler.catch(() => undefined);
  const [half, mega, npy] = await Promise.all([
    paced("/big.bin", 500_000),
    paced("/big.bin", 1_000_000),
    paced(`/api/embeddings/npy/${big}`, 500_000, [`X-API-Key: ${key}`]),
  ]);
  await until("the crawler cut", () => srv.logs.slice(logsBefore).some((l) => l.event === "response-stall"));
  crawler.stop();
  await crawled;
  for (const [name, r] of [
    ["500 kB/s", half],
    ["1 MB/s", mega],
    [".npy at 500 kB/s", npy],
  ] as const) {
    t.diagnostic(`${name}: ${r.got} bytes in ${r.seconds.toFixed(1)} s`);
    assert.match(r.head, /^HTTP\/1.1 200/, name);
    assert.equal(r.got, declared(r), `${name}: the whole body`);
  }
  // Long enough to span several stall windows: the old rule would have had its chance to cut.
  assert.ok(half.seconds > 4 * (STALL_MS / 1000), `${half.seconds} s`);
  const mine = srv.logs.slice(logsBefore);
  const stalls = mine.filter((l) => l.event === "response-stall");
  assert.equal(stalls.length, 1, "only the reader below the floor is cut");
  assert.equal(stalls[0].route, "static");
  // The metered slice went out whole and is charged in full, never settled down.
  assert.match(npy.head, new RegExp(`x-credits-charged: ${SLICE_COST}`, "i"));
  await until("the slice's access log line", () => mine.some((l) => l.key_id === id && !l.aborted));
  assert.ok(!srv.logs.some((l) => l.event === "settled" && l.key_id === id));
  const [row] = await srv.running.ctx.ledger.usage(id);
  assert.equal(row.cost, SLICE_COST);
});
