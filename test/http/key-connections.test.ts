// Connections are shared fairly per key as well as per address: one key spread over several
// addresses, each within the per-address cap, holding slow downloads cannot take the connections
// another client needs. Once a request names its key, its connection counts for that key; a key
// holding its share (a quarter of max_connections) gets more only while a quarter stays free, and
// a request over that is answered 503 + Retry-After naming the key's share, with Connection:
// close. Another key from another address is then served, and /readyz stays ready. Real steady
// slow readers (test/helpers/paced_reader.py, 8 KiB receive buffer) over loopback.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { publish, writeBigItem } from "../embeddings/fixtures.ts";
import { cleanup, getFrom, PYTHON, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

const READER = join(import.meta.dirname, "../helpers/paced_reader.py");
const MAX = 16;
const SHARE = 4; // a quarter of MAX
const PER_ADDRESS = 6;
let storeDir: string;
let big: string;
let srv: TestServer;

before(async () => {
  storeDir = await sampleStore();
  big = (await writeBigItem(storeDir, [128, 128, 128])).name; // 8 MiB .npy
  srv = await testServer(storeDir, {
    max_connections: MAX,
    max_connections_per_client: PER_ADDRESS,
    // Slots are not the limit here: connections are.
    max_heavy_requests: 64,
  });
  await publish(srv, storeDir);
});
after(async () => {
  await srv?.close();
  cleanup(storeDir);
});

/** A steady slow download (16 kB/s) from `from`; its JSON line once it ends. */
function slowDownload(key: string, from: string): { proc: ChildProcess; done: Promise<{ head: string }> } {
  const u = new URL(srv.url);
  const proc = spawn(PYTHON, [READER, u.hostname, u.port, `/api/embeddings/npy/${big}`, "16000", `X-API-Key: ${key}`], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PACED_FROM: from },
  });
  const done = new Promise<{ head: string }>((ok) => {
    let out = "";
    proc.stdout!.on("data", (d) => (out += String(d)));
    proc.once("close", () => ok(out.trim() ? JSON.parse(out.trim().split("\n")[0]) : { head: "none" }));
  });
  return { proc, done };
}

/** One GET from `from` on its own connection, read whole. */
const fetchFrom = (path: string, from: string, key?: string) => getFrom(srv.url, path, from, key);

test("one key from three addresses holds at most all but a share of the connections; another key is served", async (t) => {
  const greedy = await srv.key(["embeddings"], 1_000_000);
  const greedyId = parseKeyId(greedy)!;
  const other = await srv.key(["weather"], 0);
  const gate = srv.running.ctx.metrics.connections!;
  // 3 addresses × 5 downloads: each address within its cap of 6, 15 of the 16 connections in all.
  const readers = ["127.0.0.2", "127.0.0.3", "127.0.0.4"].flatMap((from) =>
    Array.from({ length: 5 }, () => slowDownload(greedy, from)),
  );
  const ended: { head: string }[] = [];
  for (const r of readers) void r.done.then((d) => ended.push(d));
  try {
    // Every greedy request is either downloading (holding a store-reading slot) or was refused.
    await until(
      "every greedy request placed",
      () => srv.running.ctx.metrics.inFlight + ended.length === readers.length,
    );
    const held = gate.heldByKey(greedyId);
    assert.equal(held, srv.running.ctx.metrics.inFlight, "each download's connection counts for its key");
    t.diagnostic(`greedy key holds ${held} connections; ${ended.length} refused`);
    assert.ok(held <= MAX - SHARE, `the key holds ${held} of ${MAX}`);
    assert.ok(ended.length >= SHARE - 1, `${ended.length} refused`);
    for (const e of ended) {
      assert.match(e.head, /^HTTP\/1\.1 503 /, e.head);
      assert.match(e.head, /\r\nretry-after: 1\r\n/i);
      assert.match(e.head, /\r\nconnection: close\r\n/i);
    }
    // Another key, from another address, with a burst of its own connections: all served.
    const burst = await Promise.all(
      Array.from({ length: SHARE - 1 }, () => fetchFrom("/point?lat=10&lon=10&var=t2m", "127.0.0.5", other)),
    );
    assert.deepEqual(
      burst.map((r) => r.status),
      Array(SHARE - 1).fill(200),
      burst.map((r) => r.body.slice(0, 200)).join("\n"),
    );
    const ready = await fetchFrom("/readyz", "127.0.0.6");
    assert.equal(ready.status, 200, ready.body);
    // The greedy key's own next request, from yet another address, is refused naming its share
    // while it holds its share and fewer than a share are free.
    const more = await fetchFrom(`/api/embeddings/item/${big}`, "127.0.0.7", greedy);
    if (gate.heldByKey(greedyId) >= SHARE && gate.max - gate.open - 1 < SHARE) {
      assert.equal(more.status, 503, more.body);
      assert.match(JSON.parse(more.body).detail, /this key holds \d+ of the 16 connections, more than its share of 4/);
    }
    const metrics = await fetchFrom("/metrics", "127.0.0.6");
    const refusedByKey = Number(/gridcast_connections_refused_total\{cap="key"\} (\d+)/.exec(metrics.body)?.[1]);
    assert.ok(refusedByKey >= ended.length, metrics.body);
  } finally {
    for (const r of readers) r.proc.kill("SIGKILL");
  }
  await until("the greedy connections closed", () => gate.heldByKey(greedyId) === 0);
});
