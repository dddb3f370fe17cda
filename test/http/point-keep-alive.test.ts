// /point's warm path keeps things per parsed query (the memo key, routes/weather.ts) and per
// connection (a heavy request's fair-share holders, app.ts). Over one real keep-alive connection
// (a node:http Agent with one socket) every answer must still be the one its own request asks
// for: queries that differ in place, variable, group, run and units alternate and each matches
// the store read directly with zarrita; keys that alternate each get their own rate headers,
// credits, connection count and store-reading share; and a cycle appended to the store while the
// connection stays open is answered, never the kept answer of the old cycle.
import assert from "node:assert/strict";
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { after, before, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { publish } from "../embeddings/fixtures.ts";
import { appendRun } from "../helpers/append-run.ts";
import { BIG_EXPORT, bigStore } from "../helpers/big-store.ts";
import { cleanup, getFrom, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The client's end of the connection the answer came on. */
  port: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  json: () => any;
}

/** A client whose requests all go, one after another, over the same keep-alive connection. */
class OneConnection {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly ports = new Set<number>();
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  /** Sends a GET; `hold` gets the response before its body is read (to leave it unread for a while). */
  get(path: string, key?: string, hold?: (resume: () => void) => void): Promise<Answer> {
    const u = new URL(this.base);
    const headers: Record<string, string> = key ? { "X-API-Key": key } : {};
    return new Promise((ok, fail) => {
      const req = request({ host: u.hostname, port: u.port, path, headers, agent: this.agent }, (res) => {
        const port = res.socket.localPort ?? 0;
        this.ports.add(port);
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("error", fail);
        res.on("end", () => {
          const body = Buffer.concat(parts);
          ok({ status: res.statusCode ?? 0, headers: res.headers, body, port, json: () => JSON.parse(String(body)) });
        });
        if (hold) {
          res.pause();
          hold(() => res.resume());
        }
      });
      req.on("error", fail);
      req.end();
    });
  }

  /** Every answer so far came over one connection. */
  assertOne(): void {
    assert.equal(this.ports.size, 1, `answers came over ${this.ports.size} connections`);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Index of the coordinate nearest to `x` (longitudes compared around the circle). */
function nearest(coords: Float64Array, x: number, circular: boolean): number {
  let best = 0;
  let bestD = Number.POSITIVE_INFINITY;
  for (let i = 0; i < coords.length; i++) {
    let d = Math.abs(coords[i] - x);
    if (circular) d = Math.min(d % 360, 360 - (d % 360));
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

/** What a /point request should answer, read from the store with zarrita: the nearest node's column. */
async function direct(storeDir: string, group: string, stored: string, lat: number, lon: number, run?: number) {
  const root = zarr.root(new FileSystemStore(storeDir));
  const read = async (name: string) => zarr.get(await zarr.open(root.resolve(`${group}/${name}`), { kind: "array" }));
  const lats = (await read("lat")).data as Float64Array;
  const lons = (await read("lon")).data as Float64Array;
  const iy = nearest(lats, lat, false);
  const ix = nearest(lons, lon, true);
  const node = await zarr.open(root.resolve(`${group}/${stored}`), { kind: "array" });
  const r = run ?? node.shape[0] - 1;
  const got = await zarr.get(node, [r, null, iy, ix]);
  const values = Array.from(got.data as Float32Array, (v) => (Number.isNaN(v) ? null : v));
  return { gridLat: lats[iy], gridLon: lons[ix], values };
}

const close = (a: number | null, b: number | null, what: string) => {
  if (a === null || b === null) return assert.equal(a, b, what);
  assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
};

describe("/point over one keep-alive connection, tiny sample store", () => {
  let storeDir: string;
  let srv: TestServer;
  let key: string;
  before(async () => {
    storeDir = await sampleStore();
    srv = await testServer(storeDir);
    key = await srv.key(["weather"]);
  });
  after(async () => {
    await srv?.close();
    cleanup(storeDir);
  });

  test("alternating queries each get their own answer, equal to the store read directly", async () => {
    // Two pairs share their resolved group (forecast/global): a memo key kept for the wrong query
    // would match there. The others differ in group (alps named, alps chosen as the patch).
    const queries = [
      { q: "lat=-33.9&lon=151.2&var=2t", group: "forecast/global", stored: "t2m", units: "K", f: (x: number) => x },
      {
        q: "lat=60&lon=-170&var=u10&run=0&units=km/h",
        group: "forecast/global",
        stored: "u10",
        run: 0,
        units: "km/h",
        f: (x: number) => x * 3.6,
      },
      {
        q: "lat=-20.3&lon=300.4&var=msl&units=display",
        group: "forecast/global",
        stored: "msl",
        units: "hPa",
        f: (x: number) => x / 100,
      },
      {
        q: "lat=46.52&lon=10.13&var=t2m&group=forecast/alps&units=display&run=0",
        group: "forecast/alps",
        stored: "t2m",
        run: 0,
        units: "°C",
        f: (x: number) => x - 273.15,
      },
      // No group named: the alps patch answers for the default (global) group.
      { q: "lat=46.52&lon=10.13&var=u10m", group: "forecast/alps", stored: "10u", units: "m s-1", f: (x: number) => x },
    ];
    const expected = await Promise.all(
      queries.map((x) => {
        const p = new URLSearchParams(x.q);
        return direct(storeDir, x.group, x.stored, Number(p.get("lat")), Number(p.get("lon")), x.run);
      }),
    );
    for (let i = 0; i < queries.length; i++) {
      for (let j = i + 1; j < queries.length; j++) {
        assert.notDeepEqual(expected[i].values, expected[j].values, `queries ${i} and ${j} must differ in value`);
      }
    }
    const conn = new OneConnection(srv.url);
    try {
      // Round 1 reads and keeps; rounds 2-4 are answered warm, alternating over the same socket.
      for (let round = 0; round < 4; round++) {
        for (const [i, x] of queries.entries()) {
          const r = await conn.get(`/point?${x.q}`, key);
          assert.equal(r.status, 200, r.body.toString());
          const s = r.json();
          const e = expected[i];
          const what = `round ${round}, ${x.q}`;
          assert.equal(s.group, x.group, what);
          assert.equal(s.units, x.units, what);
          // The node itself (the server writes its coordinates rounded: 10.1 for 10.100000000000023).
          close(s.grid_lat, e.gridLat, `${what}, grid_lat`);
          close((s.grid_lon + 360) % 360, e.gridLon, `${what}, grid_lon`);
          assert.equal(s.values.length, e.values.length, what);
          for (let k = 0; k < e.values.length; k++) {
            const v = e.values[k];
            close(s.values[k], v === null ? null : x.f(v), `${what}, lead ${k}`);
          }
        }
      }
      conn.assertOne();
    } finally {
      conn.close();
    }
  });

  test("a cycle appended while the connection stays open: the kept answer of the old cycle is not given", async () => {
    const Q = "/point?lat=-31.3&lon=101.3&var=t2m";
    const conn = new OneConnection(srv.url);
    try {
      const first = await conn.get(Q, key);
      assert.equal(first.status, 200, first.body.toString());
      const old = first.json();
      const runs: string[] = (await conn.get("/data/datasets/forecast~global/zarr/", key)).json().runs;
      assert.equal(old.run, runs.at(-1));
      assert.deepEqual(old.values, (await direct(storeDir, "forecast/global", "t2m", -31.3, 101.3)).values);
      // Warm and kept.
      for (let i = 0; i < 3; i++) assert.equal(String((await conn.get(Q, key)).body), String(first.body));

      // The new run is a copy of run 0, whose values differ from the latest run's.
      const newRun = await appendRun(storeDir, runs, 0);
      const fresh = await direct(storeDir, "forecast/global", "t2m", -31.3, 101.3);
      assert.equal(fresh.values.length, old.values.length);
      assert.notDeepEqual(fresh.values, old.values, "the appended cycle differs at the point");
      // Queries never asked before (so never kept) show when the server sees the new cycle.
      let n = 0;
      await until("a query never asked before answering the new run", async () => {
        n++;
        const r = await conn.get(`/point?lat=${-31.3 - n / 1000}&lon=101.3&var=t2m`, key);
        return r.status === 200 && r.json().run === newRun;
      });
      // From then on, the query asked (and kept) before answers the new cycle too.
      const again = await conn.get(Q, key);
      assert.equal(again.status, 200, again.body.toString());
      const s = again.json();
      assert.equal(s.run, newRun, "the kept answer of the old cycle was given");
      assert.deepEqual(s.values, fresh.values);
      conn.assertOne();
    } finally {
      conn.close();
    }
  });
});

describe("/point and exports over one keep-alive connection that changes its key", () => {
  const SLOTS = 2; // a share of one: a key holding one slot gets the last only while another is free
  let storeDir: string;
  let srv: TestServer;
  before(async () => {
    storeDir = await bigStore();
    // The stalled export below must keep its slot: no watchdog may end it meanwhile.
    srv = await testServer(storeDir, { max_heavy_requests: SLOTS, send_stall_ms: 600_000, send_floor_bytes_per_s: 0 });
    await publish(srv, storeDir);
  });
  after(async () => {
    await srv?.close();
    cleanup(storeDir);
  });

  test("rate headers, credits, the connection's key and the store-reading share follow the key sent", async () => {
    // Rates so slow that no token comes back during the test: remaining counts the key's own requests.
    const a = await srv.key(["weather", "embeddings"], 100, { rate: 0.001, burst: 50 });
    const b = await srv.key(["weather", "embeddings"], 1000, { rate: 0.002, burst: 200 });
    const ids = { a: parseKeyId(a)!, b: parseKeyId(b)! };
    const keys = { a, b };
    const gate = srv.running.ctx.metrics.connections!;
    const conn = new OneConnection(srv.url);
    try {
      const item = (await conn.get("/api/embeddings?limit=1", a)).json().items[0].name as string;
      const used = { a: 1, b: 0 };
      const credits = { a: 100, b: 1000 };
      const cost = srv.running.ctx.settings.credit_cost_item;
      const limit = { a: 50, b: 200 };
      const order: ("a" | "b")[] = ["a", "b", "b", "a", "b", "a", "b", "a"];
      for (const [i, who] of order.entries()) {
        const path = i % 2 === 0 ? "/point?lat=48.1&lon=11.6&var=t2m" : `/api/embeddings/item/${item}`;
        const r = await conn.get(path, keys[who]);
        const what = `request ${i} (${path.slice(0, 20)}) with key ${who}`;
        assert.equal(r.status, 200, `${what}: ${r.body}`);
        used[who]++;
        assert.match(
          String(r.headers.ratelimit),
          new RegExp(`^limit=${limit[who]}, remaining=${limit[who] - used[who]},`),
          what,
        );
        assert.match(String(r.headers["ratelimit-policy"]), new RegExp(`^${limit[who]};`), what);
        if (i % 2 === 1) {
          credits[who] -= cost;
          assert.equal(r.headers["x-credits-remaining"], String(credits[who]), what);
        }
        // The connection counts for the key of its latest request, and only for it.
        assert.equal(gate.heldByKey(ids[who]), 1, what);
        assert.equal(gate.heldByKey(ids[who === "a" ? "b" : "a"]), 0, what);
      }

      // A key's export left unread on the connection holds one of the two store-reading slots, as
      // that key: from other addresses, that key is over its share (the last slot is kept for
      // others) and the other key is not. The connection's first and latest heavy requests were
      // a's, so holders kept for the connection rather than for the key would count b's export
      // against a; then the same the other way round.
      const point = "/point?lat=10&lon=10&var=t2m";
      let from = 2;
      for (const [holder, other] of [
        ["b", "a"],
        ["a", "b"],
      ] as const) {
        if (holder === "a") assert.equal((await conn.get(point, b)).status, 200, "b's request before a's export");
        let resume: (() => void) | undefined;
        const stalled = conn.get(BIG_EXPORT, keys[holder], (r) => {
          resume = r;
        });
        stalled.catch(() => undefined); // a failed assertion below leaves it to the agent's close
        await until(
          `${holder}'s export holding its slot`,
          () => resume !== undefined && srv.running.ctx.metrics.inFlight === 1,
        );
        const over = await getFrom(srv.url, point, `127.0.0.${from++}`, keys[holder]);
        assert.equal(over.status, 503, `key ${holder}'s second slot: ${over.body}`);
        assert.match(JSON.parse(over.body).detail, /this key holds 1 of the 2 store-reading slots/);
        const free = await getFrom(srv.url, point, `127.0.0.${from++}`, keys[other]);
        assert.equal(free.status, 200, `key ${other} holds no slot: ${free.body}`);
        resume!();
        const exported = await stalled;
        assert.equal(exported.status, 200);
        assert.ok(exported.body.length > 10_000_000, `${exported.body.length} bytes`);
        // The probes' own connections close; this one still counts for the key of its latest request.
        await until("the probes' connections closed", () => gate.heldByKey(ids.a) + gate.heldByKey(ids.b) === 1);
        assert.equal(gate.heldByKey(ids[holder]), 1);
      }
      conn.assertOne();
    } finally {
      conn.close();
    }
  });
});
