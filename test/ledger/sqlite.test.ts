import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { Worker } from "node:worker_threads";
import * as errors from "../../src/errors.ts";
import { KeyCachingLedger } from "../../src/ledger/key-cache.ts";
import { openLedger } from "../../src/ledger/open.ts";
import { ReopeningLedger } from "../../src/ledger/reopening.ts";
import { ThreadedSqliteLedger } from "../../src/ledger/sqlite-thread.ts";
import type { ChargeRequest, ChargeResult, Ledger } from "../../src/ledger/types.ts";
import { type Backend, ledgerSuite } from "./suite.ts";

/** Ledger.charge on a SqliteLedger living in a worker thread (its own DatabaseSync connection). */
function workerLedger(file: string): Pick<Ledger, "charge" | "close"> {
  const worker = new Worker(new URL("./sqlite-worker.ts", import.meta.url), { workerData: { file } });
  const pending = new Map<number, { resolve: (r: ChargeResult) => void; reject: (e: unknown) => void }>();
  let next = 0;
  worker.on(
    "message",
    (msg: {
      id: number;
      result?: ChargeResult;
      error?: { name: string; message: string; extensions: errors.Extensions };
    }) => {
      const p = pending.get(msg.id)!;
      pending.delete(msg.id);
      if (msg.result) return p.resolve(msg.result);
      // Rebuild the typed error so the suite's instanceof checks see what the ledger threw.
      const Cls =
        (errors as unknown as Record<string, typeof errors.GridcastError>)[msg.error!.name] ?? errors.GridcastError;
      p.reject(new Cls(msg.error!.message, msg.error!.extensions));
    },
  );
  worker.on("error", (e) => {
    for (const p of pending.values()) p.reject(e);
  });
  return {
    charge: (req: ChargeRequest) =>
      new Promise<ChargeResult>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, req });
      }),
    close: async () => {
      const exited = new Promise((r) => worker.once("exit", r));
      worker.postMessage("close");
      await exited;
    },
  };
}

ledgerSuite("sqlite", async (): Promise<Backend> => {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-ledger-"));
  // A nested path checks that openLedger creates the parent directory.
  const file = join(dir, "nested", "ledger.db");
  return {
    open: () => openLedger(file),
    second: async () => workerLedger(file),
    keyRows: async () => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        return db.prepare("SELECT * FROM keys").all();
      } finally {
        db.close();
      }
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

// The same contract through the wrappers the server puts around its ledger.
ledgerSuite("sqlite as served (reopening, key cache)", async (): Promise<Backend> => {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-ledger-"));
  const file = join(dir, "ledger.db");
  return {
    open: async () => new KeyCachingLedger(new ReopeningLedger(() => openLedger(file))),
    second: async () => workerLedger(file),
    keyRows: async () => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        return db.prepare("SELECT * FROM keys").all();
      } finally {
        db.close();
      }
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

test("sqlite: a file that cannot be opened gives LedgerUnavailableError without the path", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-ledger-"));
  try {
    // A directory is not a database file.
    await assert.rejects(openLedger(dir), (e) => {
      assert.ok(e instanceof errors.LedgerUnavailableError);
      assert.ok(!e.message.includes(dir));
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: the file is in WAL mode", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-ledger-"));
  try {
    const ledger = await openLedger(join(dir, "l.db"));
    await ledger.close();
    const db = new DatabaseSync(join(dir, "l.db"));
    assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite: a crashed ledger thread is replaced; calls work again and the file is intact", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-ledger-"));
  const workers: Worker[] = [];
  const ledger = new ReopeningLedger(() =>
    ThreadedSqliteLedger.open(join(dir, "l.db"), { onWorker: (w) => workers.push(w) }),
  );
  try {
    const { record } = await ledger.createKey({ name: "crash", scopes: ["weather"], credits: 5, rate: 0 });
    assert.equal(workers.length, 2);
    await workers[0].terminate(); // the writer thread, as a crash would end it
    let balance: number | undefined;
    for (let i = 0; i < 40 && balance === undefined; i++) {
      try {
        balance = await ledger.addCredits(record.id, 1);
      } catch (e) {
        assert.ok(e instanceof errors.LedgerUnavailableError, String(e));
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.equal(balance, 6);
    assert.equal(workers.length, 4, "two new threads");
    assert.equal(await ledger.balance(record.id), 6);
  } finally {
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
