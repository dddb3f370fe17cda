// Links in live answers (the export catalogue's npy/tiff, the /data listing's zarr roots): paths
// without a base URL, absolute on public_url when it is set, and on a trusted proxy's host (with
// Vary) when trust_proxy is 1; a forged host is never taken otherwise. The links lead where they say.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
const FORGED = { "X-Forwarded-Host": "links.example.net", "X-Forwarded-Proto": "https" };

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

async function links(): Promise<{ npy: string; tiff: string; zarr: string; vary: string }> {
  const headers = { "X-API-Key": key, ...FORGED };
  const exports = await get(`${srv.url}/api/export`, headers);
  const data = await get(`${srv.url}/data/datasets`, headers);
  assert.equal(exports.status, 200);
  assert.equal(data.status, 200);
  const g = exports.json().groups.find((x: { id: string }) => x.id === "forecast~europe");
  const d = data.json().datasets.find((x: { id: string }) => x.id === "forecast~europe");
  return { npy: g.npy, tiff: g.tiff, zarr: d.zarr, vary: data.headers.get("vary") ?? "" };
}

test("without a base URL the links are paths, and a forged host is not taken", async () => {
  const l = await links();
  assert.equal(l.npy, "/api/export/forecast~europe/npy");
  assert.equal(l.tiff, "/api/export/forecast~europe/tiff");
  assert.equal(l.zarr, "/data/datasets/forecast~europe/zarr/");
  // Paths resolve against the server asked: the tiff link answers a GeoTIFF there.
  const q = "var=t2m&time_index=0&lead_start=0&lead_stop=1&lat_min=40&lat_max=50&lon_min=0&lon_max=10";
  const tiff = await get(`${srv.url}${l.tiff}?${q}`, { "X-API-Key": key });
  assert.equal(tiff.status, 200);
  assert.match(tiff.headers.get("content-type") ?? "", /image\/tiff/);
});

test("with public_url the links are absolute on it; with a trusted proxy, on its host, varying on it", async () => {
  const settings = srv.running.ctx.settings;
  try {
    settings.public_url = "https://data.example.org/gc";
    const l = await links();
    assert.equal(l.npy, "https://data.example.org/gc/api/export/forecast~europe/npy");
    assert.equal(l.tiff, "https://data.example.org/gc/api/export/forecast~europe/tiff");
    assert.equal(l.zarr, "https://data.example.org/gc/data/datasets/forecast~europe/zarr/");
    settings.public_url = "";
    settings.trust_proxy = 1;
    const p = await links();
    assert.equal(p.zarr, "https://links.example.net/data/datasets/forecast~europe/zarr/");
    assert.equal(p.npy, "https://links.example.net/api/export/forecast~europe/npy");
    assert.match(p.vary, /X-Forwarded-Host/);
  } finally {
    settings.public_url = "";
    settings.trust_proxy = 0;
  }
});
