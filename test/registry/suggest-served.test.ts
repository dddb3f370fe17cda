// Suggestions come from what the store serves: an unknown or absent name on /point and on
// `build --vars` is answered with the variables of that group or store that are near it in
// meaning (the words of their names, long names and CF standard names) or in spelling, never
// with registered names the store does not have.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { suggestAmong } from "../../src/registry/suggest.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

const BIN = resolve(import.meta.dirname, "../../bin/gridcast");
let storeDir: string;
let srv: TestServer;
let key: string;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

const point = (q: string) => get(`${srv.url}/point?lat=46&lon=10&${q}`, { "X-API-Key": key });

describe("suggestions from the store", () => {
  test("by meaning and by spelling, canonical names only", () => {
    const served = [
      { name: "u10", long_name: "10 metre U wind component", standard_name: "eastward_wind", aliases: ["10u"] },
      { name: "v10", long_name: "10 metre V wind component", standard_name: "northward_wind", aliases: ["10v"] },
      { name: "t2m", long_name: "2 metre temperature", standard_name: "air_temperature", aliases: ["2t"] },
      { name: "tp_1h", long_name: "Total precipitation over 1 hour", aliases: [] },
    ];
    assert.deepEqual(suggestAmong("wind", served), ["u10", "v10"]);
    assert.deepEqual(suggestAmong("Precip", served), ["tp_1h"]);
    assert.deepEqual(suggestAmong("temp", served), ["t2m"]);
    assert.deepEqual(suggestAmong("2tm", served), ["t2m"]);
    assert.deepEqual(suggestAmong("geopotential", served), []);
  });

  test("/point: var=wind and var=precip suggest the group's own variables", async () => {
    const wind = await point("var=wind&group=forecast/global");
    assert.equal(wind.status, 404);
    const w = wind.json();
    assert.deepEqual(w.suggestions, ["u10", "v10"]);
    assert.match(w.detail, /"wind" is not a variable of forecast\/global; did you mean u10 or v10\?/);
    const precip = (await point("var=precip&group=forecast/global")).json();
    assert.deepEqual(precip.suggestions, ["tp_1h"]);
    // Misspelt: still only served names.
    const typo = (await point("var=2tt&group=forecast/global")).json();
    assert.ok(typo.suggestions.includes("t2m"), typo.suggestions.join());
    for (const s of [...w.suggestions, ...precip.suggestions, ...typo.suggestions]) {
      assert.ok(
        s in { msl: 1, t: 1, t2m: 1, tcc: 1, tp_1h: 1, u10: 1, v10: 1 },
        `${s} is not served by forecast/global`,
      );
    }
  });

  test("/point: var=temperature (pressure levels) without a level also names the surface temperature", async () => {
    const r = await point("var=temperature&group=forecast/global");
    assert.equal(r.status, 400);
    const body = r.json();
    assert.match(body.detail, /t needs a level \(one of 500, 850\); at the surface: t2m/);
    assert.deepEqual(body.suggestions, ["t2m"]);
  });

  test("/point: a registered variable the group lacks suggests the group's nearest", async () => {
    const r = await point("var=msl&group=forecast/alps");
    assert.equal(r.status, 404);
    assert.ok(Array.isArray(r.json().suggestions));
    assert.ok(r.json().available.includes("t2m"));
  });

  test("build --vars temp / wind: exit 2 naming what this store draws", () => {
    const out = resolve(storeDir, "../out-suggest");
    for (const [name, want] of [
      ["temp", /did you mean t or t2m\?/],
      ["wind", /did you mean u10, v10 or wind_speed\?|did you mean (\S+, )*u10, v10/],
    ] as const) {
      const r = spawnSync(process.execPath, [BIN, "build", "--store", storeDir, "--out", out, "--vars", name], {
        encoding: "utf8",
        env: { ...process.env, GRIDCAST_DEBUG: "" },
      });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`--vars: "${name}" is not a variable of this store's map layers`));
      assert.match(r.stderr, want);
    }
  });
});
