// A host taken into links (trust_proxy 1, no public_url) is bounded: an X-Forwarded-Host or Host
// longer than a DNS name with a port, or not a host[:port] at all, is a 400 problem+json that does
// not echo it, on the live catalog, WMTS and the export catalogue alike; a valid host of the longest
// length still answers with links on it. Requests are raw bytes over a socket, so no client
// rewrites or refuses the headers before the server sees them.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { MAX_FORWARDED_HOST } from "../../src/http/public-base.ts";
import { cleanup, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

let storeDir: string;
let srv: TestServer;
let key: string;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { trust_proxy: 1 });
  key = await srv.key(["weather"]);
  await build({
    out: srv.running.ctx.settings.out,
    store: storeDir,
    maxZoom: 1,
    groups: ["europe"],
    vars: ["t2m"],
    buildId: "hosts",
  });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** One request written as raw lines; the status, headers (lower-case) and body of its answer. */
function raw(path: string, lines: string[]): Promise<{ status: number; head: string; body: Buffer }> {
  const u = new URL(srv.url);
  return new Promise((ok, fail) => {
    const sock = connect(Number(u.port), u.hostname);
    const parts: Buffer[] = [];
    sock.on("data", (c) => parts.push(c));
    sock.on("error", fail);
    sock.on("end", () => {
      const all = Buffer.concat(parts);
      const cut = all.indexOf("\r\n\r\n");
      const head = all.subarray(0, cut).toString("latin1");
      ok({ status: Number(head.split(" ")[1]), head: head.toLowerCase(), body: all.subarray(cut + 4) });
    });
    sock.write(`GET ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\nConnection: close\r\n\r\n`);
  });
}

/** A DNS name of exactly n characters: labels of 63 joined by dots. */
function longName(n: number): string {
  const labels: string[] = [];
  let left = n;
  while (left > 0) {
    const take = Math.min(63, left);
    labels.push("a".repeat(take));
    left -= take + 1;
  }
  const name = labels.join(".");
  return name.slice(0, n).replace(/\.$/, "b");
}

const HUGE = `h${"x".repeat(7999)}.example.org`;

for (const [what, lines, path] of [
  ["an 8,000-character X-Forwarded-Host", ["Host: localhost", `X-Forwarded-Host: ${HUGE}`], "/api/forecast/catalog"],
  ["an 8,000-character Host", [`Host: ${HUGE}`], "/api/forecast/catalog"],
  ["a host with a path in it", ["Host: localhost", "X-Forwarded-Host: evil.example/x?y"], "/api/forecast/catalog"],
  ["a host with credentials", ["Host: localhost", "X-Forwarded-Host: u@evil.example"], "/api/forecast/catalog"],
  ["a port out of range", ["Host: localhost", "X-Forwarded-Host: evil.example:99999"], "/api/forecast/catalog"],
  ["a label longer than 63", ["Host: localhost", `X-Forwarded-Host: ${"a".repeat(64)}.org`], "/api/forecast/catalog"],
  [
    "a name of 254 characters",
    ["Host: localhost", `X-Forwarded-Host: ${longName(254)}`],
    "/wmts/1.0.0/WMTSCapabilities.xml",
  ],
] as const) {
  test(`${what} is a 400 problem+json that does not repeat it`, async () => {
    const r = await raw(path, [...lines]);
    assert.equal(r.status, 400, r.body.toString().slice(0, 300));
    assert.match(r.head, /content-type: application\/problem\+json/);
    const p = JSON.parse(r.body.toString());
    assert.match(p.detail, /Host is not a host name or address/);
    assert.ok(r.body.length < 1024, `${r.body.length} bytes of problem`);
    assert.ok(!r.body.includes("xxxxxxxx"), "the host is echoed");
  });
}

test("the export catalogue refuses a bad host the same way, and takes a good one", async () => {
  const bad = await raw("/api/export", ["Host: localhost", `X-API-Key: ${key}`, `X-Forwarded-Host: ${HUGE}`]);
  assert.equal(bad.status, 400);
  const good = await raw("/api/export", ["Host: localhost", `X-API-Key: ${key}`, "X-Forwarded-Host: gc.example:8443"]);
  assert.equal(good.status, 200);
  const g = JSON.parse(good.body.toString()).groups[0];
  assert.match(g.npy, /^http:\/\/gc\.example:8443\/api\/export\//);
});

test("a valid host of the longest length (253 and a port) still answers, its links on it", async () => {
  const host = `${longName(253)}:65535`;
  assert.equal(host.length, MAX_FORWARDED_HOST);
  const r = await raw("/api/forecast/catalog", [
    "Host: localhost",
    `X-Forwarded-Host: ${host}`,
    "X-Forwarded-Proto: https",
  ]);
  assert.equal(r.status, 200, r.body.toString().slice(0, 300));
  assert.equal(JSON.parse(r.body.toString()).public_url, `https://${host}`);
  // An IPv6 literal with a port is a host too.
  const v6 = await raw("/api/forecast/catalog", ["Host: [::1]:8080"]);
  assert.equal(v6.status, 200);
  assert.equal(JSON.parse(v6.body.toString()).public_url, "http://[::1]:8080");
});

test("with trust_proxy 0 the host is never read, so a long one changes nothing", async () => {
  const settings = srv.running.ctx.settings;
  try {
    settings.trust_proxy = 0;
    const r = await raw("/api/forecast/catalog", ["Host: localhost", `X-Forwarded-Host: ${HUGE}`]);
    assert.equal(r.status, 200);
    assert.ok(!r.body.includes("xxxxxxxx"));
  } finally {
    settings.trust_proxy = 1;
  }
});
