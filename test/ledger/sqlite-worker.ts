// A second sqlite connection in its own thread, so the two-writer race contends for the file lock
// for real instead of taking turns on one thread. Started by sqlite.test.ts; inert when run alone.
import { parentPort, workerData } from "node:worker_threads";
import { GridcastError } from "../../src/errors.ts";
import { SqliteLedger } from "../../src/ledger/sqlite.ts";
import type { ChargeRequest } from "../../src/ledger/types.ts";

if (parentPort) {
  const port = parentPort;
  const ledger = new SqliteLedger(workerData.file as string);
  port.on("message", async (msg: { id: number; req: ChargeRequest } | "close") => {
    if (msg === "close") {
      await ledger.close();
      port.close();
      return;
    }
    try {
      port.postMessage({ id: msg.id, result: await ledger.charge(msg.req) });
    } catch (e) {
      const err = e instanceof GridcastError ? e : new GridcastError(String(e));
      port.postMessage({ id: msg.id, error: { name: err.name, message: err.message, extensions: err.extensions } });
    }
  });
}
