// Store-reading slots are shared fairly: one key with slow exports from one address holds at most
// all but a share of them (the attack: 32 slow exports of one 0-credit weather key held
// every slot, and /point and /readyz of everyone else answered 503). The greedy key gets 503 +
// Retry-After naming its share; another client's /point is served and /readyz stays ready. Real
// slow readers over loopback (test/python/raw_client.py, stopped after the headers).
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { BIG_EXPORT, bigStore } from "../helpers/big-store.ts";
import { cleanup, getFrom, PYTHON, type TestServer, testServer, until } from "../helpers/harness.ts";

const CLIENT = join(import.meta.dirname, "../python/raw_client.py");
const SLOTS = 8;
// A quarter of the slots: what is kept for others while one key or address holds more.
const SHARE = 2;
let storeDir: string;
let srv: TestServer;

before(async () => {
  storeDir = await bigStore();
  srv = await testServer(storeDir, { max_heavy_requests: SLOTS, chunk_cache_mb: 0 });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** A GET from `from` whose client stops reading after the first bytes; killed to leave. */
function staller(path: string, key: string, from: string): { proc: ChildProcess; status: Promise<string> } {
  const u = new URL(srv.url);
  const proc = spawn(PYTHON, [CLIENT, u.hostname, u.port, path, "stall", `X-API-Key: ${key}`], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, RAW_CLIENT_FROM: from },
  });
  const status = new Promise<string>((ok) => {
    let out = "";
    proc.stdout!.on("data", (d) => {
      out += String(d);
      if (out.includes("\n")) ok(out.split("\n")[0]);
    });
    proc.once("close", () => ok(out.split("\n")[0] || "none"));
  });
  return { proc, status };
}

/** One GET from `from`, read whole. */
const fetchFrom = (path: string, from: string, key?: string) => getFrom(srv.url, path, from, key);

const inFlight = () => srv.running.ctx.metrics.inFlight;

test("one key's slow exports take all but a share of the slots; others are served and /readyz stays ready", async () => {
  const greedy = await srv.key(["weather"], 0);
  const other = await srv.key(["weather"], 0);
  const holders = Array.from({ length: SLOTS - SHARE }, () => staller(BIG_EXPORT, greedy, "127.0.0.31"));
  try {
    for (const h of holders) assert.match(await h.status, /^HTTP\/1\.1 200/);
    assert.equal(inFlight(), SLOTS - SHARE);
    // The greedy key is refused, naming its share: from its own address, and from another.
    for (const from of ["127.0.0.31", "127.0.0.32"]) {
      const r = await fetchFrom("/point?lat=10&lon=10&var=t2m", from, greedy);
      assert.equal(r.status, 503, r.body);
      assert.equal(r.retry, "1");
      const problem = JSON.parse(r.body);
      assert.equal(problem.type, "/problems/busy");
      assert.match(problem.detail, new RegExp(`this key holds ${SLOTS - SHARE} of the ${SLOTS} store-reading slots`));
    }
    // Another key from the greedy address is refused for the address's share.
    const viaAddress = await fetchFrom("/point?lat=10&lon=10&var=t2m", "127.0.0.31", other);
    assert.equal(viaAddress.status, 503);
    assert.match(JSON.parse(viaAddress.body).detail, /this address holds/);
    // Everyone else is served, again and again, and the instance says it is ready.
    for (let i = 0; i < 5; i++) {
      const r = await fetchFrom("/point?lat=10&lon=10&var=t2m", "127.0.0.33", other);
      assert.equal(r.status, 200, r.body);
      const ready = await fetchFrom("/readyz", "127.0.0.34");
      assert.equal(ready.status, 200, ready.body);
      assert.equal(JSON.parse(ready.body).checks.capacity, `${SLOTS - SHARE}/${SLOTS}`);
    }
  } finally {
    for (const h of holders) h.proc.kill("SIGKILL");
  }
  await until("the slots back", () => inFlight() === 0, 20_000);
});
