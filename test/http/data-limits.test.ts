// /data under a rate limit, read by the real clients. A key made by `gridcast keys create` with its
// defaults (10 requests/s) must read every array of every dataset exactly as an unlimited key
// does: xarray + zarr-python 2 (which turns a refused chunk into fill values without a word) and
// zarrita on the v3 view. The limit must still hold: the limited reads are paced, never refused.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import * as zarr from "zarrita";
import { cleanup, get, PYTHON, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { recodedVariants } from "./data-fixtures.ts";

const NODE = resolve(import.meta.dirname, "../../node_modules/.bin/node");
const CLI = resolve(import.meta.dirname, "../../bin/gridcast");
const SCRIPT = resolve(import.meta.dirname, "../python/data_all_arrays.py");
const run = promisify(execFile);

let storeDir: string;
let srv: TestServer;
let unlimited: string;

before(async () => {
  storeDir = await sampleStore();
  recodedVariants(storeDir);
  srv = await testServer(storeDir);
  unlimited = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** A key exactly as an operator makes one: the CLI with its defaults. */
async function cliKey(name: string): Promise<{ key: string; id: string; rate: number; burst: number }> {
  const db = join(srv.dir, "ledger.db");
  const { stdout } = await run(NODE, [
    CLI,
    "keys",
    "create",
    "--db",
    db,
    "--name",
    name,
    "--scopes",
    "weather",
    "--json",
  ]);
  const { key, record } = JSON.parse(stdout);
  return { key, id: record.id, rate: record.rate, burst: record.burst };
}

/** What the access log says about one key's /data requests. */
function dataRequests(keyId: string) {
  const lines = srv.logs.filter((l) => l.key_id === keyId && String(l.route).startsWith("/data/"));
  const statuses: Record<string, number> = {};
  for (const l of lines) statuses[String(l.status)] = (statuses[String(l.status)] ?? 0) + 1;
  return { count: lines.length, statuses };
}

function assertPaced(k: { id: string; rate: number; burst: number }, seconds: number): void {
  const seen = dataRequests(k.id);
  assert.equal(seen.statuses["429"], undefined, `refused: ${JSON.stringify(seen.statuses)}`);
  assert.ok(seen.count > k.burst * 3, `only ${seen.count} requests: the limit was never reached`);
  // The bucket held: these requests took at least as long as the rate allows.
  const floor = (seen.count - k.burst) / k.rate;
  assert.ok(seconds >= floor * 0.9, `${seen.count} requests in ${seconds.toFixed(1)} s at ${k.rate}/s`);
}

describe("/data with a `keys create` default key", () => {
  test("xarray + zarr 2 read every array of every dataset equal to an unlimited key's read", {
    timeout: 240_000,
  }, async () => {
    const k = await cliKey("analysis-xarray");
    assert.equal(k.rate, 10, "keys create's default rate changed; this test is about the default");
    const t0 = performance.now();
    let out: { stdout: string };
    try {
      out = await run(PYTHON, [SCRIPT, srv.url, unlimited, k.key], { encoding: "utf8", timeout: 230_000 });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      assert.fail(`xarray reads differ:\n${err.stdout ?? ""}\n${(err.stderr ?? "").slice(-2000)}`);
    }
    const seconds = (performance.now() - t0) / 1000;
    const { datasets, failures } = JSON.parse(out.stdout);
    assert.deepEqual(failures, []);
    assert.deepEqual(datasets.map((d: { id: string }) => d.id).sort(), [
      "forecast~alps",
      "forecast~europe",
      "forecast~global",
    ]);
    for (const d of datasets) assert.ok(d.values > 1000, `${d.id}: ${d.values} values`);
    assertPaced(k, seconds); // the unlimited reads take a second or two of this
  });

  test("zarrita on the v3 view reads every array equal to an unlimited key's read", { timeout: 240_000 }, async () => {
    const k = await cliKey("analysis-zarrita");
    const open = (id: string, key: string) =>
      zarr.withConsolidatedMetadata(
        new zarr.FetchStore(`${srv.url}/data/datasets/${id}/zarr`, {
          fetch: (request) => {
            const headers = new Headers(request.headers);
            headers.set("X-API-Key", key);
            return fetch(new Request(request, { headers }));
          },
        }),
        { format: "v3" },
      );
    const list = (await get(`${srv.url}/data/datasets`, { "X-API-Key": unlimited })).json().datasets as {
      id: string;
    }[];
    type Read = { shape: number[]; bytes: Buffer };
    const readAll = async (key: string) => {
      const out = new Map<string, Read>();
      for (const d of list) {
        const store = await open(d.id, key);
        const arrays = store.contents().filter((c) => c.kind === "array");
        assert.ok(arrays.length >= 8, `${d.id}: ${arrays.length} arrays`);
        for (const { path } of arrays) {
          const array = await zarr.open.v3(zarr.root(store).resolve(path), { kind: "array" });
          // zarr.get answers a scalar (0-d) array, such as a CF grid-mapping variable (spatial_ref),
          // with its bare value; its one chunk carries the bytes to compare.
          const got = array.shape.length === 0 ? await array.getChunk([]) : await zarr.get(array);
          const data = got.data as unknown as { buffer: ArrayBufferLike; byteOffset: number; byteLength: number };
          out.set(`${d.id}${path}`, {
            shape: got.shape,
            bytes: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
          });
        }
      }
      return out;
    };
    const reference = await readAll(unlimited);
    // Timed in one span from a full bucket, so the pacing bound below is exact.
    const t0 = performance.now();
    const limited = await readAll(k.key);
    const limitedSeconds = (performance.now() - t0) / 1000;
    assert.deepEqual([...limited.keys()], [...reference.keys()]);
    let compared = 0;
    for (const [name, a] of reference) {
      const b = limited.get(name)!;
      assert.deepEqual(b.shape, a.shape, name);
      assert.ok(b.bytes.equals(a.bytes), `${name}: values differ`);
      compared += a.bytes.length / 4;
    }
    assert.ok(compared > 50_000, `${compared} values compared`);
    assertPaced(k, limitedSeconds);
  });
});
