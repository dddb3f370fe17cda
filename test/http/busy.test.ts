// The cap on concurrent store-reading requests: beyond it, 503 with Retry-After, while cheap
// routes keep answering.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

let storeDir: string;
let upstream: Server;
let srv: TestServer;
// Chunk reads are held until the test lets them go, so "a request is in flight" does not depend
// on how fast the machine is.
let held: (() => void)[] = [];
let holding = false;
let chunkAsked: () => void = () => {};

before(async () => {
  storeDir = await sampleStore();
  // An object store whose chunks arrive only when the test releases them.
  upstream = createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
    try {
      const body = readFileSync(join(storeDir, rel));
      if (holding && /\/c\//.test(rel)) {
        held.push(() => res.end(body));
        chunkAsked();
      } else res.end(body);
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((ok) => upstream.listen(0, "127.0.0.1", () => ok()));
  const port = (upstream.address() as { port: number }).port;
  srv = await testServer(`http://127.0.0.1:${port}/`, { max_heavy_requests: 1 });
});
after(async () => {
  await srv.close();
  upstream.closeAllConnections();
  upstream.close();
  cleanup(storeDir);
});

test("a second heavy request while one runs gets 503 + Retry-After; light routes still answer", async () => {
  const key = await srv.key(["weather"]);
  const H = { "X-API-Key": key };
  await get(`${srv.url}/api/export`, H); // metadata discovered, no chunk read yet
  const asked = new Promise<void>((ok) => {
    chunkAsked = ok;
  });
  holding = true;
  const slow = get(`${srv.url}/point?lat=10&lon=10&var=t2m`, H);
  await asked; // the first request holds the only slot, waiting for its chunk
  const busy = await get(`${srv.url}/point?lat=-10&lon=10&var=u10`, H);
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "1");
  assert.equal(busy.json().type, "/problems/busy");
  assert.equal((await get(`${srv.url}/healthz`)).status, 200);
  assert.equal((await get(`${srv.url}/api/export`, H)).status, 200);
  holding = false;
  for (const release of held) release();
  held = [];
  assert.equal((await slow).status, 200);
  assert.equal((await get(`${srv.url}/point?lat=-10&lon=10&var=u10`, H)).status, 200);
});
