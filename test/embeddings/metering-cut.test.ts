// Metered responses cut short are charged for what was handed to the connection, by the same
// per-MiB rule as whole ones; revalidation of metered item metadata is free only for a named ETag.
// The client is a real one with a 4 KiB receive buffer (Python's socket, SO_RCVBUF set before
// connecting) that reads part of a .npy and then resets the connection.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { cleanup, get, PYTHON, sampleStore, type TestServer, until } from "../helpers/harness.ts";
import { expectedItems, publishedServer, writeBigItem } from "./fixtures.ts";

const MIB = 1024 * 1024;
const BASE = 2;
// 128 × 128 × 128 float32: 8 MiB of data, a whole slice costs BASE + 8.
const SHAPE: [number, number, number] = [128, 128, 128];
const DATA = SHAPE[0] * SHAPE[1] * SHAPE[2] * 4;
const FULL = BASE + DATA / MIB;
const MAP = expectedItems().find((n) => n.includes("~map~"))!;
// The most the server's kernel may buffer for one connection (tcp_wmem's maximum): a client that
// read `n` bytes cannot have had more than n + this handed over, so the charge must stay below the
// whole when that is short of the body (4 MiB on a stock Linux, so 2 MiB read of 8 MiB is).
const SEND_BUFFER_MAX = Number(readFileSync("/proc/sys/net/ipv4/tcp_wmem", "utf8").trim().split(/\s+/)[2]);
const mustBePartial = (read: number) => read + SEND_BUFFER_MAX + 64 * 1024 < DATA;

let storeDir: string;
let srv: TestServer;
let big: string;

before(async () => {
  storeDir = await sampleStore();
  big = (await writeBigItem(storeDir, SHAPE)).name;
  srv = await publishedServer(storeDir, { credit_cost_npy_base: BASE });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

const ledger = () => srv.running.ctx.ledger;

/**
 * A raw GET with a 4 KiB receive buffer: reads `stop` body bytes, then resets (RST), or with
 * `stall` stops reading until the server gives up on it (the connection closes), then resets.
 */
const CLIENT = String.raw`
import json, socket, struct, sys, time
host, port, path, key, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
stall = len(sys.argv) > 6
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\n\r\n" % (path, key)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
head, body = buf.split(b"\r\n\r\n", 1)
got = len(body)
while got < stop:
    chunk = s.recv(min(4096, stop - got))
    if not chunk:
        break
    got += len(chunk)
if stall:
    # Not reading: the server's send buffer fills and stays full until its stall limit drops us.
    # Then drain what the kernel still holds, to see the connection end.
    time.sleep(float(sys.argv[6]))
    s.settimeout(30)
    try:
        while s.recv(65536):
            pass
    except OSError:
        pass
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print(json.dumps({"head": head.decode(), "got": got}))
`;

function readThenReset(
  path: string,
  key: string,
  stop: number,
  opts: { server?: TestServer; stallSeconds?: number } = {},
): Promise<{ head: string; got: number }> {
  const u = new URL((opts.server ?? srv).url);
  const stall = opts.stallSeconds === undefined ? [] : [String(opts.stallSeconds)];
  return new Promise((ok, fail) =>
    execFile(PYTHON, ["-c", CLIENT, u.hostname, u.port, path, key, String(stop), ...stall], (err, out) =>
      err ? fail(err) : ok(JSON.parse(out)),
    ),
  );
}

/** The charge the rule gives `sent` body bytes of a .npy with a `header`-byte header. */
const owed = (sent: number, header: number) => (sent === 0 ? 0 : BASE + Math.ceil(Math.max(0, sent - header) / MIB));

describe("a metered .npy cut short by the client", () => {
  for (const share of [0.25, 0.68, 0.93]) {
    test(`read ${share * 100}% with a 4 KiB receive buffer, then reset: charged for what went out`, async (t) => {
      const k = await srv.key(["embeddings"], 100);
      const id = parseKeyId(k)!;
      const stop = Math.floor(share * DATA);
      const r = await readThenReset(`/api/embeddings/npy/${big}`, k, stop);
      assert.match(r.head, /^HTTP\/1.1 200/);
      assert.match(r.head, new RegExp(`x-credits-charged: ${FULL}`, "i"));
      const total = Number(/content-length: (\d+)/i.exec(r.head)![1]);
      const header = total - DATA;
      assert.equal(r.got, stop);
      // Over once the server's access log has it: a response the kernel took in full finished
      // (charged in full); one it did not is settled after its close (the "settled" line).
      const line = await until("the response's access log line", () =>
        srv.logs.find((l) => l.key_id === id && l.route === "/api/embeddings/npy/{name}"),
      );
      if (line.aborted)
        await until("the settlement", () => srv.logs.some((l) => l.event === "settled" && l.key_id === id));
      const [row] = await ledger().usage(id);
      t.diagnostic(`read ${r.got} of ${total} bytes; kernel took ${row.bytes}; charged ${row.cost} of ${FULL}`);
      const balance = await ledger().balance(id);
      assert.equal(balance, 100 - row.cost, "balance and usage row agree");
      // Never less than the MiBs the client itself read, never more than the whole body.
      assert.ok(row.cost >= owed(stop, header), `charged ${row.cost} for ${stop} bytes read`);
      assert.ok(row.cost <= FULL);
      assert.ok(row.bytes <= total);
      // A settled row is charged exactly by the rule for the bytes it records.
      if (row.bytes < total) assert.equal(row.cost, owed(row.bytes, header));
      if (share === 0.25 && mustBePartial(stop)) {
        // 2 MiB read: the server's send buffer (4 MiB at most here) cannot have taken the rest,
        // so part of the charge came back.
        assert.ok(row.cost < FULL, `charged ${row.cost}: the cut was not settled`);
        assert.ok(row.bytes < total);
      }
      const settled = srv.logs.find((l) => l.event === "settled" && l.key_id === id);
      if (settled) {
        assert.equal(settled.credits, row.cost);
        assert.equal(settled.returned, FULL - row.cost);
        assert.equal(settled.bytes_sent, row.bytes);
      }
    });
  }
});

describe("a metered .npy whose client stops reading", () => {
  test("dropped after send_stall_ms and charged for what went out, not in full and not nothing", async (t) => {
    const stalling = await publishedServer(storeDir, { credit_cost_npy_base: BASE, send_stall_ms: 400 });
    try {
      const k = await stalling.key(["embeddings"], 100);
      const id = parseKeyId(k)!;
      const stop = 2 * MIB;
      const r = await readThenReset(`/api/embeddings/npy/${big}`, k, stop, { server: stalling, stallSeconds: 3 });
      const header = Number(/content-length: (\d+)/i.exec(r.head)![1]) - DATA;
      await until("the stall", () => stalling.logs.some((l) => l.event === "response-stall"));
      await until("the settlement", () => stalling.logs.some((l) => l.event === "settled" && l.key_id === id));
      const [row] = await stalling.running.ctx.ledger.usage(id);
      t.diagnostic(`read ${stop}; kernel took ${row.bytes}; charged ${row.cost} of ${FULL}`);
      assert.ok(row.cost >= owed(stop, header), `charged ${row.cost} for ${stop} bytes read`);
      if (mustBePartial(stop)) assert.ok(row.cost < FULL, `charged ${row.cost} of ${FULL}`);
      assert.equal(await stalling.running.ctx.ledger.balance(id), 100 - row.cost);
    } finally {
      await stalling.close();
    }
  });
});

describe("revalidating metered item metadata", () => {
  test("a named current ETag is a free 304; If-None-Match: * is a charged 200", async () => {
    const k = await srv.key(["embeddings"], 10);
    const id = parseKeyId(k)!;
    const first = await get(`${srv.url}/api/embeddings/item/${MAP}`, { "X-API-Key": k });
    assert.equal(first.status, 200);
    const etag = first.headers.get("etag")!;
    assert.match(etag, /^"/);
    assert.equal(await ledger().balance(id), 9);

    const again = await get(`${srv.url}/api/embeddings/item/${MAP}`, { "X-API-Key": k, "If-None-Match": etag });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("x-credits-charged"), null);
    assert.equal(await ledger().balance(id), 9);

    const star = await get(`${srv.url}/api/embeddings/item/${MAP}`, { "X-API-Key": k, "If-None-Match": "*" });
    assert.equal(star.status, 200, "* must not reveal the ETag for free");
    assert.equal(star.headers.get("x-credits-charged"), "1");
    assert.deepEqual(star.body, first.body);
    assert.equal(await ledger().balance(id), 8);
    assert.equal((await ledger().usage(id)).length, 2);
  });
});
