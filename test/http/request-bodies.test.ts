// Requests that hold a connection without finishing: a POST whose body trickles in slowly is
// answered (405) and its connection closed by the server at once, not kept until
// request_timeout_ms; a client that half-closes after its request still gets its answer, on a
// public route and on a keyed store-reading one. Raw sockets on loopback.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { cleanup, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { header_timeout_ms: 2000 });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** Sends `head`, then with `trickle` one body byte every 100 ms; what came back and who ended it. */
function exchange(head: string, opts: { halfClose?: boolean; trickle?: boolean }) {
  const u = new URL(srv.url);
  return new Promise<{ reply: string; serverEnded: boolean }>((ok) => {
    const s = connect(Number(u.port), u.hostname);
    let reply = "";
    let serverEnded = false;
    s.on("data", (d) => (reply += d));
    s.on("end", () => (serverEnded = true));
    s.on("error", () => undefined);
    const drip = opts.trickle ? setInterval(() => s.write("a"), 100) : undefined;
    // The client gives up after a while; by then the server must have answered and ended.
    const giveUp = setTimeout(() => s.destroy(), 20_000);
    s.on("close", () => {
      clearInterval(drip);
      clearTimeout(giveUp);
      ok({ reply, serverEnded });
    });
    if (opts.halfClose) s.end(head);
    else s.write(head);
  });
}

test("a slow POST body gets its 405 and the server closes the connection without waiting for the body", async () => {
  const r = await exchange("POST /point HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc", { trickle: true });
  assert.match(r.reply, /^HTTP\/1\.1 405 /);
  assert.match(r.reply, /\r\nconnection: close\r\n/i);
  assert.ok(r.serverEnded, "the server ended the connection (not the client giving up)");
});

test("a client that half-closes after its request gets the answer", async () => {
  const key = await srv.key(["weather"]);
  const pub = await exchange("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", { halfClose: true });
  assert.match(pub.reply, /^HTTP\/1\.1 200 /);
  const keyed = await exchange(`GET /point?lat=10&lon=10&var=t2m HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`, {
    halfClose: true,
  });
  assert.match(keyed.reply, /^HTTP\/1\.1 200 /);
  assert.match(keyed.reply, /"value"|"values"|t2m/);
});
