// The lean path for warm public files (src/http/lean-static.ts) against the full one, over real
// sockets: a warm file's answer carries exactly the headers its first (cold, full-path) answer did,
// for every variant a client sends (identity, gzip, br, q-values, HEAD, If-None-Match,
// If-Modified-Since), and leaves the same access-log fields and metrics; a Range on a warm file
// still gets its 206; pipelined warm requests are answered in order with ids of their own; and a
// client that stops reading a warm file too large for the kernel's buffers is still dropped after
// send_stall_ms.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { codedEtag } from "../../src/content-coding.ts";
import { etagOf } from "../../src/published/static.ts";
import { cleanup, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const STALL_MS = 400;
/** A text document larger than every kernel buffer between server and client, small enough to keep. */
const BIG_TEXT_BYTES = 12 * 1024 * 1024;

let store: string;
let srv: TestServer;
let dir: string;
/** Tiles of the build, each asked for cold once by one variant. */
let tiles: string[];
/** JSON documents of the build (legends, TileJSON), likewise. */
let docs: string[];

before(async () => {
  store = await sampleStore();
  srv = await testServer(store, { send_stall_ms: STALL_MS });
  await build({ store, out: srv.running.ctx.settings.out, maxZoom: 2, groups: ["global"], vars: ["t2m"] });
  dir = realpathSync(join(srv.running.ctx.settings.out, "current"));
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => `/${join(d.parentPath, d.name).slice(dir.length + 1)}`);
  tiles = files.filter((f) => f.startsWith("/tiles/") && f.endsWith(".png")).sort();
  docs = files.filter((f) => /^\/(legends|tilejson)\/.*\.json$/.test(f)).sort();
  assert.ok(tiles.length >= 8, `${tiles.length} tiles`);
  // Random text: compressible by name, so kept whole (up to 16 MiB) with its twins.
  writeFileSync(join(dir, "big.txt"), randomBytes((BIG_TEXT_BYTES * 3) / 4).toString("base64"));
});
after(async () => {
  await srv.close();
  cleanup(store);
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request on its own connection, read to the end. */
function ask(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Answer> {
  const u = new URL(srv.url);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path, method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", fail);
    req.end();
  });
}

/** The headers that differ by request whatever path answers (the id, the date), left out. */
function comparable(h: Answer["headers"]): Record<string, unknown> {
  const { date: _d, "x-request-id": _id, ...rest } = h;
  return rest;
}

const logOf = async (a: Answer) => {
  const id = a.headers["x-request-id"];
  const entry = await until("access log entry", () => srv.logs.find((e) => e.request_id === id && e.t));
  const { t: _t, request_id: _r, ms, ...rest } = entry;
  assert.equal(typeof ms, "number");
  return rest;
};

test("a warm file answers with its cold answer's headers, status, body and log fields, for every variant", async () => {
  let tileAt = 0;
  let docAt = 0;
  const variants: {
    name: string;
    doc: boolean;
    headers?: Record<string, string>;
    method?: string;
    validator?: "etag" | "date";
    coding?: "br" | "gzip";
  }[] = [
    { name: "tile", doc: false },
    { name: "tile HEAD", doc: false, method: "HEAD" },
    { name: "tile If-None-Match", doc: false, validator: "etag" },
    { name: "tile If-Modified-Since", doc: false, validator: "date" },
    { name: "document identity", doc: true },
    { name: "document gzip", doc: true, headers: { "Accept-Encoding": "gzip" } },
    { name: "document br", doc: true, headers: { "Accept-Encoding": "gzip, deflate, br" } },
    { name: "document q-values", doc: true, headers: { "Accept-Encoding": "br;q=0.2, gzip;q=0.8, identity;q=0.1" } },
    { name: "document identity only", doc: true, headers: { "Accept-Encoding": "br;q=0, gzip;q=0" } },
    { name: "document HEAD br", doc: true, headers: { "Accept-Encoding": "br" }, method: "HEAD" },
    {
      name: "document If-None-Match br",
      doc: true,
      headers: { "Accept-Encoding": "br" },
      validator: "etag",
      coding: "br",
    },
    { name: "document If-Modified-Since gzip", doc: true, headers: { "Accept-Encoding": "gzip" }, validator: "date" },
  ];
  assert.ok(docs.length >= variants.filter((v) => v.doc).length, `${docs.length} documents`);
  for (const v of variants) {
    // Each variant's first request finds its file cold (the full path), the second warm (the lean one).
    const path = v.doc ? docs[docAt++] : tiles[tileAt++];
    const headers = { ...v.headers };
    if (v.validator) {
      // The validators the build's file has, from its stat: asking for them would warm it.
      const st = statSync(join(dir, path));
      if (v.validator === "etag")
        headers["If-None-Match"] = `"other", ${codedEtag(etagOf(st), v.coding ?? "identity")}`;
      else headers["If-Modified-Since"] = st.mtime.toUTCString();
    }
    const cold = await ask(path, headers, v.method);
    const warm = await ask(path, headers, v.method);
    assert.equal(cold.status, v.validator ? 304 : 200, v.name);
    assert.equal(warm.status, cold.status, v.name);
    assert.deepEqual(comparable(warm.headers), comparable(cold.headers), v.name);
    assert.ok(warm.body.equals(cold.body), `${v.name}: the same body`);
    assert.match(String(warm.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.notEqual(warm.headers["x-request-id"], cold.headers["x-request-id"]);
    assert.deepEqual(await logOf(warm), await logOf(cold), `${v.name}: access log fields`);
  }
});

test("the first answer of a file is the full path's, every later one the lean path's: both counted", async () => {
  const path = tiles.at(-1)!;
  const count = async () => {
    const m = (await ask("/metrics")).body.toString();
    return Number(/^gridcast_requests_total\{route="static",status="200"\} (\d+)$/m.exec(m)?.[1] ?? 0);
  };
  const before = await count();
  for (let i = 0; i < 5; i++) assert.equal((await ask(path)).status, 200);
  assert.equal((await count()) - before, 5);
});

test("a Range on a warm file is answered 206 with the bytes asked for, coded and identity", async () => {
  const path = docs.at(-1)!;
  const whole = await ask(path, { "Accept-Encoding": "br" });
  const part = await ask(path, { "Accept-Encoding": "br", Range: "bytes=2-9" });
  assert.equal(part.status, 206);
  assert.equal(part.headers["content-encoding"], "br");
  assert.ok(part.body.equals(whole.body.subarray(2, 10)));
  const tile = (await ask(tiles.at(-2)!)).body;
  const tail = await ask(tiles.at(-2)!, { Range: "bytes=-4" });
  assert.equal(tail.status, 206);
  assert.equal(tail.headers["content-range"], `bytes ${tile.length - 4}-${tile.length - 1}/${tile.length}`);
  assert.ok(tail.body.equals(tile.subarray(-4)));
});

test("warm requests pipelined in one packet are answered in order, each with its own id", async () => {
  const path = tiles.at(-3)!;
  const size = (await ask(path)).body.length;
  const u = new URL(srv.url);
  const socket = connect({ host: u.hostname, port: Number(u.port) });
  const n = 50;
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`.repeat(n));
  const chunks: Buffer[] = [];
  socket.on("data", (c) => chunks.push(c));
  await until("every answer", () => {
    const text = Buffer.concat(chunks).toString("latin1");
    return (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length === n;
  });
  await new Promise((r) => setTimeout(r, 200));
  socket.destroy();
  const text = Buffer.concat(chunks).toString("latin1");
  const ids = [...text.matchAll(/X-Request-Id: (\S+)/g)].map((m) => m[1]);
  assert.equal(ids.length, n);
  assert.equal(new Set(ids).size, n, "ids are distinct");
  assert.equal([...text.matchAll(/Content-Length: (\d+)/g)].filter((m) => Number(m[1]) === size).length, n);
});

test("a client that stops reading a warm document too large for the kernel's buffers is dropped after send_stall_ms", async () => {
  // Warm it: read once in full (identity).
  const first = await ask("/big.txt");
  assert.equal(first.status, 200);
  assert.equal(first.body.length, BIG_TEXT_BYTES);
  const before = srv.logs.length;
  const u = new URL(srv.url);
  const socket = connect({ host: u.hostname, port: Number(u.port), localAddress: "127.0.0.7" });
  socket.on("error", () => undefined);
  socket.write(`GET /big.txt HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`);
  const status = await new Promise<string>((ok) => {
    socket.once("data", (d) => {
      socket.pause();
      ok(String(d).split("\r\n")[0]);
    });
  });
  assert.match(status, /^HTTP\/1\.1 200/);
  const closed = new Promise<void>((ok) => socket.once("close", () => ok()));
  const stall = await until(
    "the stalled reader dropped",
    () => srv.logs.slice(before).find((l) => l.event === "response-stall"),
    20_000,
  );
  assert.equal(stall.route, "static");
  const line = await until("its access log line", () =>
    srv.logs.slice(before).find((l) => l.request_id === stall.request_id && l.t),
  );
  assert.equal(line.aborted, true);
  assert.equal(line.path, "/big.txt");
  socket.resume();
  await closed;
});
