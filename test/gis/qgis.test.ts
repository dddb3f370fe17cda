// QGIS 3 headless (Debian's python3-qgis, offscreen) as GIS users add gridcast: a WMTS layer
// from the live capabilities and an XYZ layer from the absolute `tiles` URL of a TileJSON (a
// build with public_url set to the server). Each is rendered over one tile of the pyramid at its
// native resolution and must equal that tile pixel for pixel. QGIS starts once for both layers.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { build } from "../pipeline/build-fixture.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/gis_qgis.py");
const MAX_ZOOM = 3;
/** A zoom-3 tile inside the europe patch (10° E, 50° N). */
const TILE = [MAX_ZOOM, 4, 2] as const;

interface Rendered {
  valid: boolean;
  crs: string;
  error: string;
  differ?: number;
  opaque?: number;
}

let storeDir: string;
let srv: TestServer;
let found: { wmts: Rendered; xyz: Rendered };

before(async () => {
  assert.ok(existsSync("/usr/bin/qgis"), "QGIS is not installed (bin/test-prereqs.sh installs qgis and python3-qgis)");
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  // The server's own address as public_url: live documents and the build's TileJSON agree on it.
  srv.running.ctx.settings.public_url = srv.url;
  const r = await build({
    store: storeDir,
    out: srv.running.ctx.settings.out,
    maxZoom: MAX_ZOOM,
    groups: ["europe"],
    vars: ["t2m"],
    leads: [0, 3],
    publicUrl: srv.url,
  });
  await until(
    "build visible",
    async () => (await get(`${srv.url}/api/forecast/catalog`)).json().build_id === r.build_id,
  );
  const catalog = (await get(`${srv.url}/api/forecast/catalog`)).json();
  const lead = catalog.layers.find((l: { id: string }) => l.id === "europe.t2m").runs.at(-1).leads[1];
  const [z, x, y] = TILE;
  found = await pythonJson(PYTHON, SCRIPT, [], {
    wmts: `${srv.url}/wmts/1.0.0/WMTSCapabilities.xml`,
    layer: "europe.t2m",
    time: `${lead.valid_time}Z`,
    tilejson: `${srv.url}${lead.tilejson}`,
    tile: TILE,
    png: `${srv.url}/api/forecast/tile/${z}/${x}/${y}?layer=europe.t2m&lead=${lead.hours}`,
  });
});
after(async () => {
  await srv?.close();
  if (storeDir) cleanup(storeDir);
});

test("QGIS renders the WMTS layer (second time step) equal to the XYZ tile of that lead", () => {
  assert.ok(found.wmts.valid, found.wmts.error);
  assert.equal(found.wmts.crs, "EPSG:3857");
  assert.ok((found.wmts.opaque ?? 0) > 1000, `only ${found.wmts.opaque} opaque pixels`);
  assert.equal(found.wmts.differ, 0);
});

test("QGIS renders an XYZ layer from the TileJSON's absolute tiles URL equal to the tile", () => {
  assert.ok(found.xyz.valid, found.xyz.error);
  assert.ok((found.xyz.opaque ?? 0) > 1000, `only ${found.xyz.opaque} opaque pixels`);
  assert.equal(found.xyz.differ, 0);
});
