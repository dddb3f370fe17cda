// Outsized store metadata never reaches a client as an unreadable header or a huge body: a store
// written by xarray + zarr 2 with a 2 MB units attribute (d2m), a 2 MB long_name (t2m) and an
// unevenly spaced latitude axis of 1001 rows. d2m is refused by name (a short 500 problem as for
// any encoding gridcast will not serve, listed with the reason, its units shown cut with a note); t2m's .npy export and /point answer, every header
// line at most HEADER_LINE_MAX bytes, X-SVC-Field's long lists given as count/first/last with a
// note, and Python's http.client (a real client) reads the export whole. The reply helpers refuse
// any header line over the budget.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { HeaderTooLargeError } from "../../src/errors.ts";
import { checkHeaderLines, fieldHeader, HEADER_LINE_MAX } from "../../src/http/header-budget.ts";
import { ATTRIBUTE_MAX_CHARS } from "../../src/store/attribute-budget.ts";
import { cleanup, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

const execFileAsync = promisify(execFile);

let root: string;
let srv: TestServer;
let key: string;

before(async () => {
  root = tempDir("gridcast-huge-attrs-");
  execFileSync(PYTHON, [join(import.meta.dirname, "../python/huge_attrs.py"), join(root, "store")]);
  srv = await testServer(join(root, "store"));
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(root);
});

/** A GET written as raw lines; the head's lines and the body as bytes. */
function raw(path: string): Promise<{ status: number; lines: string[]; body: Buffer }> {
  const u = new URL(srv.url);
  return new Promise((ok, fail) => {
    const sock = connect(Number(u.port), u.hostname);
    const parts: Buffer[] = [];
    sock.on("data", (c) => parts.push(c));
    sock.on("error", fail);
    sock.on("end", () => {
      const all = Buffer.concat(parts);
      const cut = all.indexOf("\r\n\r\n");
      const lines = all.subarray(0, cut).toString("latin1").split("\r\n");
      ok({ status: Number(lines[0].split(" ")[1]), lines, body: all.subarray(cut + 4) });
    });
    sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`);
  });
}

function assertLinesFit(lines: string[]): void {
  for (const l of lines)
    assert.ok(Buffer.byteLength(l) <= HEADER_LINE_MAX, `a ${Buffer.byteLength(l)}-byte line: ${l.slice(0, 60)}`);
}

const BOX = "time_index=0&lead_start=0&lead_stop=2&lat_min=-90&lat_max=90&lon_min=0&lon_max=350";

test("a variable with 2 MB units is refused by name: /point and the export answer a short 500 problem naming why", async () => {
  for (const path of [
    `/point?lat=10&lon=20&var=d2m&group=forecast/global`,
    `/api/export/forecast~global/npy?var=d2m&${BOX}`,
  ]) {
    const r = await raw(path);
    assert.equal(r.status, 500, r.body.toString().slice(0, 200));
    assert.match(
      JSON.parse(r.body.toString()).detail,
      /d2m .* is not served: its units attribute is 2000002 characters/,
    );
    assertLinesFit(r.lines);
    assert.ok(r.body.length < 2048, `${r.body.length} bytes of problem`);
  }
  const models = await raw("/api/models");
  assert.equal(models.status, 200);
  assert.ok(models.body.length < 200_000, `/api/models is ${models.body.length} bytes`);
  const group = JSON.parse(models.body.toString()).forecast.find((g: { id: string }) => g.id === "forecast/global");
  const d2m = group.unregistered.find((u: { stored: string }) => u.stored === "d2m");
  assert.match(d2m.reason, new RegExp(`units attribute is 2000002 characters, longer than the ${ATTRIBUTE_MAX_CHARS}`));
});

test("a served variable's export keeps every header line within the budget, long lists summarised", async () => {
  const r = await raw(`/api/export/forecast~global/npy?var=t2m&${BOX}`);
  assert.equal(r.status, 200, r.body.toString().slice(0, 200));
  assertLinesFit(r.lines);
  const line = r.lines.find((l) => l.toLowerCase().startsWith("x-svc-field:"))!;
  const field = JSON.parse(line.slice(line.indexOf(":") + 1));
  assert.deepEqual(field.shape, [3, 1001, 36]);
  assert.equal(field.lat.values.count, 1001);
  assert.equal(field.lat.values.first, -90);
  assert.equal(field.lat.values.last, 90);
  assert.ok(field.omitted.includes("lat.values"), JSON.stringify(field.omitted));
  assert.match(field.omitted_note, /\/data Zarr view/);
  assert.equal(field.units, "K");
  // Python's http.client reads the whole export (it refuses header lines over 64 KiB).
  // (Run asynchronously: the server answering it lives in this process.)
  const { stdout } = await execFileAsync(
    PYTHON,
    [
      "-c",
      "import sys, urllib.request; r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={'X-API-Key': sys.argv[2]})); print(len(r.read()), len(r.headers['X-SVC-Field']))",
      `${srv.url}/api/export/forecast~global/npy?var=t2m&${BOX}`,
      key,
    ],
    { encoding: "utf8" },
  );
  const got = stdout.trim().split(" ").map(Number);
  assert.equal(got[0], Number(r.lines.find((l) => /^content-length:/i.test(l))!.split(":")[1]));
  assert.ok(got[1] < HEADER_LINE_MAX);
  const point = await raw("/point?lat=10&lon=20&var=t2m&group=forecast/global");
  assert.equal(point.status, 200);
  assert.ok(point.body.length < 4096, `/point is ${point.body.length} bytes`);
});

test("the reply helpers refuse a header line over the budget; X-SVC-Field cuts text with a note", () => {
  assert.throws(() => checkHeaderLines({ "X-Big": "v".repeat(HEADER_LINE_MAX) }), HeaderTooLargeError);
  checkHeaderLines({ "X-Fits": "v".repeat(HEADER_LINE_MAX - "X-Fits: ".length) });
  const header = fieldHeader({ name: "t2m", crs: { crs_wkt: "w".repeat(100_000) }, lat: { values: [1, 2, 3] } });
  assert.ok(header.length + "X-SVC-Field: ".length <= HEADER_LINE_MAX);
  const f = JSON.parse(header);
  assert.match(f.crs.crs_wkt, /\[cut: 100000 characters in the store, \d+ shown\]$/);
  assert.deepEqual(f.lat.values, [1, 2, 3]);
});
