// Queries are parsed once per route and query text and the accepted ones kept: a query text
// refused is refused again every time, one accepted answers alike every time, and the key gate
// still reads the query to word its refusal of a key sent in the URL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { get, sampleServer } from "../helpers/harness.ts";

const sample = sampleServer(["weather"]);
const H = () => ({ "X-API-Key": sample.key });

describe("parsed queries kept by text", () => {
  test("a refused query is refused again; an accepted one answers alike", async () => {
    for (let i = 0; i < 3; i++) {
      const bad = await get(`${sample.srv.url}/point?lat=100&lon=0&var=t2m`, H());
      assert.equal(bad.status, 400, `attempt ${i}`);
      assert.equal(bad.json().param, "lat");
      const unknown = await get(`${sample.srv.url}/point?lat=10&lon=0&var=t2m&x=1`, H());
      assert.equal(unknown.status, 400, `attempt ${i}`);
      assert.equal(unknown.json().param, "x");
    }
    const first = await get(`${sample.srv.url}/point?lat=10&lon=0&var=t2m`, H());
    assert.equal(first.status, 200, first.body.toString());
    for (let i = 0; i < 3; i++) {
      const again = await get(`${sample.srv.url}/point?lat=10&lon=0&var=t2m`, H());
      assert.equal(again.status, 200);
      assert.deepEqual(again.json(), first.json());
    }
    // The same parameters in another order are another text: parsed, and the same answer.
    const reordered = await get(`${sample.srv.url}/point?var=t2m&lon=0&lat=10`, H());
    assert.deepEqual(reordered.json(), first.json());
  });

  test("a key in the URL is refused as such, with an accepted query text or not", async () => {
    await get(`${sample.srv.url}/point?lat=10&lon=0&var=t2m`, H());
    const inUrl = await get(`${sample.srv.url}/point?lat=10&lon=0&var=t2m&api_key=${sample.key}`);
    assert.equal(inUrl.status, 401);
    assert.match(inUrl.json().detail, /only in the X-API-Key header/);
    const none = await get(`${sample.srv.url}/point?lat=10&lon=0&var=t2m`);
    assert.equal(none.status, 401);
    assert.match(none.json().detail, /needs an API key/);
  });
});
