// The /point body is written from text kept per variable and run (pointJson) and a warm request
// is answered without waiting (pointSeries answers at once): the bytes must be exactly JSON.stringify of the
// series the awaited path builds, cold or warm, for every kind of answer, and the ETag the SHA-1
// of those bytes. Over real HTTP against a generated store.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { type PointRequest, type PointSeries, pointJson, pointSeries } from "../../src/forecast/point.ts";
import { isPending } from "../../src/soon.ts";
import { get, sampleServer } from "../helpers/harness.ts";

// A sample store served for this file, with a weather key.
const sample = sampleServer(["weather"]);

const G = "forecast/global";
// Global, regional patches, an alias, an accumulation (intervals), packed int16 with missing
// values, a level, an explicit run: each with the request the server parses from its query.
const CASES: { q: string; req: PointRequest }[] = [
  { q: "lat=-33.9&lon=151.2&var=2t", req: { lat: -33.9, lon: 151.2, var: "2t", group: G } },
  { q: "lat=46.5&lon=10.1&var=t2m", req: { lat: 46.5, lon: 10.1, var: "t2m", group: G } },
  { q: "lat=52.5&lon=13.4&var=t2m", req: { lat: 52.5, lon: 13.4, var: "t2m", group: G } },
  { q: "lat=46.5&lon=10.1&var=u10m", req: { lat: 46.5, lon: 10.1, var: "u10m", group: G } },
  { q: "lat=50&lon=5&var=scaled_tp_1h", req: { lat: 50, lon: 5, var: "scaled_tp_1h", group: G } },
  { q: "lat=0&lon=0&var=tcc", req: { lat: 0, lon: 0, var: "tcc", group: G } },
  { q: "lat=45&lon=7&var=t&level=850", req: { lat: 45, lon: 7, var: "t", group: G, level: 850 } },
  { q: "lat=-60&lon=-100&var=v10&run=0", req: { lat: -60, lon: -100, var: "v10", group: G, run: "0" } },
];

const etagOf = (body: Buffer) => `"${createHash("sha1").update(body).digest("base64url")}"`;

describe("GET /point body", () => {
  test("cold and warm answers are byte for byte JSON.stringify of the awaited series", async () => {
    const { store, registry } = sample.srv.running.ctx;
    // The body as written, not a compressed coding of it (those have an ETag of their own).
    const headers = { "X-API-Key": sample.key, "Accept-Encoding": "identity" };
    for (const { q, req } of CASES) {
      store.cache.invalidate(); // the first request decodes its chunk: the awaited path
      const cold = await get(`${sample.srv.url}/point?${q}`, headers);
      assert.equal(cold.status, 200, `${q}: ${cold.body}`);
      const warm = await get(`${sample.srv.url}/point?${q}`, headers);
      assert.equal(warm.status, 200, q);
      const reference = JSON.stringify(await pointSeries(store, registry, req));
      assert.equal(cold.body.toString("utf8"), reference, `${q} (cold)`);
      assert.equal(warm.body.toString("utf8"), reference, `${q} (warm)`);
      assert.equal(warm.headers.get("etag"), etagOf(warm.body), q);
      assert.equal(warm.headers.get("content-type"), "application/json; charset=utf-8");
      assert.equal(warm.headers.get("cache-control"), "no-store");
      assert.equal(Number(warm.headers.get("content-length")), warm.body.length);
    }
  });

  test("a warm request is answered from the decoded chunk, without reading the store", async () => {
    const url = `${sample.srv.url}/point?lat=12&lon=34&var=t2m`;
    assert.equal((await get(url, { "X-API-Key": sample.key })).status, 200);
    const backend = sample.srv.running.ctx.store.backend;
    backend.reset();
    const hits = sample.srv.running.ctx.store.cache.stats().hits;
    const again = await get(url, { "X-API-Key": sample.key });
    assert.equal(again.status, 200);
    assert.equal(backend.reads.size, 0, `read ${[...backend.reads.keys()]}`);
    assert.equal(sample.srv.running.ctx.store.cache.stats().hits, hits + 1, "one chunk cache hit, counted as before");
  });

  test("a warm series is answered at once, without a promise, for every kind of answer", async () => {
    const { store, registry } = sample.srv.running.ctx;
    // A warm series waits only for a metadata check that is due (each group's, the listing's and
    // the root's every METADATA_CHECK_MS, each on its own clock). Under load one fell due between
    // the awaited series and the repeat (twice in four runs at load 14-24, 2026-11-29): so every
    // check is made afresh first, and a repeat that still met one is tried again. A warm path that
    // never answers at once fails all three tries.
    const TRIES = 3;
    for (const { q, req } of CASES) {
      let at = 0;
      for (; at < TRIES; at++) {
        store.refresh();
        const awaited = await pointSeries(store, registry, req);
        const now = pointSeries(store, registry, req);
        if (isPending(now)) {
          await now;
          continue;
        }
        assert.deepEqual(now, awaited, q);
        break;
      }
      assert.ok(at < TRIES, `${q}: answered with a promise ${TRIES} times`);
    }
  });

  test("If-None-Match on the warm path still answers 304 with the same ETag", async () => {
    const url = `${sample.srv.url}/point?lat=-10&lon=20&var=t2m`;
    const first = await get(url, { "X-API-Key": sample.key });
    const etag = first.headers.get("etag")!;
    const again = await get(url, { "X-API-Key": sample.key, "If-None-Match": etag });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("etag"), etag);
    assert.equal(again.body.length, 0);
  });

  test("errors of the synchronous part are the same problem+json answers", async () => {
    const cases: [string, number, string][] = [
      ["lat=95&lon=0&var=t2m", 400, "lat"],
      ["lat=0&lon=0&var=nope", 404, "var"],
      ["lat=0&lon=0&var=t2m&level=850", 400, "level"],
      ["lat=0&lon=0&var=t2m&run=99", 400, "run"],
      ["lat=0&lon=0&var=t2m&group=forecast/none", 404, "group"],
      ["lat=0&lon=0&var=t2m&lat=1", 400, "lat"],
      ["lat=0x10&lon=0&var=t2m", 400, "lat"],
    ];
    for (const [q, status, param] of cases) {
      for (let i = 0; i < 2; i++) {
        const r = await get(`${sample.srv.url}/point?${q}`, { "X-API-Key": sample.key });
        assert.equal(r.status, status, `${q}: ${r.body}`);
        assert.equal(r.headers.get("content-type"), "application/problem+json", q);
        assert.equal(r.json().param, param, `${q}: ${r.body}`);
      }
    }
  });
});

describe("pointJson", () => {
  const series = async (req: PointRequest): Promise<PointSeries> =>
    pointSeries(sample.srv.running.ctx.store, sample.srv.running.ctx.registry, req);

  test("numbers are written as JSON writes them: shortest text, null for NaN and infinities, 0 for -0", async () => {
    const s = await series({ lat: 50, lon: 5, var: "tp_1h", group: G });
    assert.ok(s.intervals, "an accumulation carries intervals");
    const odd = [
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -0,
      1e21,
      5e-7,
      0.1 + 0.2,
      null,
      3.4028234663852886e38,
    ];
    const values = s.values.map((_, i) => odd[i % odd.length]);
    const t = { ...s, values, lat: -0, grid_lon: 1e-7 };
    assert.equal(pointJson(t), JSON.stringify(t));
    assert.equal(pointJson(s), JSON.stringify(s));
  });

  test("pieces are rebuilt for other lead hours or temporal objects; foreign series are serialised in full", async () => {
    const s = await series({ lat: 46.5, lon: 10.1, var: "t2m", group: G });
    assert.equal(pointJson(s), JSON.stringify(s));
    const otherLeads = { ...s, lead_hours: [...s.lead_hours, 999] };
    assert.equal(pointJson(otherLeads), JSON.stringify(otherLeads));
    const otherTemporal = { ...s, temporal: { ...s.temporal, description: "changed" } };
    assert.equal(pointJson(otherTemporal), JSON.stringify(otherTemporal));
    assert.equal(pointJson(s), JSON.stringify(s), "and back");
    const otherRun = { ...s, run: "1999-01-01T00:00:00" };
    assert.equal(pointJson(otherRun), JSON.stringify(otherRun));
    const otherTimes = { ...s, times: [...s.times] };
    assert.equal(pointJson(otherTimes), JSON.stringify(otherTimes));
    const withMembers = { ...s, member: 0, members: [{ member: 0, values: s.values }] };
    assert.equal(pointJson(withMembers), JSON.stringify(withMembers));
    const odd = { ...s, units: undefined as unknown as string, region: 'a "quoted" \u2028 name' };
    assert.equal(pointJson(odd), JSON.stringify(odd));
  });
});
