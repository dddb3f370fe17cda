// Keyed routes other than /data pace a key past its rate instead of refusing it: a request that
// finds the bucket empty waits for the next token up to rate_wait_ms (10 s by default) and is
// answered; only a token further away than that is refused, at once, with 429 + Retry-After.
// A client that reads /data and then asks for an export (the README's Python example) at a key's
// default 10 requests/s is therefore slowed, not refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DEFAULTS } from "../../src/config.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir); // rate_wait_ms as shipped
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

describe("keyed routes pace a key past its rate", () => {
  test("a burst beyond the bucket is answered 200, every request, on /point and exports", async () => {
    // One token at a time, two a second: six requests at once need about 2.5 s of waiting.
    const key = await srv.key(["weather"], 0, { rate: 2, burst: 1 });
    const H = { "X-API-Key": key };
    const urls = [
      `${srv.url}/point?lat=1&lon=1&var=t2m`,
      `${srv.url}/point?lat=2&lon=2&var=t2m`,
      `${srv.url}/api/export`,
      `${srv.url}/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=1&lat_min=0&lat_max=10&lon_min=0&lon_max=10`,
      `${srv.url}/point?lat=3&lon=3&var=t2m`,
      `${srv.url}/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=1&lat_min=10&lat_max=20&lon_min=0&lon_max=10`,
    ];
    const got = await Promise.all(urls.map((u) => get(u, H)));
    assert.deepEqual(
      got.map((r) => r.status),
      urls.map(() => 200),
      got.map((r, i) => `${urls[i]}: ${r.status} ${r.status === 200 ? "" : r.body.toString()}`).join("\n"),
    );
  });

  test("a token further away than rate_wait_ms is refused at once: 429, Retry-After past the bound", async () => {
    const key = await srv.key(["weather"], 0, { rate: 1 / 60, burst: 1 });
    const H = { "X-API-Key": key };
    const url = `${srv.url}/point?lat=1&lon=1&var=t2m`;
    assert.equal((await get(url, H)).status, 200);
    const refused = await get(url, H);
    assert.equal(refused.status, 429);
    const wait = Number(refused.headers.get("retry-after"));
    assert.ok(wait * 1000 > DEFAULTS.rate_wait_ms, `Retry-After ${wait} s lies beyond the wait bound`);
    assert.equal(refused.json().retry_after, wait);
  });
});
