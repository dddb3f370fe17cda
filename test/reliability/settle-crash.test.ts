// A crash never keeps a full charge: a real `gridcast serve` process is killed (SIGKILL) while a
// 24 MiB latent slice (25 credits, charged before the headers) is partly delivered to a client
// that read 9 MiB of it and stopped. The response's in-flight record (settlement-journal.ts),
// rewritten at each MiB that went out, lets the next server on the same ledger settle it: the
// key gets back what was not delivered, and the usage row records the bytes delivered (within a
// MiB of what the kernel took), not the whole body.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { writeEmbeddingIndexes } from "../../src/embeddings/index-writer.ts";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { openLedger } from "../../src/ledger/open.ts";
import { Store } from "../../src/store/store.ts";
import { writeBigItem } from "../embeddings/fixtures.ts";
import { cleanup, PYTHON, sampleStore, tempDir, testServer, until } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const MIB = 1024 * 1024;
// 256 × 256 × 96 float32: 24 MiB of data; a whole slice costs 1 + 24.
const SHAPE: [number, number, number] = [256, 256, 96];
const FULL = 1 + 24;
const READ = 9 * MIB;

/** Reads the headers and READ bytes of body, says how many, then stops reading (until killed). */
const CLIENT = `
import socket, sys, time
host, port, path, key, want = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(f"GET {path} HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nX-API-Key: {key}\\r\\n\\r\\n".encode())
got = b""
while b"\\r\\n\\r\\n" not in got:
    got += s.recv(65536)
head, body = got.split(b"\\r\\n\\r\\n", 1)
n = len(body)
while n < want:
    part = s.recv(min(65536, want - n))
    if not part:
        break
    n += len(part)
print(head.split(b"\\r\\n", 1)[0].decode(), n, flush=True)
time.sleep(3600)
`;

let storeDir: string;
let item: string;
const dir = tempDir();
const db = join(dir, "ledger.db");
const out = join(dir, "out");

before(async () => {
  storeDir = await sampleStore();
  item = (await writeBigItem(storeDir, SHAPE)).name;
  await writeEmbeddingIndexes(new Store(storeDir), join(out, "current"));
});
after(() => cleanup(storeDir, dir));

function serve(): Promise<{ child: ChildProcess; url: string }> {
  const env = { ...process.env, GRIDCAST_DB: db, GRIDCAST_OUT: out };
  const child = spawn(process.execPath, ["bin/gridcast", "serve", "--port", "0", "--store", storeDir], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((ok, fail) => {
    let text = "";
    const on = (d: Buffer) => {
      text += d.toString();
      const m = /serving on (http:\/\/\S+)/.exec(text);
      if (m) ok({ child, url: m[1] });
    };
    child.stdout!.on("data", on);
    child.stderr!.on("data", on);
    child.on("exit", (code) => fail(new Error(`serve exited ${code}: ${text}`)));
  });
}

test("SIGKILL mid-download: the next server settles the slice to what was delivered", async (t) => {
  const ledger = await openLedger(db);
  const { key } = await ledger.createKey({ name: "crash", scopes: ["embeddings"], credits: 100, rate: 0 } as never);
  await ledger.close();
  const id = parseKeyId(key)!;
  const { child, url } = await serve();
  let client: ChildProcess | undefined;
  let read = 0;
  try {
    const u = new URL(url);
    client = spawn(PYTHON, ["-c", CLIENT, u.hostname, u.port, `/api/embeddings/npy/${item}`, key, String(READ)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = await new Promise<string>((ok) => {
      let text = "";
      client!.stdout!.on("data", (d) => {
        text += String(d);
        if (text.includes("\n")) ok(text);
      });
    });
    assert.match(line, /^HTTP\/1\.1 200 /);
    read = Number(line.trim().split(" ").at(-1));
    assert.ok(read >= READ, line);
    // The server fills the kernel's buffers and waits for the client: then it dies.
    await sleep(1000);
    const exited = new Promise((ok) => child.once("exit", ok));
    child.kill("SIGKILL");
    await exited;
  } finally {
    child.kill("SIGKILL");
    client?.kill("SIGKILL");
  }
  // Killed: the whole charge is still kept, the usage row says the whole body.
  const mid = await openLedger(db);
  assert.equal(await mid.balance(id), 100 - FULL);
  await mid.close();

  const next = await testServer(storeDir, { db, out });
  try {
    const ledger2 = next.running.ctx.ledger;
    await until("the settlement after the restart", async () => (await ledger2.balance(id)) > 100 - FULL, 15_000);
    const [row] = await ledger2.usage(id);
    t.diagnostic(`client read ${read} bytes; usage row ${row.bytes} bytes, ${row.cost} of ${FULL} credits kept`);
    // Delivered: what the client read, plus what the kernel's buffers held for it (a few MiB at
    // most on loopback); recorded to the last MiB step that went out.
    assert.ok(row.bytes >= READ - MIB && row.bytes < READ + 8 * MIB, `usage row records ${row.bytes} bytes`);
    // Its cost by the slice's rule: the base and one per started MiB of data (after a header of
    // a few hundred bytes at most).
    const perRule = 1 + Math.ceil(row.bytes / MIB);
    assert.ok(row.cost === perRule || row.cost === perRule - 1, JSON.stringify(row));
    assert.ok(row.cost < FULL);
    assert.equal(await ledger2.balance(id), 100 - row.cost);
    assert.ok(next.logs.some((l) => l.event === "settled-after-crash" && l.key_id === id));
    assert.deepEqual(
      readdirSync(join(`${db}.settlements`, "inflight")).filter((n) => n.endsWith(".json")),
      [],
    );
  } finally {
    await next.close();
  }
});
