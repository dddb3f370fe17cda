// What `gridcast start` and `serve` print and where the access log goes. start runs on a real
// terminal (a pty from Python's pty module) and is stopped once it has said what it is about to
// write: the full demo build takes minutes.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, sampleStore, tempDir, until } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const NODE = process.execPath;

let store: string;
let dir: string;
before(async () => {
  store = await sampleStore();
  dir = tempDir();
});
after(() => cleanup(store, dir));

/** Runs the CLI with a terminal as stdin/stdout/stderr; collects what the terminal shows. */
function onTerminal(args: string[]): { child: ChildProcess; shown: () => string } {
  // The child gets the terminal; SIGTERM to this wrapper is passed on to it.
  const script = [
    "import os, pty, signal, sys",
    "pid, fd = pty.fork()",
    "if pid == 0:",
    "    os.execv(sys.argv[1], sys.argv[1:])",
    "signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))",
    "while True:",
    "    try:",
    "        data = os.read(fd, 65536)",
    "    except OSError:",
    "        break",
    "    if not data:",
    "        break",
    "    sys.stdout.buffer.write(data)",
    "    sys.stdout.buffer.flush()",
    "os.waitpid(pid, 0)",
  ].join("\n");
  const child = spawn(PYTHON, ["-c", script, NODE, "bin/gridcast", ...args], { cwd: ROOT });
  let text = "";
  child.stdout?.on("data", (d) => (text += d));
  child.stderr?.on("data", (d) => (text += d));
  return { child, shown: () => text };
}

/** `gridcast serve` on the sample store on a free port, with `args`; `url` once it says it serves. */
function serveChild(args: string[]) {
  const child = spawn(NODE, ["bin/gridcast", "serve", "--port", "0", "--store", store, ...args], { cwd: ROOT });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const url = until("serving line", () => /serving on (http:\/\/\S+)/.exec(stderr)?.[1]);
  return { child, url, stdout: () => stdout, stderr: () => stderr };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((ok) => child.on("exit", ok));
  child.kill("SIGTERM");
  await exited;
}

test("start on a terminal: says the demo store's size on disk before writing it", async () => {
  const where = join(dir, "a");
  const args = ["start", "--port", "0", "--store", join(where, "store"), "--out", join(where, "out")];
  const { child, shown } = onTerminal([...args, "--db", join(where, "ledger.db")]);
  try {
    // To its end: a terminal may hand a line over in more than one read.
    await until("the demo store line", () => /writing the demo store[^\n]*\n/.test(shown()), 60_000);
    assert.match(shown(), /writing the demo store to \S+: about \d+ MiB on disk \(\d+(\.\d)? MiB free there\)/);
  } finally {
    await stop(child);
  }
});

test("start on a terminal: estimates the full build's disk use once the first map is up; the access log goes to a file", async () => {
  const where = join(dir, "b");
  const db = join(where, "ledger.db");
  const { child, shown } = onTerminal([
    "start",
    "--port",
    "0",
    "--store",
    store,
    "--out",
    join(where, "out"),
    "--db",
    db,
  ]);
  try {
    const line =
      /the full build: ([\d,]+) tiles and ([\d,]+) @2x tiles \((\d+) layer-lead times, zoom 0\.\.7\) into \S+: about ([\d.]+) MiB on disk \(tiles ([\d.]+) MiB, @2x ([\d.]+) MiB, folders ([\d.]+) MiB, point copies ([\d.]+) MiB, documents ([\d.]+) MiB; measured on (\d+) tiles drawn\)/;
    await until("the estimate", () => line.test(shown()), 600_000);
    const text = shown();
    const estimate = line.exec(text)!;
    const count = (s: string) => Number(s.replaceAll(",", ""));
    assert.ok(count(estimate[1]) > 0 && count(estimate[2]) > 0 && Number(estimate[10]) > 0);
    // Every part is there and the whole is their sum (each printed rounded).
    const parts = estimate.slice(5, 10).map(Number);
    assert.ok(
      parts.every((p) => p > 0),
      estimate[0],
    );
    assert.ok(Math.abs(parts.reduce((a, b) => a + b, 0) - Number(estimate[4])) <= 3, estimate[0]);
    // The first map does not wait for it: it is said after the first stage is published.
    const first = text.search(/published [^\n]*\(1 of \d+\)/);
    assert.ok(first >= 0 && first < text.indexOf(estimate[0]), text.slice(0, 800));
    // On a terminal the JSON access log is kept off it: its file is opened beside the ledger.
    assert.ok(existsSync(join(where, "access.log")));
  } finally {
    await stop(child);
  }
  assert.doesNotMatch(shown(), /"request_id"/);
});

test("serve --access-log FILE: access lines (with static paths) go to the file, none to stdout", async () => {
  const log = join(dir, "logs", "access.log");
  const { child, stdout, url: serving } = serveChild(["--db", join(dir, "c.db"), "--access-log", log]);
  try {
    const url = await serving;
    assert.equal((await get(`${url}/healthz`)).status, 200);
    assert.equal((await get(`${url}/missing.png`)).status, 404);
    const lines = await until("two access lines", () => {
      const l = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : [];
      return l.length >= 2 ? l.map((x) => JSON.parse(x)) : undefined;
    });
    assert.deepEqual(
      lines.map((e: { route: string; status: number; path?: string }) => [e.route, e.status, e.path]),
      [
        ["/healthz", 200, undefined],
        ["static", 404, "/missing.png"],
      ],
    );
    assert.equal(stdout(), "");
  } finally {
    await stop(child);
  }
});

test("serve: every answered request's access line is written, once and in order per connection, by the time SIGTERM's stop exits (file and stdout)", async () => {
  for (const sink of ["file", "stdout"] as const) {
    const log = join(dir, `burst-${sink}.log`);
    const db = ["--db", join(dir, `burst-${sink}.db`)];
    const { child, stdout, stderr, url: serving } = serveChild(sink === "file" ? [...db, "--access-log", log] : db);
    try {
      const url = await serving;
      // 8 keep-alive connections, 150 requests each, as fast as the server answers: many answers
      // share a turn of its event loop, so their lines share a write.
      const ids: string[][] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, c) => {
          ids[c] = [];
          for (let i = 0; i < 150; i++) {
            const r = await fetch(`${url}/healthz?c=${c}&i=${i}`);
            await r.arrayBuffer();
            ids[c].push(r.headers.get("x-request-id") ?? "");
          }
        }),
      );
      // Stopped at once: nothing waits for the log to catch up but the stop itself.
      await stop(child);
      assert.equal(child.exitCode, 0, stderr());
      const text = sink === "file" ? readFileSync(log, "utf8") : stdout();
      const logged = text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { request_id?: string; route?: string })
        .filter((e) => e.route === "/healthz")
        .map((e) => e.request_id);
      assert.equal(logged.length, 8 * 150, `${sink}: ${logged.length} lines`);
      const at = new Map(logged.map((id, n) => [id, n]));
      assert.equal(at.size, logged.length, `${sink}: a line written twice`);
      for (const conn of ids) {
        const order = conn.map((id) => at.get(id));
        assert.ok(
          order.every((n, i) => n !== undefined && (i === 0 || n > order[i - 1]!)),
          `${sink}: lines missing or out of order`,
        );
      }
    } finally {
      await stop(child);
    }
  }
});
