// Static files (viewer, vendor bundles, the published build) are served by sirv, which answers a
// suffix range (bytes=-n) with the first n+1 bytes labelled as the whole object's first bytes: a
// 206 with wrong content. The app drops suffix ranges for static files, so the client gets the
// whole file (200), which RFC 9110 allows and every client handles.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;
const LEAFLET = resolve(import.meta.dirname, "../../node_modules/leaflet/dist/leaflet.js");

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

test("a suffix range on a static file never gets the wrong bytes", async () => {
  const whole = readFileSync(LEAFLET);
  const r = await get(`${srv.url}/vendor/leaflet/leaflet.js`, { Range: "bytes=-100" });
  if (r.status === 206) {
    assert.ok(
      r.body.equals(whole.subarray(whole.length - 100)),
      `206 with other bytes: ${r.headers.get("content-range")}`,
    );
  } else {
    assert.equal(r.status, 200);
    assert.ok(r.body.equals(whole));
  }
  // Ordinary ranges still work.
  const part = await get(`${srv.url}/vendor/leaflet/leaflet.js`, { Range: "bytes=10-19" });
  assert.equal(part.status, 206);
  assert.ok(part.body.equals(whole.subarray(10, 20)));
});
