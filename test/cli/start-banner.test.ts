// The demo key's line in `gridcast start`'s banner tells the balance the key holds: 1000 credits
// when it is new, and after a restart what is left of them (here after two metered item reads),
// not the 1000 it started with. Run on the tiny sample store so it stays short; every request is
// retried on a connection error, so a loaded machine slows it but does not fail it.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, type Got, get, sampleStore, tempDir, until } from "../helpers/harness.ts";

const BIN = resolve(import.meta.dirname, "../../bin/gridcast");
const dir = tempDir("gridcast-start-banner-");
let store: string;
before(async () => {
  store = await sampleStore();
});
after(() => cleanup(dir, store));

interface Started {
  child: ChildProcess;
  out: () => string;
}

function start(): Started {
  const args = [BIN, "start", "--port", "0", "--quiet", "--store", store];
  args.push("--out", join(dir, "output"), "--db", join(dir, "ledger.db"));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GRIDCAST_")));
  const child = spawn(process.execPath, args, { cwd: dir, detached: true, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.resume();
  return { child, out: () => out };
}

async function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null || s.child.pid === undefined) return;
  const exited = new Promise((ok) => s.child.on("exit", ok));
  process.kill(-s.child.pid, "SIGTERM");
  await exited;
}

/** A GET that answers undefined on a connection error (a loaded server may reset one). */
async function tryGet(url: string, headers: Record<string, string> = {}): Promise<Got | undefined> {
  try {
    return await get(url, headers);
  } catch {
    return undefined;
  }
}

const LONG = 600_000; // hang detectors sized for a machine at load 20+, never speed requirements
const keyLine = (s: Started) =>
  until("the demo key line", () => /demo key +(gck_\S+) +\((.*)\)/.exec(s.out()) ?? undefined, LONG);
const urlOf = (s: Started) =>
  until("the serving line", () => /gridcast is serving on (http:\/\/\S+)/.exec(s.out())?.[1], LONG);

test("start's banner shows the demo key's balance: 1000 to start, then what is left after a restart", async () => {
  const first = start();
  let key: string;
  let left: number;
  try {
    const url = await urlOf(first);
    const [, k, said] = await keyLine(first);
    key = k;
    assert.match(said, /1000 credits to start; new/);
    const H = { "X-API-Key": key };
    // Item reads are metered once a build with the embedding catalogue is published.
    const name = await until(
      "an embedding item listed",
      async () => {
        const r = await tryGet(`${url}/api/embeddings?limit=1`, H);
        return r?.status === 200 ? (r.json().items[0]?.name as string | undefined) : undefined;
      },
      LONG,
    );
    let last: Got | undefined;
    for (let i = 0; i < 2; i++) {
      last = await until(
        "a metered item read",
        async () => {
          const r = await tryGet(`${url}/api/embeddings/item/${name}`, H);
          return r?.status === 200 ? r : undefined;
        },
        LONG,
      );
    }
    left = Number(last!.headers.get("x-credits-remaining"));
    assert.ok(left < 1000, `credits were charged: ${left} left`);
  } finally {
    await stop(first);
  }

  const second = start();
  try {
    const [, again, said] = await keyLine(second);
    assert.equal(again, key, "the same key after the restart");
    assert.match(said, new RegExp(`^weather \\+ embeddings, ${left} credits left; the same as last time,`), said);
  } finally {
    await stop(second);
  }
});
