// Every EDR document and answer shape against the standard's own schemas (ajv over the published
// YAML, test/http/edr/standard-schemas.ts), the OpenAPI parameters against the standard's
// parameter definitions, and a real EDR client (@camptocamp/ogc-client's OgcApiEndpoint) opening
// /edr, finding the collections and queries, and running a position query whose numbers equal /point's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { OgcApiEndpoint } from "@camptocamp/ogc-client";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CORRECTIONS, edrAjv, standardParameters } from "./edr/standard-schemas.ts";

let store: string;
let srv: TestServer;
let H: Record<string, string>;
const ajv = edrAjv();
const G = "/edr/collections/forecast~global";
const enc = encodeURIComponent;

before(async () => {
  store = await sampleStore();
  // Behind a trusted proxy the links are absolute on the request's host (what an EDR client follows).
  srv = await testServer(store, { trust_proxy: 1 });
  H = { "X-API-Key": await srv.key(["weather"]) };
});
after(async () => {
  await srv.close();
  cleanup(store);
});

function valid(schema: string, doc: unknown, what: string) {
  const errors = ajv.validate(schema, doc);
  assert.deepEqual(errors, [], `${what} against ${schema}`);
}

async function json(path: string, headers: Record<string, string> = {}) {
  const r = await get(`${srv.url}${path}`, headers);
  assert.equal(r.status, 200, `${path}: ${r.body.toString().slice(0, 300)}`);
  return r.json();
}

describe("EDR documents validate against the standard's schemas", () => {
  test("the schemas as corrected still reject what they should (the corrections are narrow)", () => {
    assert.deepEqual(CORRECTIONS.length, 3);
    assert.notDeepEqual(ajv.validate("covjson/ndArray.yaml", { type: "NdArray", values: [1] }), []);
    assert.notDeepEqual(ajv.validate("covjson/domain.yaml", { type: "Domain" }), []);
    const grid = (x: unknown) => ({ type: "Domain", axes: { x: { values: x }, y: { values: [1] } } });
    assert.deepEqual(ajv.validate("covjson/domain.yaml", grid([1, 2])), []);
    assert.notDeepEqual(ajv.validate("covjson/domain.yaml", grid([null])), [], "a grid axis of nulls");
    const composite = { dataType: "tuple", coordinates: ["x", "y"], values: [[1, 2]] };
    assert.deepEqual(ajv.validate("covjson/domain.yaml", { type: "Domain", axes: { composite } }), []);
    assert.notDeepEqual(ajv.validate("covjson/referenceSystem.yaml", { type: "TemporalRS" }), []);
    assert.notDeepEqual(ajv.validate("collections/collection.yaml", { id: "x" }), []);
    assert.notDeepEqual(
      ajv.validate("covjson/ndArray.yaml", { type: "NdArray", dataType: "float", values: [1, null, "x"] }),
      [],
    );
  });

  test("landing page, conformance, collections, each collection, instances and each instance", async () => {
    valid("core/landingPage.yaml", await json("/edr"), "landing page");
    valid("core/confClasses.yaml", await json("/edr/conformance"), "conformance");
    const all = await json("/edr/collections");
    valid("collections/collections.yaml", all, "collections");
    for (const c of all.collections) {
      const one = await json(`/edr/collections/${c.id}`);
      valid("collections/collection.yaml", one, c.id);
      for (const [q, d] of Object.entries(one.data_queries) as [string, { link: unknown }][]) {
        valid(`collections/${q}Link.yaml`, d.link, `${c.id} ${q} link`);
      }
      const inst = await json(`/edr/collections/${c.id}/instances`);
      valid("queries/instances.yaml", inst, `${c.id} instances`);
      for (const i of inst.instances) {
        valid("collections/collection.yaml", await json(`/edr/collections/${c.id}/instances/${enc(i.id)}`), i.id);
      }
    }
  });

  const queries = [
    `position?coords=${enc("POINT(11.6 48.1)")}&parameter-name=t2m,tp_1h`,
    `position?coords=${enc("MULTIPOINT((0 0),(100 -30))")}&parameter-name=t2m`,
    `position?coords=${enc("POINT(11 47)")}&parameter-name=t&z=500,850`,
    "cube?bbox=0,40,20,50&parameter-name=t2m,msl",
    "cube?bbox=0,40,20,50&parameter-name=t&z=850",
    `area?coords=${enc("MULTIPOLYGON(((0 40, 20 40, 10 50, 0 40)),((30 30, 35 30, 35 35, 30 30)))")}&parameter-name=u10`,
    `radius?coords=${enc("POINT(10 45)")}&within=400&within-units=km&parameter-name=t2m`,
    `trajectory?coords=${enc("LINESTRING(0 0, 10 10, 20 5)")}&parameter-name=v10`,
  ];
  for (const q of queries) {
    test(`CoverageJSON and GeoJSON of ${decodeURIComponent(q)}`, async () => {
      const cov = await json(`${G}/${q}`, H);
      valid("covjson/coverageJSON.yaml", cov, "CoverageJSON");
      const coverages = cov.type === "CoverageCollection" ? cov.coverages : [cov];
      for (const c of coverages) {
        valid("covjson/domain.yaml", c.domain, "domain");
        for (const r of Object.values(c.ranges)) valid("covjson/ndArray.yaml", r, "range");
      }
      for (const p of Object.values(cov.parameters)) valid("edr-geojson/parameter.yaml", p, "parameter");
      valid("edr-geojson/edrFeatureCollectionGeoJSON.yaml", await json(`${G}/${q}&f=GeoJSON`, H), "GeoJSON");
    });
  }

  test("problem bodies of EDR routes carry the exception schema's code", async () => {
    for (const [path, h] of [
      [`${G}/position?coords=${enc("POINT(abc def)")}`, H],
      [`${G}/position?coords=${enc("POINT(1 2)")}`, {}],
      [`/edr/collections/forecast~nowhere`, {}],
    ] as const) {
      const r = await get(`${srv.url}${path}`, h);
      assert.ok(r.status >= 400);
      valid("core/exception.yaml", r.json(), path);
    }
  });
});

describe("the OpenAPI document states the standard's parameters", () => {
  test("every EDR query documents its parameters with the standard's names and styles", async () => {
    const doc = await json("/openapi.json");
    const tag = doc.tags.find((t: { name: string }) => t.name === "edr");
    assert.match(
      tag.description,
      /Conventions:.*unit\.symbol.*latest run.*great-circle.*NdArray.*properties\.<parameter>.*lon,lat,datetime/s,
    );
    const std = standardParameters();
    const byQuery: Record<string, string[]> = {
      position: ["positionCoords", "parameter-name", "z", "crs", "f"],
      radius: ["radiusCoords", "within", "within-units", "parameter-name", "z", "crs", "f"],
      area: ["areaCoords", "parameter-name", "z", "crs", "f"],
      cube: ["cube-bbox", "parameter-name", "cube-z", "crs", "f"],
      trajectory: ["trajectoryCoords", "parameter-name", "z", "crs", "f"],
    };
    for (const [q, names] of Object.entries(byQuery)) {
      for (const path of [
        `/edr/collections/{collectionId}/${q}`,
        `/edr/collections/{collectionId}/instances/{instanceId}/${q}`,
      ]) {
        const op = doc.paths[path]?.get;
        assert.ok(op, path);
        for (const n of names) {
          const s = std.get(n)!;
          const mine = op.parameters.find((p: { name: string }) => p.name === s.name);
          assert.ok(mine, `${path} documents ${s.name}`);
          assert.equal(mine.in, s.in);
          if (s.style) {
            assert.equal(mine.style, s.style, `${path} ${s.name} style`);
            assert.equal(mine.explode, s.explode, `${path} ${s.name} explode`);
          }
        }
        assert.ok(op.parameters.find((p: { name: string }) => p.name === "datetime"));
        assert.match(op.description, /Conventions:/);
        assert.match(op.description, /unit\.symbol/);
        assert.ok(op.responses["413"] && op.responses["204"] && op.responses["401"]);
      }
    }
  });
});

describe("a real EDR client", () => {
  test("OgcApiEndpoint opens /edr, lists the collections and runs a position query equal to /point", async () => {
    const endpoint = new OgcApiEndpoint(`${srv.url}/edr`);
    assert.equal(await endpoint.hasEnvironmentalDataRetrieval, true);
    assert.deepEqual((await endpoint.edrCollections).sort(), ["forecast~alps", "forecast~europe", "forecast~global"]);
    const builder = await endpoint.edr("forecast~global");
    for (const q of ["position", "radius", "area", "cube", "trajectory"]) {
      assert.ok(builder.supported_queries.has(q as never), q);
    }
    assert.ok(builder.supported_parameters.t2m);
    const url = builder.buildPositionDownloadUrl("POINT(11.6 48.1)", { parameter_name: ["t2m"] } as never);
    const cov = (await get(url, H)).json();
    const p = (await get(`${srv.url}/point?lat=48.1&lon=11.6&var=t2m`, H)).json();
    assert.deepEqual(cov.ranges.t2m.values, p.values);
    assert.deepEqual(cov.domain.axes.x.values, [p.grid_lon]);

    // Every other query as the client writes it is answered (its bbox with and without levels,
    // its datetime interval, its radius units).
    const datetime = { start: new Date(`${p.times[1]}Z`), end: new Date(`${p.times[3]}Z`) };
    const urls = [
      builder.buildCubeDownloadUrl({ minX: 5, minY: 40, maxX: 15, maxY: 50 }, {
        parameter_name: ["t2m"],
        datetime,
      } as never),
      builder.buildCubeDownloadUrl({ minX: 5, minY: 40, minZ: 800, maxX: 15, maxY: 50, maxZ: 900 }, {
        parameter_name: ["t"],
      } as never),
      builder.buildRadiusDownloadUrl("POINT(10 45)", 300, "km", { parameter_name: ["msl"], datetime } as never),
      builder.buildAreaDownloadUrl("POLYGON((5 40, 15 40, 10 50, 5 40))", { parameter_name: ["u10"] } as never),
      builder.buildTrajectoryDownloadUrl("LINESTRING(0 0, 10 10)", { parameter_name: ["v10"], datetime } as never),
    ];
    for (const u of urls) {
      const r = await get(u, H);
      assert.equal(r.status, 200, `${u}: ${r.body.toString().slice(0, 300)}`);
      valid("covjson/coverageJSON.yaml", r.json(), u);
    }
    const levels = (await get(urls[1], H)).json();
    assert.deepEqual(levels.domain.axes.z.values, [850]);
    const timed = (await get(urls[0], H)).json();
    assert.deepEqual(
      timed.domain.axes.t.values,
      p.times.slice(1, 4).map((t: string) => `${t}Z`),
    );
  });
});
