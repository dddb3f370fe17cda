// /api/forecast/series (the viewer's meteogram) over real HTTP on the sample store: public (no
// key), and the very numbers /point answers (with a key) for the same place, variable and run,
// from the same patch (Munich: the Alps patch under a global layer; the Atlantic: the global
// group), in stored and display units; a derived layer is refused naming its sources; bad input
// is a 4xx problem+json; every answer fits the OpenAPI schema.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Value from "typebox/value";
import { PointSeries } from "../../src/http/routes/weather.ts";
import { get, sampleServer } from "../helpers/harness.ts";

const s = sampleServer(["weather"]);

const series = (q: string) => get(`${s.srv.url}/api/forecast/series?${q}`);
const point = (q: string) => get(`${s.srv.url}/point?${q}`, { "X-API-Key": s.key });

describe("/api/forecast/series", () => {
  for (const [where, lat, lon, region] of [
    ["Munich (the Alps patch answers)", 48.14, 11.58, "alps"],
    ["Paris (the Europe patch answers)", 48.85, 2.35, "europe"],
    ["the mid Atlantic (the global group answers)", 30, -40, null],
  ] as const) {
    for (const v of ["t2m", "tp_1h", "u10"]) {
      test(`${v} at ${where}: /point's numbers, without a key`, async () => {
        const r = await series(`layer=global.${v}&lat=${lat}&lon=${lon}`);
        assert.equal(r.status, 200, r.body.toString());
        const body = r.json();
        assert.ok(Value.Check(PointSeries, body), JSON.stringify([...Value.Errors(PointSeries, body)].slice(0, 3)));
        const p = await point(`var=${v}&lat=${lat}&lon=${lon}&run=${encodeURIComponent(body.run)}`);
        assert.equal(p.status, 200, p.body.toString());
        const want = p.json();
        assert.equal(body.region, region);
        assert.equal(body.region, want.region);
        assert.equal(body.group, want.group);
        assert.deepEqual(body.times, want.times);
        assert.deepEqual(body.values, want.values);
        assert.ok(body.values.length >= 3, "every lead of the run");
        assert.ok(
          body.values.some((x: number | null) => typeof x === "number"),
          "numbers, not only nulls",
        );
        // Display units agree too.
        const shown = (await series(`layer=global.${v}&lat=${lat}&lon=${lon}&units=display`)).json();
        const pointShown = (
          await point(`var=${v}&lat=${lat}&lon=${lon}&run=${encodeURIComponent(body.run)}&units=display`)
        ).json();
        assert.equal(shown.units, pointShown.units);
        assert.deepEqual(shown.values, pointShown.values);
      });
    }
  }

  test("the run asked for is the run answered, and differs from the other run's numbers", async () => {
    const a = (await series("layer=global.t2m&lat=10&lon=20&run=2026-11-20T00:00:00")).json();
    const b = (await series("layer=global.t2m&lat=10&lon=20&run=2026-11-20T12:00:00")).json();
    assert.equal(a.run, "2026-11-20T00:00:00");
    assert.equal(b.run, "2026-11-20T12:00:00");
    assert.notDeepEqual(a.values, b.values);
  });

  test("a derived layer is refused, naming its sources; bad input is a 4xx problem", async () => {
    for (const [q, status, param, text] of [
      ["layer=global.wind_speed&lat=10&lon=20", 400, "layer", /u10 and v10/],
      ["layer=global.nothing&lat=10&lon=20", 404, undefined, /global\.nothing/],
      ["layer=global.t2m&lat=95&lon=20", 400, "lat", /lat/],
      ["layer=global.t2m&lat=10&lon=20&units=furlongs", 400, "units", /furlongs/],
      ["layer=global.t2m&lat=10&lon=20&run=1999-01-01T00:00:00", 404, undefined, /1999/],
    ] as const) {
      const r = await series(q);
      assert.equal(r.status, status, `${q}: ${r.body.toString()}`);
      assert.equal(r.headers.get("content-type"), "application/problem+json", q);
      const body = r.json();
      if (param) assert.equal(body.param, param, q);
      assert.match(JSON.stringify(body), text, q);
      assert.doesNotMatch(r.body.toString(), /\/work\/|\/tmp\/|at .*\.ts:\d+/, "no path or stack trace");
    }
  });
});
