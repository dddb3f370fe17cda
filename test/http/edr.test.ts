// OGC API – EDR over the sample store, on a real server over loopback: every position equals
// /point's answer for the same place (regional patch choice, aliases, levels, runs, units),
// cube and area equal the .npy export of the same nodes, radius holds exactly the nodes within
// the distance (computed here apart from the server), a trajectory samples the node nearest each
// vertex, CSV and GeoJSON carry CoverageJSON's numbers; keys and rate limits as /point's; every
// bad input the issue names is a 400 naming its parameter; 413 above the export cap; 204 for an
// empty intersection.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { type Cell, cellKey, covCells, csvCells, distanceKm, geoCells, npy, present } from "./edr/helpers.ts";

let store: string;
let srv: TestServer;
let key: string;
let H: Record<string, string>;
const G = "/edr/collections/forecast~global";

before(async () => {
  store = await sampleStore();
  srv = await testServer(store);
  key = await srv.key(["weather"]);
  H = { "X-API-Key": key };
});
after(async () => {
  await srv.close();
  cleanup(store);
});

const enc = (s: string) => encodeURIComponent(s);
async function edr(path: string, headers = H) {
  const r = await get(`${srv.url}${path}`, headers);
  return r;
}
async function ok(path: string, headers = H) {
  const r = await edr(path, headers);
  assert.equal(r.status, 200, `${path}: ${r.body.toString().slice(0, 400)}`);
  return r;
}
async function point(q: string) {
  const r = await get(`${srv.url}/point?${q}`, H);
  assert.equal(r.status, 200, r.body.toString());
  return r.json();
}

describe("EDR metadata", () => {
  test("landing page links self, service-desc, service-doc, conformance and data; all public", async () => {
    const r = await ok("/edr", {});
    const rels = r.json().links.map((l: { rel: string }) => l.rel);
    for (const rel of ["self", "service-desc", "service-doc", "conformance", "data"])
      assert.ok(rels.includes(rel), rel);
    const desc = r.json().links.find((l: { rel: string }) => l.rel === "service-desc").href;
    assert.equal((await get(`${srv.url}${desc}`)).status, 200);
    const conf = (await ok("/edr/conformance", {})).json().conformsTo;
    for (const c of ["core", "collections", "json", "geojson", "covjson", "instances", "queries"]) {
      assert.ok(conf.includes(`http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/${c}`), c);
    }
  });

  test("one collection per forecast group, ~ ids, extent, parameters with units and meaning, queries", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    const groups = models.groups ?? models.forecast ?? models.models;
    const list = (await ok("/edr/collections", {})).json().collections;
    assert.deepEqual(
      list.map((c: { id: string }) => c.id).sort(),
      groups.map((g: { id: string }) => g.id.replace("/", "~")).sort(),
    );
    const c = (await ok(G, {})).json();
    const g = groups.find((x: { id: string }) => x.id === "forecast/global");
    assert.deepEqual(c.extent.spatial.bbox, [g.bbox]);
    assert.deepEqual(c.extent.vertical.values, ["500", "850"]);
    const runs: string[] = g.runs;
    const leads: number[] = g.lead_hours;
    const lastValid = new Date(Date.parse(`${runs.at(-1)}Z`) + leads.at(-1)! * 3_600_000).toISOString();
    assert.equal(c.extent.temporal.interval[0][1], lastValid.replace(".000Z", "Z"));
    assert.equal(c.parameter_names.t2m.unit.symbol, "K");
    assert.equal(c.parameter_names.t2m.measurementType.method, "instantaneous");
    assert.ok(c.parameter_names.t2m.aliases.includes("2t"));
    assert.equal(c.parameter_names.tp_1h.temporal.kind, "accumulated");
    assert.equal(c.parameter_names.tp_1h.measurementType.method, "sum");
    assert.equal(c.parameter_names.tp_1h.measurementType.duration, "PT1H");
    assert.deepEqual(c.parameter_names.t.extent.vertical.values, ["500", "850"]);
    assert.deepEqual(c.crs, ["CRS84"]);
    assert.deepEqual(c.output_formats, ["CoverageJSON", "GeoJSON", "CSV"]);
    for (const q of ["position", "radius", "area", "cube", "trajectory", "instances"]) {
      assert.ok(c.data_queries[q]?.link?.href, q);
    }
    const inst = (await ok(`${G}/instances`, {})).json().instances.map((i: { id: string }) => i.id);
    assert.deepEqual(inst.sort(), runs.map((r) => `${r}Z`).sort());
    const one = (await ok(`${G}/instances/${enc(inst[0])}`, {})).json();
    assert.equal(one.id, inst[0]);
    assert.equal((await edr("/edr/collections/forecast~nowhere", {})).status, 404);
  });
});

describe("EDR position = /point", () => {
  // Munich lies in the Alps patch (/point answers from it), 0,0 only in the global group.
  const places = [
    [11.6, 48.1],
    [0, 0],
    [-73.3, 40.9],
    [8.55, 47.37],
  ];

  test("POINT: each parameter (aliases too) equals /point's series, node and valid times", async () => {
    for (const [lon, lat] of places) {
      for (const [asked, canonical] of [
        ["2t", "t2m"],
        ["tp_1h", "tp_1h"],
        ["msl", "msl"],
      ]) {
        const r = await ok(`${G}/position?coords=${enc(`POINT(${lon} ${lat})`)}&parameter-name=${asked}`);
        assert.equal(r.headers.get("content-type"), "application/vnd.cov+json");
        const doc = r.json();
        assert.equal(doc.type, "Coverage");
        assert.equal(doc.domain.domainType, "PointSeries");
        const p = await point(`lat=${lat}&lon=${lon}&var=${canonical}`);
        assert.deepEqual(doc.domain.axes.x.values, [p.grid_lon]);
        assert.deepEqual(doc.domain.axes.y.values, [p.grid_lat]);
        assert.deepEqual(
          doc.domain.axes.t.values,
          p.times.map((t: string) => `${t}Z`),
        );
        assert.deepEqual(doc.ranges[canonical].values, p.values);
        assert.equal(doc.parameters[canonical].unit.symbol, p.units);
      }
    }
  });

  test("MULTIPOINT: a CoverageCollection, one coverage per point in order, each equal to /point", async () => {
    const wkt = `MULTIPOINT(${places.map(([x, y]) => `(${x} ${y})`).join(",")})`;
    const doc = (await ok(`${G}/position?coords=${enc(wkt)}&parameter-name=t2m,u10&crs=CRS84`)).json();
    assert.equal(doc.type, "CoverageCollection");
    assert.equal(doc.coverages.length, places.length);
    for (const [i, [lon, lat]] of places.entries()) {
      const c = doc.coverages[i];
      for (const v of ["t2m", "u10"]) {
        const p = await point(`lat=${lat}&lon=${lon}&var=${v}`);
        assert.deepEqual(c.ranges[v].values, p.values, `${v} at ${lon},${lat}`);
        assert.deepEqual(c.domain.axes.x.values, [p.grid_lon]);
      }
    }
  });

  test("z picks levels of a levelled parameter, each equal to /point with level; without z every level", async () => {
    const p500 = await point("lat=47&lon=11&var=t&level=500");
    const p850 = await point("lat=47&lon=11&var=t&level=850");
    const one = (await ok(`${G}/position?coords=${enc("POINT(11 47)")}&parameter-name=t&z=850`)).json();
    assert.deepEqual(one.domain.axes.z.values, [850]);
    assert.deepEqual(one.ranges.t.values, p850.values);
    const both = (await ok(`${G}/position?coords=${enc("POINT(11 47)")}&parameter-name=t`)).json();
    assert.deepEqual(both.domain.axes.z.values, [500, 850]);
    assert.deepEqual(both.ranges.t.axisNames, ["t", "z", "y", "x"]);
    const cells = covCells(both);
    for (const [i, t] of p500.times.entries()) {
      assert.equal(cells.find((c) => c.t === `${t}Z` && c.z === 500)!.value, p500.values[i]);
      assert.equal(cells.find((c) => c.t === `${t}Z` && c.z === 850)!.value, p850.values[i]);
    }
    assert.equal((await edr(`${G}/position?coords=${enc("POINT(11 47)")}&parameter-name=t&z=700`)).status, 400);
    const range = (await ok(`${G}/position?coords=${enc("POINT(11 47)")}&parameter-name=t&z=${enc("600/900")}`)).json();
    assert.deepEqual(range.domain.axes.z.values, [850]);
    assert.deepEqual(range.ranges.t.values, p850.values);
  });

  test("datetime: an instant, a closed interval and open ends keep exactly the matching valid times", async () => {
    const p = await point("lat=20&lon=30&var=t2m");
    const times = p.times.map((t: string) => `${t}Z`);
    const ask = async (dt: string) =>
      covCells((await ok(`${G}/position?coords=${enc("POINT(30 20)")}&parameter-name=t2m&datetime=${enc(dt)}`)).json());
    const at = await ask(times[2]);
    assert.deepEqual(
      at.map((c) => [c.t, c.value]),
      [[times[2], p.values[2]]],
    );
    const mid = await ask(`${times[1]}/${times[3]}`);
    assert.deepEqual(
      mid.map((c) => c.value),
      p.values.slice(1, 4),
    );
    assert.deepEqual(
      (await ask(`../${times[1]}`)).map((c) => c.value),
      p.values.slice(0, 2),
    );
    assert.deepEqual(
      (await ask(`${times.at(-2)}/..`)).map((c) => c.value),
      p.values.slice(-2),
    );
  });

  test("an instance answers its run as /point&run does; units as /point's units option", async () => {
    const inst = (await ok(`${G}/instances`, {}))
      .json()
      .instances.map((i: { id: string }) => i.id)
      .sort();
    const older = inst[0];
    const p = await point(`lat=10&lon=20&var=t2m&run=${older.replace("Z", "")}`);
    const doc = (
      await ok(`${G}/instances/${enc(older)}/position?coords=${enc("POINT(20 10)")}&parameter-name=t2m`)
    ).json();
    assert.deepEqual(doc.ranges.t2m.values, p.values);
    assert.equal(doc.domain.axes.t.values[0], `${p.times[0]}Z`);
    const latest = await point("lat=10&lon=20&var=t2m");
    assert.notDeepEqual(latest.values, p.values, "the two runs differ, so the instance really chose one");
    const d = await point("lat=10&lon=20&var=t2m&units=display");
    const dd = (await ok(`${G}/position?coords=${enc("POINT(20 10)")}&parameter-name=t2m&units=display`)).json();
    assert.deepEqual(dd.ranges.t2m.values, d.values);
    assert.equal(dd.parameters.t2m.unit.symbol, d.units);
  });
});

describe("EDR cube, area, radius = the .npy export's nodes", () => {
  async function exportBox(v: string, b: [number, number, number, number], leads: [number, number], extra = "") {
    const r = await get(
      `${srv.url}/api/export/forecast~global/npy?var=${v}&time_index=1&lead_start=${leads[0]}&lead_stop=${leads[1]}` +
        `&lon_min=${b[0]}&lat_min=${b[1]}&lon_max=${b[2]}&lat_max=${b[3]}${extra}`,
      H,
    );
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    const axis = (a: { first: number; step: number; count: number; values?: number[] }) =>
      a.values ?? Array.from({ length: a.count }, (_, i) => Math.round((a.first + i * a.step) * 1e9) / 1e9);
    return { ...npy(r.body), lats: axis(field.lat), lons: axis(field.lon), times: field.lead_time.valid_times };
  }
  const runOne = async () => {
    const inst = (await ok(`${G}/instances`, {}))
      .json()
      .instances.map((i: { id: string }) => i.id)
      .sort();
    return inst[1];
  };

  test("cube: every node and time of the box equals the export's (a level too)", async () => {
    const run = await runOne();
    const want = await exportBox("t2m", [5, 40, 21, 52], [1, 3]);
    const base = `${G}/instances/${enc(run)}/cube?bbox=5,40,21,52&parameter-name=t2m`;
    const times = want.times.map((t: string) => `${t}Z`);
    const doc = (await ok(`${base}&datetime=${enc(`${times[0]}/${times[2]}`)}`)).json();
    assert.deepEqual(doc.domain.axes.x.values, want.lons);
    assert.deepEqual(doc.domain.axes.y.values, want.lats);
    assert.deepEqual(doc.domain.axes.t.values, times);
    assert.deepEqual(doc.ranges.t2m.shape, want.shape);
    assert.deepEqual(doc.ranges.t2m.values, Array.from(want.data));
    const shown = await exportBox("t2m", [5, 40, 21, 52], [0, 6], "&units=display");
    const inC = (await ok(`${base}&units=display`)).json();
    assert.deepEqual(inC.ranges.t2m.values, Array.from(shown.data));
    assert.equal(inC.parameters.t2m.unit.symbol, "°C");
    const lvl = await exportBox("t", [5, 40, 21, 52], [0, 6], "&level=500");
    const z = (await ok(`${G}/instances/${enc(run)}/cube?bbox=5,40,21,52&parameter-name=t&z=500`)).json();
    assert.deepEqual(z.ranges.t.values, Array.from(lvl.data));
    assert.deepEqual(z.domain.axes.z.values, [500]);
  });

  test("area: nodes inside the polygon equal the export's, every other node is left out", async () => {
    const run = await runOne();
    // A triangle whose edges pass between nodes; the test decides inside/outside on its own.
    const tri = [
      [3.3, 39.3],
      [24.7, 41.1],
      [9.1, 53.7],
    ];
    const wkt = `POLYGON((${[...tri, tri[0]].map(([x, y]) => `${x} ${y}`).join(",")}))`;
    const inside = (lon: number, lat: number) => {
      let c = false;
      for (let i = 0, j = 2; i < 3; j = i++) {
        const [xi, yi] = tri[i];
        const [xj, yj] = tri[j];
        if (yi > lat !== yj > lat && lon < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) c = !c;
      }
      return c;
    };
    const want = await exportBox("t2m", [3.3, 39.3, 24.7, 53.7], [0, 6]);
    const doc = (await ok(`${G}/instances/${enc(run)}/area?coords=${enc(wkt)}&parameter-name=t2m`)).json();
    const got = present(covCells(doc));
    const expect = new Map<string, number>();
    const [nt, ny, nx] = want.shape;
    for (let t = 0; t < nt; t++)
      for (let y = 0; y < ny; y++)
        for (let x = 0; x < nx; x++) {
          if (!inside(want.lons[x], want.lats[y])) continue;
          const cell: Cell = { param: "t2m", lon: want.lons[x], lat: want.lats[y], t: `${want.times[t]}Z`, value: 0 };
          expect.set(cellKey(cell), want.data[(t * ny + y) * nx + x]);
        }
    assert.ok(expect.size > 10 && expect.size < nt * ny * nx, `a real subset (${expect.size})`);
    assert.deepEqual(got, expect);
  });

  test("radius: exactly the nodes within the great-circle distance (km, mi, m), with the export's values", async () => {
    const run = await runOne();
    const [lon0, lat0] = [12.2, 46.7];
    const want = await exportBox("msl", [-5, 30, 30, 62], [0, 0]);
    const times = want.times.map((t: string) => `${t}Z`);
    for (const [within, units, km] of [
      [600, "km", 600],
      [400, "mi", 400 * 1.609344],
      [350000, "m", 350],
    ] as const) {
      const doc = (
        await ok(
          `${G}/instances/${enc(run)}/radius?coords=${enc(`POINT(${lon0} ${lat0})`)}&within=${within}&within-units=${units}` +
            `&parameter-name=msl&datetime=${enc(times[0])}`,
        )
      ).json();
      const got = present(covCells(doc));
      const expect = new Map<string, number>();
      const [, ny, nx] = want.shape;
      for (let y = 0; y < ny; y++)
        for (let x = 0; x < nx; x++) {
          if (distanceKm(lat0, lon0, want.lats[y], want.lons[x]) > km) continue;
          const cell: Cell = { param: "msl", lon: want.lons[x], lat: want.lats[y], t: times[0], value: 0 };
          expect.set(cellKey(cell), want.data[y * nx + x]);
        }
      assert.ok(expect.size > 3, `${units}: ${expect.size} nodes within`);
      assert.deepEqual(got, expect, `${within} ${units}`);
    }
  });

  test("an empty intersection is 204: no valid time, or no node in the box", async () => {
    const far = await edr(`${G}/position?coords=${enc("POINT(1 2)")}&datetime=2001-01-01T00:00:00Z`);
    assert.equal(far.status, 204);
    assert.equal(far.body.length, 0);
    const between = await edr(`${G}/cube?bbox=10.1,45.1,10.2,45.2&parameter-name=t2m`);
    assert.equal(between.status, 204);
    const tiny = await edr(`${G}/radius?coords=${enc("POINT(11 45)")}&within=1&within-units=km&parameter-name=t2m`);
    assert.equal(tiny.status, 204);
  });
});

describe("EDR trajectory", () => {
  test("one sample per vertex from the node nearest it; LINESTRING M at the vertex's valid time", async () => {
    const verts = [
      [11.6, 48.1],
      [30.1, 20.2],
      [-60.3, -10.9],
    ];
    const wkt = `LINESTRING(${verts.map(([x, y]) => `${x} ${y}`).join(",")})`;
    const doc = (await ok(`${G}/trajectory?coords=${enc(wkt)}&parameter-name=t2m`)).json();
    assert.equal(doc.coverages.length, verts.length, "no points added between vertices");
    const series: { times: string[]; values: (number | null)[] }[] = [];
    for (const [i, [lon, lat]] of verts.entries()) {
      const p = await point(`lat=${lat}&lon=${lon}&var=t2m`);
      series.push(p);
      assert.deepEqual(doc.coverages[i].ranges.t2m.values, p.values);
      assert.deepEqual(doc.coverages[i].domain.axes.x.values, [p.grid_lon]);
    }
    const secs = (t: string) => Date.parse(`${t}Z`) / 1000;
    const m = `LINESTRING M(${verts.map(([x, y], i) => `${x} ${y} ${secs(series[i].times[i + 1])}`).join(",")})`;
    const timed = (await ok(`${G}/trajectory?coords=${enc(m)}&parameter-name=t2m`)).json();
    for (const [i] of verts.entries()) {
      assert.deepEqual(timed.coverages[i].domain.axes.t.values, [`${series[i].times[i + 1]}Z`]);
      assert.deepEqual(timed.coverages[i].ranges.t2m.values, [series[i].values[i + 1]]);
    }
    // LINESTRING Z: each vertex at its own level.
    const z = (await ok(`${G}/trajectory?coords=${enc("LINESTRING Z(11 47 500, 30 20 850)")}&parameter-name=t`)).json();
    for (const [i, [lon, lat, level]] of [
      [11, 47, 500],
      [30, 20, 850],
    ].entries()) {
      const p = await point(`lat=${lat}&lon=${lon}&var=t&level=${level}`);
      assert.deepEqual(z.coverages[i].domain.axes.z.values, [level]);
      assert.deepEqual(z.coverages[i].ranges.t.values, p.values);
    }
    const off = await edr(`${G}/trajectory?coords=${enc("LINESTRING M(1 2 17, 3 4 18)")}&parameter-name=t2m`);
    assert.equal(off.status, 400);
    assert.equal(off.json().param, "coords");
  });
});

describe("EDR encodings carry the same numbers", () => {
  const queries = [
    `position?coords=${enc("MULTIPOINT((11.6 48.1),(0 0),(100 -30))")}&parameter-name=t2m,tp_1h`,
    "cube?bbox=0,40,20,50&parameter-name=t2m,msl",
    `radius?coords=${enc("POINT(10 45)")}&within=500&within-units=km&parameter-name=t2m`,
    `position?coords=${enc("POINT(11 47)")}&parameter-name=t`,
  ];
  for (const q of queries) {
    test(`CoverageJSON, GeoJSON and CSV of ${q.split("?")[0]}`, async () => {
      const cov = present(covCells((await ok(`${G}/${q}`)).json()));
      const geoR = await ok(`${G}/${q}&f=GeoJSON`);
      assert.equal(geoR.headers.get("content-type"), "application/geo+json");
      const geo = geoR.json();
      assert.equal(geo.type, "FeatureCollection");
      for (const f of geo.features) assert.equal(f.geometry.type, "Point");
      const csvR = await ok(`${G}/${q}&f=CSV`);
      assert.match(csvR.headers.get("content-type")!, /^text\/csv/);
      assert.ok(cov.size > 0);
      assert.deepEqual(present(geoCells(geo)), cov);
      assert.deepEqual(present(csvCells(csvR.body.toString())), cov);
    });
  }

  test("Accept chooses the encoding when f is absent; prs.coverage+json is answered as asked", async () => {
    const q = `${G}/position?coords=${enc("POINT(5 5)")}&parameter-name=t2m`;
    assert.match((await ok(q, { ...H, Accept: "text/csv" })).headers.get("content-type")!, /^text\/csv/);
    assert.equal(
      (await ok(q, { ...H, Accept: "application/geo+json" })).headers.get("content-type"),
      "application/geo+json",
    );
    const old = await ok(q, { ...H, Accept: "application/prs.coverage+json" });
    assert.equal(old.headers.get("content-type"), "application/prs.coverage+json");
    assert.equal(old.json().type, "Coverage");
    assert.equal(
      (await ok(q, { ...H, Accept: "text/html, */*" })).headers.get("content-type"),
      "application/vnd.cov+json",
    );
  });
});

describe("EDR access and faults", () => {
  const q = `${G}/position?coords=${enc("POINT(5 5)")}&parameter-name=t2m`;

  test("queries need a key as /point does: 401 without, 401 with an unknown one", async () => {
    const none = await edr(q, {});
    assert.equal(none.status, 401);
    assert.equal(none.headers.get("content-type"), "application/problem+json");
    assert.ok(none.headers.get("www-authenticate"));
    assert.equal((await edr(q, { "X-API-Key": "gc_nope" })).status, 401);
    assert.equal((await get(`${srv.url}/point?lat=5&lon=5&var=t2m`, { "X-API-Key": "gc_nope" })).status, 401);
  });

  test("a key without the weather scope is refused as on /point (403)", async () => {
    const other = { "X-API-Key": await srv.key(["embeddings"]) };
    const p = await get(`${srv.url}/point?lat=5&lon=5&var=t2m`, other);
    const e = await edr(q, other);
    assert.equal(p.status, 403);
    assert.equal(e.status, 403);
    assert.equal(e.json().type, p.json().type);
  });

  test("the same RateLimit headers as /point, from one bucket per key", async () => {
    const created = await srv.running.ctx.ledger.createKey({
      name: "paced",
      scopes: ["weather"],
      credits: 0,
      rate: 0.2,
      burst: 6,
    } as never);
    const K = { "X-API-Key": created.key };
    const p = await get(`${srv.url}/point?lat=5&lon=5&var=t2m`, K);
    const e = await edr(q, K);
    assert.equal(e.status, 200);
    assert.equal(e.headers.get("ratelimit-policy"), p.headers.get("ratelimit-policy"));
    const rem = (h: Headers) => Number(/remaining=(\d+)/.exec(h.get("ratelimit")!)![1]);
    assert.equal(rem(e.headers), rem(p.headers) - 1, "the EDR request took a token of the same bucket");
    assert.equal(e.headers.get("x-credits-charged"), null, "weather routes carry no credit charge");
  });

  const bad: [string, string, string][] = [
    ["position", `coords=${enc("POINT(abc def)")}`, "coords"],
    ["position", `coords=${enc("POINT(10 20")}`, "coords"],
    ["area", `coords=${enc("POLYGON((0 0, 10 0, 10 10, 0 10))")}`, "coords"],
    ["trajectory", `coords=${enc("LINESTRING(0 0, 1 x)")}`, "coords"],
    ["position", "parameter-name=t2m", "coords"],
    ["area", "parameter-name=t2m", "coords"],
    ["radius", "within=5&within-units=km", "coords"],
    ["radius", `coords=${enc("POINT(1 2)")}&within-units=km`, "within"],
    ["radius", `coords=${enc("POINT(1 2)")}&within=5&within-units=furlong`, "within-units"],
    ["cube", "parameter-name=t2m", "bbox"],
    ["cube", "bbox=1,2,3", "bbox"],
    ["position", `coords=${enc("POINT(1 2)")}&parameter-name=no_such_thing`, "parameter-name"],
    ["position", `coords=${enc("POINT(1 2)")}&datetime=yesterday`, "datetime"],
    ["position", `coords=${enc("POINT(1 2)")}&f=xml`, "f"],
    ["position", `coords=${enc("POINT(1 2)")}&crs=EPSG:3857`, "crs"],
    ["position", `coords=${enc("POLYGON((0 0, 1 0, 1 1, 0 0))")}`, "coords"],
    ["position", `coords=${enc("POINT(1 2)")}&bogus=1`, "bogus"],
  ];
  for (const [type, query, param] of bad) {
    test(`400 naming ${param}: ${type}?${decodeURIComponent(query)}`, async () => {
      const r = await edr(`${G}/${type}?${query}`);
      assert.equal(r.status, 400, r.body.toString());
      assert.equal(r.headers.get("content-type"), "application/problem+json");
      const body = r.json();
      assert.equal(body.param, param);
      assert.ok(body.detail.length > 5);
      assert.doesNotMatch(r.body.toString(), /\/work\/|\/tmp\/|\.ts:|\bat [A-Za-z]+ \(/, "no path or stack");
    });
  }

  test("a query naming an unknown collection or instance is 400 naming it; their metadata 404", async () => {
    const r = await edr(`/edr/collections/forecast~nowhere/position?coords=${enc("POINT(1 2)")}`);
    assert.equal(r.status, 400);
    assert.equal(r.json().param, "collectionId");
    assert.ok(r.json().available.includes("forecast~global"));
    const i = await edr(`${G}/instances/2001-01-01T00:00:00Z/position?coords=${enc("POINT(1 2)")}`);
    assert.equal(i.status, 400);
    assert.equal(i.json().param, "instanceId");
    assert.equal((await edr("/edr/collections/forecast~nowhere", {})).status, 404);
    assert.equal((await edr(`${G}/instances/2001-01-01T00:00:00Z`, {})).status, 404);
  });

  test("413 above field_export_max_mb, before anything is read, for every query kind", async () => {
    const small = await testServer(store, { field_export_max_mb: 0.001 });
    try {
      const k = { "X-API-Key": await small.key(["weather"]) };
      const many = `MULTIPOINT(${Array.from({ length: 60 }, (_, i) => `(${i} ${i % 50})`).join(",")})`;
      for (const path of [
        `${G}/cube?bbox=-180,-90,180,90&parameter-name=t2m`,
        `${G}/area?coords=${enc("POLYGON((-170 -80, 170 -80, 170 80, -170 -80))")}&parameter-name=t2m`,
        `${G}/radius?coords=${enc("POINT(0 0)")}&within=5000&within-units=km&parameter-name=t2m`,
        `${G}/position?coords=${enc(many)}`,
      ]) {
        const r = await get(`${small.url}${path}`, k);
        assert.equal(r.status, 413, `${path}: ${r.body.toString()}`);
        assert.equal(r.json().limit_mb, 0.001);
      }
    } finally {
      await small.close();
    }
  });
});
