// xarray + zarr-python 2 (Debian's python3) open every /data dataset over real HTTP and must read
// exactly what /point and the .npy export report — on the sample store plus three arrays whose
// chunks the publisher has to re-encode (sharded, crc32c, v3 fill value ≠ _FillValue with a
// missing chunk).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, get, PYTHON, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { recodedVariants } from "./data-fixtures.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/data_xarray.py");

let storeDir: string;
let srv: TestServer;
let key: string;

before(async () => {
  storeDir = await sampleStore();
  recodedVariants(storeDir);
  srv = await testServer(storeDir);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

test("the listing says which arrays pass stored bytes through and which are re-encoded", async () => {
  const r = await get(`${srv.url}/data/datasets`, { "X-API-Key": key });
  assert.equal(r.status, 200);
  const { datasets } = r.json();
  assert.deepEqual(datasets.map((d: { id: string }) => d.id).sort(), [
    "forecast~alps",
    "forecast~europe",
    "forecast~global",
  ]);
  const global = datasets.find((d: { id: string }) => d.id === "forecast~global");
  assert.equal(global.zarr, "/data/datasets/forecast~global/zarr/");
  assert.deepEqual(global.dims, { time: 2, lead_time: 7, level: 2, lat: 91, lon: 180 });
  const how = Object.fromEntries(
    global.variables.map((v: { name: string; chunk_bytes: string }) => [v.name, v.chunk_bytes]),
  );
  assert.deepEqual(how, {
    msl: "stored",
    t: "stored",
    t2m: "re-encoded",
    tcc: "stored",
    tp_1h: "stored",
    u10: "re-encoded",
    v10: "stored",
  });
  const alps = datasets.find((d: { id: string }) => d.id === "forecast~alps");
  assert.ok(alps.variables.some((v: { name: string; stored: string }) => v.name === "u10" && v.stored === "10u"));
});

test("xarray reads every dataset: values equal /point and the .npy export, times equal /point's", {
  timeout: 120_000,
}, async () => {
  let out: { stdout: string; stderr: string };
  try {
    out = await promisify(execFile)(PYTHON, [SCRIPT, srv.url, key], { encoding: "utf8", timeout: 110_000 });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    assert.fail(`python check failed:\n${err.stderr ?? ""}${err.stdout ?? ""}`);
  }
  const { datasets } = JSON.parse(out.stdout) as { datasets: { id: string; variables: string[]; values: number }[] };
  const byId = Object.fromEntries(datasets.map((d) => [d.id, d]));
  assert.deepEqual(Object.keys(byId).sort(), ["forecast~alps", "forecast~europe", "forecast~global"]);
  assert.deepEqual(byId["forecast~global"].variables, ["msl", "t", "t2m", "tcc", "tp_1h", "u10", "v10"]);
  assert.deepEqual(byId["forecast~europe"].variables, ["msl", "t2m", "tp_1h", "u10", "v10"]);
  assert.deepEqual(byId["forecast~alps"].variables, ["t2m", "tp_1h", "u10", "v10"]);
  for (const d of datasets) assert.ok(d.values > 100, `${d.id}: only ${d.values} values compared`);
});
