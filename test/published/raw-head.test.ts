// setRawHead (src/published/raw-head.ts) hands Node a finished head instead of calling writeHead. Over
// real sockets, its answers must be the very bytes writeHead's answers are (Date aside) for every
// exchange a client makes: GET, HEAD and 304 on a keep-alive HTTP/1.1 connection, several in a row
// on one connection, and Connection: close, HTTP/1.0 (with and without keep-alive), a server with
// no keep-alive timeout or with a request cap per connection, where it must step aside.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { checkRawHead, preparedLines, rawHeadInUse, setRawHead } from "../../src/published/raw-head.ts";

const BODY = Buffer.from("a body of some bytes\r\n\r\nwith blank lines inside it");
const HEADS = [
  "Access-Control-Allow-Origin",
  "*",
  "Cache-Control",
  "public, max-age=60",
  "ETag",
  '"abc"',
  "Content-Type",
  "image/png",
  "Content-Length",
  String(BODY.length),
];
const NOT_MODIFIED = HEADS.slice(0, 6);

interface Served {
  server: Server;
  port: number;
  /** Whether each raw-way request was answered by setRawHead (true) or fell back to writeHead. */
  took: boolean[];
}

/**
 * A server answering /raw/… with setRawHead and /plain/… with writeHead, the same headers either
 * way; …/304 answers Not Modified.
 */
async function serve(setup: (s: Server) => void = () => {}): Promise<Served> {
  const took: boolean[] = [];
  const server = createServer((req, res) => {
    const notModified = req.url?.endsWith("/304") ?? false;
    const status = notModified ? 304 : 200;
    const flat = notModified ? NOT_MODIFIED : HEADS;
    const first = "X-Request-Id: r-1\r\n";
    let raw = false;
    if (req.url?.startsWith("/raw/")) raw = setRawHead(req, res, status, first, preparedLines(flat));
    if (req.url?.startsWith("/raw/")) took.push(raw);
    if (!raw) res.writeHead(status, ["X-Request-Id", "r-1", ...flat]);
    res.end(notModified || req.method === "HEAD" ? undefined : BODY);
  });
  setup(server);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { server, port: (server.address() as { port: number }).port, took };
}

/**
 * Sends `text` on one connection and returns every byte that came back once `answers` responses
 * (each with `bodyBytes` after its head) have arrived, or the connection closed.
 */
function exchange(port: number, text: string, answers: number, bodyBytes: number[]): Promise<string> {
  return new Promise((ok, fail) => {
    const s = connect(port, "127.0.0.1");
    let got = Buffer.alloc(0);
    const done = () => {
      s.destroy();
      ok(got.toString("latin1").replace(/\r\nDate: [^\r]+\r\n/g, "\r\nDate: (now)\r\n"));
    };
    s.on("data", (d) => {
      got = Buffer.concat([got, d]);
      // Count whole answers: each head ends in a blank line and is followed by its body.
      let at = 0;
      let n = 0;
      for (; n < answers; n++) {
        const end = got.indexOf("\r\n\r\n", at, "latin1");
        if (end < 0) break;
        at = end + 4 + bodyBytes[n];
        if (at > got.length) break;
      }
      if (n === answers && at <= got.length) done();
    });
    s.on("end", done);
    s.on("error", fail);
    s.write(text);
  });
}

let keepAlive: Served;
let noTimeout: Served;
let capped: Served;

before(async () => {
  // What every server start does first: the raw head is in use only once this passed.
  assert.deepEqual(await checkRawHead(), { ok: true });
  keepAlive = await serve();
  noTimeout = await serve((s) => {
    s.keepAliveTimeout = 0;
  });
  capped = await serve((s) => {
    s.maxRequestsPerSocket = 3;
  });
});
after(() => {
  for (const s of [keepAlive, noTimeout, capped]) s.server.close();
});

/** The same exchange on the raw and the plain path, compared byte for byte. */
async function same(s: Served, request: (path: string) => string, answers: number, bodyBytes: number[]) {
  const raw = await exchange(s.port, request("/raw"), answers, bodyBytes);
  const plain = await exchange(s.port, request("/plain"), answers, bodyBytes);
  assert.ok(raw.startsWith("HTTP/1."), raw);
  assert.equal(raw, plain);
  return raw;
}

test("on this Node the raw head is in use (the package's Node major is one the tests check)", () => {
  assert.equal(rawHeadInUse(), true, `Node ${process.versions.node}`);
});

test("the startup check turns down a setter whose bytes differ from writeHead's, or that does not answer", async () => {
  // A head missing a line (as if Node had stopped writing one of ours), and a head not set at all.
  const dropsALine: typeof setRawHead = (req, res, status, first, lines) =>
    setRawHead(req, res, status, first, lines.replace(/ETag: [^\r]*\r\n/, ""));
  const bad = await checkRawHead(dropsALine);
  assert.equal(bad.ok, false);
  assert.match(bad.why ?? "", /differ from writeHead/);
  const none = await checkRawHead(() => false);
  assert.equal(none.ok, false);
  assert.match(none.why ?? "", /answered 0 of 3/);
  // A setter under test turns nothing off or on for the process.
  assert.equal(rawHeadInUse(), true);
});

test("GET, HEAD and 304 on one keep-alive connection: the same bytes as writeHead, answered the raw way", async () => {
  const took = keepAlive.took.length;
  const text = (p: string) =>
    `GET ${p}/a HTTP/1.1\r\nHost: x\r\n\r\n` +
    `HEAD ${p}/b HTTP/1.1\r\nHost: x\r\n\r\n` +
    `GET ${p}/304 HTTP/1.1\r\nHost: x\r\n\r\n` +
    `GET ${p}/c HTTP/1.1\r\nHost: x\r\n\r\n`;
  const bytes = await same(keepAlive, text, 4, [BODY.length, 0, 0, BODY.length]);
  assert.equal((bytes.match(/HTTP\/1\.1 200 OK/g) ?? []).length, 3);
  assert.equal((bytes.match(/HTTP\/1\.1 304 Not Modified/g) ?? []).length, 1);
  assert.equal((bytes.match(/Keep-Alive: timeout=5/g) ?? []).length, 4);
  assert.equal(bytes.split(BODY.toString("latin1")).length - 1, 2, "two bodies, none for HEAD or 304");
  assert.deepEqual(keepAlive.took.slice(took), [true, true, true, true]);
});

test("Connection: close and HTTP/1.0 (with and without keep-alive) step aside to writeHead", async () => {
  for (const [request, closes] of [
    [(p: string) => `GET ${p}/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, true],
    [(p: string) => `GET ${p}/a HTTP/1.0\r\nHost: x\r\n\r\n`, true],
    [(p: string) => `GET ${p}/304 HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`, true],
    [(p: string) => `GET ${p}/a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`, false],
  ] as const) {
    const took = keepAlive.took.length;
    const bytes = await same(keepAlive, request, 1, [request("").includes("/304") ? 0 : BODY.length]);
    assert.equal(/Connection: close/.test(bytes), closes, bytes);
    assert.deepEqual(keepAlive.took.slice(took), [false]);
  }
});

test("a server with no keep-alive timeout, or a cap of requests a connection, gets writeHead's bytes", async () => {
  const one = (p: string) => `GET ${p}/a HTTP/1.1\r\nHost: x\r\n\r\n`;
  const quiet = await same(noTimeout, one, 1, [BODY.length]);
  assert.doesNotMatch(quiet, /Keep-Alive:/);
  const three = (p: string) => one(p).repeat(3);
  const cappedBytes = await same(capped, three, 3, [BODY.length, BODY.length, BODY.length]);
  assert.match(cappedBytes, /Keep-Alive: timeout=5, max=3/);
  assert.ok(capped.took.every((t) => !t));
});

test("preparedLines refuses a header writeHead would refuse", () => {
  assert.throws(() => preparedLines(["Bad Name", "x"]));
  assert.throws(() => preparedLines(["X-Ok", "line\r\nInjected: 1"]));
  assert.equal(preparedLines(["A", "1", "B", "2"]), "A: 1\r\nB: 2\r\n");
});
