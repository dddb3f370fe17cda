// Test harness: real sample stores on disk, a real server on a loopback port, real keys.
import { mkdtempSync, rmSync } from "node:fs";
import { get as httpGet, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { after, before } from "node:test";
import { DEFAULTS, type Settings } from "../../src/config.ts";
import { type Running, startServer } from "../../src/http/server.ts";
import { warmUpOf } from "../../src/http/warm-up.ts";
import { writeSample } from "../../src/sample/index.ts";

export function tempDir(prefix = "gridcast-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function sampleStore(opts: Record<string, unknown> = {}): Promise<string> {
  const dir = join(tempDir(), "store");
  await writeSample(dir, { preset: "tiny", seed: 7, ...opts } as Parameters<typeof writeSample>[1]);
  return dir;
}

export interface TestServer {
  running: Running;
  url: string;
  dir: string;
  logs: Record<string, unknown>[];
  key(scopes?: string[], credits?: number, extra?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function testServer(store: string, overrides: Partial<Settings> = {}): Promise<TestServer> {
  const dir = tempDir();
  const logs: Record<string, unknown>[] = [];
  const settings: Settings = {
    ...DEFAULTS,
    store,
    out: join(dir, "output"),
    db: join(dir, "ledger.db"),
    port: 0,
    ...overrides,
  };
  // A PostgreSQL ledger's settlement journal defaults to a directory relative to the working
  // directory (the repository, in tests): each test server keeps its own in its temp dir.
  if (/^postgres(ql)?:\/\//.test(settings.db) && !overrides.settlement_journal) {
    settings.settlement_journal = join(dir, "settlements");
  }
  const running = await startServer(settings, { log: (e) => logs.push(e) });
  // Tests block the event loop at times (execFileSync of python on 32 MiB, on a loaded machine
  // for seconds). With Node's 5 s keep-alive the server can then drop an idle connection just as
  // fetch reuses it: ECONNRESET on a request that did nothing wrong. Idle connections stay open
  // for the life of the test server instead; close() ends them.
  running.server.keepAliveTimeout = 10 * 60_000;
  // As a load balancer does (it waits for /readyz): the server's warm-up (warm-up.ts: groups
  // discovered, copies looked up) is done before a test asks anything, so a test that counts reads
  // or cache misses counts its own. Bounded, for tests whose store stalls on purpose.
  await Promise.race([warmUpOf(running.ctx), new Promise((ok) => setTimeout(ok, 5000).unref())]);
  return {
    running,
    url: running.url,
    dir,
    logs,
    async key(scopes = ["weather", "embeddings"], credits = 1000, extra = {}) {
      const created = await running.ctx.ledger.createKey({ name: "test", scopes, credits, rate: 0, ...extra } as never);
      return created.key;
    },
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Got {
  status: number;
  headers: Headers;
  body: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  json: () => any;
}

export async function get(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Got> {
  const res = await fetch(url, { headers, method });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body.toString("utf8")) };
}

/** Send a raw request line over a socket, so no client normalises the path first. */
export function rawGet(base: string, rawPath: string, headers: Record<string, string> = {}): Promise<Got> {
  const u = new URL(base);
  return new Promise((ok, fail) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: "GET", path: rawPath, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c) => parts.push(c));
      res.on("end", () => {
        const body = Buffer.concat(parts);
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        ok({ status: res.statusCode ?? 0, headers: h, body, json: () => JSON.parse(body.toString("utf8")) });
      });
    });
    req.on("error", fail);
    req.end();
  });
}

/**
 * One GET on a connection of its own from the local address `from` (another client, as the
 * server counts clients), with the key when given; the body read whole as text.
 */
export function getFrom(
  base: string,
  path: string,
  from: string,
  key?: string,
): Promise<{ status: number; retry?: string; body: string }> {
  const u = new URL(base);
  return new Promise((ok, fail) => {
    const headers: Record<string, string> = key ? { "X-API-Key": key } : {};
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, localAddress: from, agent: false, headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => ok({ status: res.statusCode ?? 0, retry: res.headers["retry-after"], body }));
      },
    );
    req.on("error", fail);
    req.end();
  });
}

/** numpy/xarray tests run Debian's python3 (not a pyenv one without the packages). */
export const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";

/** Remove test directories; a sample store goes with the temporary parent made for it. */
export function cleanup(...dirs: string[]): void {
  for (const d of dirs) rmSync(basename(d) === "store" ? dirname(d) : d, { recursive: true, force: true });
}

/**
 * Polls `check` until it returns a value other than undefined/false, or fails after `ms`. For
 * state that becomes true "soon" (a publish seen by a server, a log line written): the deadline
 * is a hang detector sized for a loaded machine, not a speed requirement.
 */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  ms = 20_000,
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as Exclude<T, false | undefined>;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((ok) => setTimeout(ok, 25));
  }
}

/** A GET read to its end: status, the declared Content-Length, the bytes that arrived, and whether the body was cut. */
export function getToEnd(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; declared: number; got: Buffer; ended: "complete" | "cut" }> {
  return new Promise((ok, fail) => {
    const req = httpGet(url, { headers }, (res) => {
      const parts: Buffer[] = [];
      let done = false;
      const finish = (ended: "complete" | "cut") => {
        if (done) return;
        done = true;
        ok({
          status: res.statusCode ?? 0,
          declared: Number(res.headers["content-length"]),
          got: Buffer.concat(parts),
          ended,
        });
      };
      res.on("data", (c) => parts.push(c));
      res.on("end", () => finish(res.complete ? "complete" : "cut"));
      res.on("aborted", () => finish("cut"));
      res.on("error", () => finish("cut"));
      res.on("close", () => finish(res.complete ? "complete" : "cut"));
    });
    req.on("error", fail);
    req.setTimeout(20_000, () => req.destroy(new Error("timed out: a cut body left the client waiting")));
  });
}

/**
 * A sample store served over HTTP for the file's tests, with one key of the given scopes: started
 * in a before() hook, closed and removed in after(). Read its fields inside tests.
 */
export function sampleServer(scopes: string[]): { storeDir: string; srv: TestServer; key: string } {
  const s = {} as { storeDir: string; srv: TestServer; key: string };
  before(async () => {
    s.storeDir = await sampleStore();
    s.srv = await testServer(s.storeDir);
    s.key = await s.srv.key(scopes);
  });
  after(async () => {
    await s.srv.close();
    cleanup(s.storeDir);
  });
  return s;
}
