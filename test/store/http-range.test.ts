// A sharded Zarr v3 store served over plain HTTP: gridcast reads each shard's index and inner
// chunks by byte range. Two real static servers are used, one that honours Range (sirv) and one
// that ignores it and answers 200 with the whole file (python3 -m http.server). Both must give
// exactly what zarrita reads from the files on disk; servers that lie (a wrong Content-Range, a
// body cut short, a file shorter than its index) must give 503 problem+json whose log line names
// the store and key, never 200 with wrong numbers.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import sirv from "sirv";
import * as zarr from "zarrita";
import { cleanup, get, PYTHON, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { type Lie, listen, rangeServer } from "../helpers/static-server.ts";
import { shard } from "../http/data-fixtures.ts";

let storeDir: string;
let python: ChildProcess;
let ranged: Server;
let liar: Server;
let sirvServer: Server;
let lie: Lie = "none";
const servers: Record<string, TestServer> = {};
const keys: Record<string, string> = {};

/** python3 -m http.server on a free port; resolves with its base URL once it prints it. */
function pythonServer(dir: string): Promise<string> {
  python = spawn(PYTHON, ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", dir], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  return new Promise((ok, fail) => {
    let out = "";
    python.stdout!.on("data", (b) => {
      out += b;
      const m = /port (\d+)/.exec(out);
      if (m) ok(`http://127.0.0.1:${m[1]}/`);
    });
    python.on("exit", (code) => fail(new Error(`http.server exited ${code}`)));
  });
}

before(async () => {
  storeDir = await sampleStore();
  // 2 runs × 1 lead × 2×2 lat/lon chunks per shard: most reads are true byte ranges inside a shard.
  shard(storeDir, "forecast/global/t2m", [2, 1, 2, 2]);
  ranged = rangeServer(storeDir, () => "none");
  liar = rangeServer(storeDir, () => lie);
  const serve = sirv(storeDir, { dev: true, etag: true, dotfiles: true });
  sirvServer = createServer((req, res) =>
    serve(req, res, () => {
      res.statusCode = 404;
      res.end();
    }),
  );
  const urls = await Promise.all([listen(ranged), pythonServer(storeDir), listen(liar), listen(sirvServer)]);
  for (const [name, root] of [
    ["disk", storeDir],
    ["ranged", urls[0]],
    ["python", urls[1]],
    ["liar", urls[2]],
    ["sirv", urls[3]],
  ] as const) {
    servers[name] = await testServer(root);
    keys[name] = await servers[name].key(["weather"]);
  }
});
after(async () => {
  for (const s of Object.values(servers)) await s.close();
  python?.kill();
  ranged?.close();
  sirvServer?.close();
  liar?.closeAllConnections();
  liar?.close();
  cleanup(storeDir);
});

const fetchFrom = (name: string, path: string) => get(`${servers[name].url}${path}`, { "X-API-Key": keys[name] });

/** zarrita straight from the files: the reference every HTTP read must equal. */
async function fromDisk(run: number, lat: number, lon: number): Promise<number[]> {
  const root = zarr.root(new FileSystemStore(storeDir));
  const open = (p: string) => zarr.open.v3(root.resolve(p), { kind: "array" });
  const [t2m, lats, lons] = await Promise.all([
    open("forecast/global/t2m"),
    open("forecast/global/lat"),
    open("forecast/global/lon"),
  ]);
  const latV = Array.from((await zarr.get(lats)).data as Float64Array);
  const lonV = Array.from((await zarr.get(lons)).data as Float64Array);
  const i = latV.findIndex((v) => Math.abs(v - lat) < 1e-9);
  const j = lonV.findIndex((v) => Math.abs((((v - lon) % 360) + 360) % 360) < 1e-9);
  assert.ok(i >= 0 && j >= 0, `grid node ${lat},${lon}`);
  const col = await zarr.get(t2m, [run, null, i, j]);
  return Array.from(col.data as Float32Array);
}

const POINTS = [
  { lat: -31, lon: 101, run: 1 },
  { lat: 60, lon: 10, run: 0 },
  { lat: 3, lon: 251, run: 1 },
  { lat: 88, lon: 359, run: 0 },
];

describe("sharded v3 over HTTP", () => {
  for (const name of ["ranged", "python"]) {
    test(`${name}: /point equals zarrita on disk, value for value`, async () => {
      for (const p of POINTS) {
        const r = await fetchFrom(name, `/point?lat=${p.lat}&lon=${p.lon}&var=t2m&group=forecast/global&run=${p.run}`);
        assert.equal(r.status, 200, r.body.toString());
        const body = r.json();
        const expected = await fromDisk(p.run, body.grid_lat, body.grid_lon);
        assert.deepEqual(
          body.values.map((v: number | null) => (v === null ? Number.NaN : Math.fround(v))),
          expected.map((v) => Math.fround(v)),
          `${name} ${JSON.stringify(p)}`,
        );
      }
    });

    test(`${name}: the .npy export equals the same export from the directory store`, async () => {
      const q = "var=t2m&time_index=1&lead_start=0&lead_stop=6&lat_min=-40&lat_max=40&lon_min=60&lon_max=200";
      const [a, b] = await Promise.all([
        fetchFrom(name, `/api/export/forecast~global/npy?${q}`),
        fetchFrom("disk", `/api/export/forecast~global/npy?${q}`),
      ]);
      assert.equal(a.status, 200, a.body.toString());
      assert.equal(b.status, 200);
      assert.ok(a.body.length > 10_000);
      assert.ok(a.body.equals(b.body), `${name}: export bytes differ from the directory store's`);
    });
  }

  test("the python server really ignores Range (so the slicing path is what was tested)", async () => {
    const port = /:(\d+)\//.exec(servers.python.running.ctx.settings.store)![1];
    const r = await fetch(`http://127.0.0.1:${port}/forecast/global/t2m/zarr.json`, {
      headers: { Range: "bytes=0-9" },
    });
    assert.equal(r.status, 200);
    assert.ok((await r.arrayBuffer()).byteLength > 10);
  });
});

describe("servers that lie about ranges", () => {
  test("a store that sheds load (each request fails once with 503) is read right, not refused", async () => {
    servers.liar.running.ctx.store.cache.invalidate();
    lie = "flaky";
    try {
      const r = await fetchFrom("liar", "/point?lat=60&lon=10&var=t2m&group=forecast/global&run=0");
      assert.equal(r.status, 200, r.body.toString());
      const expected = await fromDisk(0, r.json().grid_lat, r.json().grid_lon);
      assert.deepEqual(
        r.json().values.map((v: number | null) => (v === null ? Number.NaN : Math.fround(v))),
        expected.map((v) => Math.fround(v)),
      );
    } finally {
      lie = "none";
    }
  });

  test("sirv answers a suffix range (bytes=-n) with n+1 bytes from offset 0: refused, not decoded", async () => {
    const url = servers.sirv.running.ctx.settings.store;
    const r0 = await fetch(`${url}forecast/global/t2m/zarr.json`, { headers: { Range: "bytes=-10" } });
    const total = Number(/\/(\d+)$/.exec(r0.headers.get("content-range") ?? "")?.[1]);
    assert.equal(r0.headers.get("content-range"), `bytes 0-10/${total}`, "sirv fixed its suffix ranges?");
    await r0.arrayBuffer();
    const r = await fetchFrom("sirv", "/point?lat=-31&lon=101&var=t2m&group=forecast/global&run=1");
    assert.equal(r.status, 503, r.body.toString());
    assert.equal(r.json().type, "/problems/store-unavailable");
  });

  for (const mode of ["wrong-range", "short-body", "ignore-range-truncated"] as const) {
    test(`${mode}: 503 problem+json, the log names store and key, the body names neither`, async () => {
      const srv = servers.liar;
      srv.running.ctx.store.cache.invalidate();
      lie = mode;
      try {
        const before = srv.logs.length;
        const r = await fetchFrom("liar", "/point?lat=-31&lon=101&var=t2m&group=forecast/global&run=1");
        assert.equal(r.status, 503, r.body.toString());
        assert.equal(r.headers.get("content-type"), "application/problem+json");
        const text = r.body.toString();
        assert.ok(!text.includes("forecast/global/t2m/c") && !text.includes("127.0.0.1"), text);
        const line = srv.logs.slice(before).find((l) => l.level === "error");
        assert.ok(line, "no error line logged");
        assert.match(String(line.store), /^http store http:\/\/127\.0\.0\.1:\d+\/$/);
        assert.match(String(line.key), /^forecast\/global\/t2m\/c\/\d+\/\d+\/\d+\/\d+$/);
      } finally {
        lie = "none";
      }
      const ok = await fetchFrom("liar", "/point?lat=-31&lon=101&var=t2m&group=forecast/global&run=1");
      assert.equal(ok.status, 200);
    });
  }
});
