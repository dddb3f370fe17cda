// Settlements that survive a ledger outage. A metered response cut short is settled down to what
// went out (http/metering.ts); when the ledger cannot take that settlement (a sqlite write lock
// held by another process, PostgreSQL down), the refund would otherwise be lost for good and the
// usage row would keep the whole body's bytes. Instead the settlement is written to a journal on
// local disk, one small file per settlement (named by its request id, fsynced), and retried until
// the ledger takes it, with backoff, also after a restart: the next server to start with the same
// journal picks the files up. A settlement only ever lowers a charge to the same value, so
// retrying one that did land, or two servers retrying the same file, changes nothing.
//
// The journal holds only settlements that failed: its size, and the cost of a retry round, grow
// with the outage, never with the number of requests served.
//
// A crash (SIGKILL, the machine lost) ends responses without any settlement at all. So each
// metered response in flight keeps a record under inflight/: written before its headers go out,
// rewritten each time what went out steps its cost up (at least once per MiB of a .npy), and
// removed once the response is settled. Each record is handed to the system before the next
// piece goes out (a killed process leaves it behind); it is fsynced at most once per
// INFLIGHT_SYNC_MS of a response (a lost machine leaves the last one synced), since an fsync
// costs milliseconds, a MiB on loopback about one. A server that starts settles the records left by
// processes of its host that are gone: to what their bytes delivered cost, as a cut response is
// settled. The records are as many as the responses in flight, and each costs one small write per
// step of its charge.

import { mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { isPostgresUrl } from "./open.ts";
import type { Ledger } from "./types.ts";

/** First wait before a journaled settlement is retried; doubled after each failed round. */
export const RETRY_FIRST_MS = 1000;
/** Longest wait between retry rounds. */
export const RETRY_MAX_MS = 30_000;
/** Where the journal is for a PostgreSQL ledger when no settlement_journal is set (working directory). */
export const POSTGRES_JOURNAL_DIR = "gridcast-settlements";

export interface Settlement {
  keyId: string;
  requestId: string;
  cost: number;
  bytes: number;
}

/** The journal directory: the setting, else next to a sqlite ledger file, else POSTGRES_JOURNAL_DIR. */
export function journalDir(setting: string, db: string): string {
  if (setting) return setting;
  return isPostgresUrl(db) ? POSTGRES_JOURNAL_DIR : `${db}.settlements`;
}

/** A metered response in flight: what settling it now would keep, and which process serves it. */
export interface InFlight extends Settlement {
  host: string;
  pid: number;
}

/** Milliseconds between fsyncs of one response's in-flight record (the rewrites between are not synced). */
export const INFLIGHT_SYNC_MS = 1000;

/** The directory of in-flight records inside a journal. */
export const INFLIGHT_DIR = "inflight";

/** Whether process `pid` of this host is still running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Request ids are UUIDs; anything else never becomes a file name. */
const SAFE_NAME = /^[A-Za-z0-9-]{1,64}$/;

export class SettlementJournal {
  readonly dir: string;
  readonly #ledger: Pick<Ledger, "settle">;
  readonly #log: (e: Record<string, unknown>) => void;
  #timer: NodeJS.Timeout | undefined;
  #waitMs = RETRY_FIRST_MS;
  #round: Promise<void> | undefined;
  #closed = false;

  constructor(dir: string, ledger: Pick<Ledger, "settle">, log: (e: Record<string, unknown>) => void) {
    this.dir = dir;
    this.#ledger = ledger;
    this.#log = log;
  }

  /**
   * Retries whatever an earlier run left in the journal (called once at start), after settling
   * the responses a crashed process of this host left in flight.
   */
  async start(): Promise<void> {
    await this.#settleOrphans();
    if ((await this.#names()).length > 0) this.#schedule(0);
  }

  /**
   * Records (or updates) a metered response in flight: settled to `cost` and `bytes` should this
   * process die before it settles it. Once the promise resolves the record is the system's (it
   * survives this process); with `sync` it is also on disk (it survives the machine).
   */
  async inFlight(s: Settlement, sync: boolean): Promise<void> {
    const record: InFlight = { ...s, host: hostname(), pid: process.pid };
    await this.#write(join(this.dir, INFLIGHT_DIR), s.requestId, record, sync);
  }

  /** The response is settled (or kept whole): its in-flight record goes. */
  async landed(requestId: string): Promise<void> {
    if (!SAFE_NAME.test(requestId)) return;
    await unlink(join(this.dir, INFLIGHT_DIR, `${requestId}.json`)).catch(() => undefined);
  }

  /** In-flight records of this host's processes that are gone: settled as cut responses. */
  async #settleOrphans(): Promise<void> {
    const dir = join(this.dir, INFLIGHT_DIR);
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith(".json"));
    } catch {
      return;
    }
    const host = hostname();
    for (const name of names) {
      let r: InFlight;
      try {
        r = JSON.parse(await readFile(join(dir, name), "utf8"));
      } catch {
        continue;
      }
      if (r.host !== host || r.pid === process.pid || alive(r.pid)) continue;
      const s: Settlement = { keyId: r.keyId, requestId: r.requestId, cost: r.cost, bytes: r.bytes };
      const returned = await this.settle(s);
      await this.landed(r.requestId);
      this.#log({
        level: "warn",
        event: "settled-after-crash",
        request_id: r.requestId,
        key_id: r.keyId,
        credits: r.cost,
        bytes_sent: r.bytes,
        ...(returned === undefined ? { journaled: true } : { returned }),
      });
    }
  }

  /**
   * Settles on the ledger now; when it fails, journals the settlement and retries it later.
   * The credits returned, or undefined when the settlement was journaled.
   */
  async settle(s: Settlement): Promise<number | undefined> {
    try {
      return await this.#ledger.settle(s.keyId, s.requestId, s.cost, s.bytes);
    } catch (e) {
      await this.#keep(s);
      this.#log({
        level: "warn",
        event: "settle-journaled",
        request_id: s.requestId,
        key_id: s.keyId,
        error: String(e),
      });
      this.#schedule(this.#waitMs);
      return undefined;
    }
  }

  /** Settlements waiting in the journal now. */
  async pending(): Promise<number> {
    return (await this.#names()).length;
  }

  /** Stops retrying (what is left stays in the journal for the next start). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#round;
  }

  async #keep(s: Settlement): Promise<void> {
    await this.#write(this.dir, s.requestId, s);
  }

  /** `doc` as <dir>/<requestId>.json, whole or not at all (written aside, fsynced unless told not to, renamed). */
  async #write(dir: string, requestId: string, doc: unknown, sync = true): Promise<void> {
    if (!SAFE_NAME.test(requestId)) throw new Error(`unexpected request id ${JSON.stringify(requestId)}`);
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${requestId}.json`);
    const tmp = `${file}.${process.pid}.tmp`;
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(JSON.stringify(doc));
      if (sync) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  }

  async #names(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((n) => n.endsWith(".json"));
    } catch {
      return [];
    }
  }

  #schedule(ms: number): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#round = this.#retry().finally(() => (this.#round = undefined));
    }, ms);
    this.#timer.unref();
  }

  async #retry(): Promise<void> {
    let failed = false;
    for (const name of await this.#names()) {
      if (this.#closed) return;
      const file = join(this.dir, name);
      let s: Settlement;
      try {
        s = JSON.parse(await readFile(file, "utf8"));
      } catch {
        continue; // another server took it meanwhile, or it is being written
      }
      try {
        const returned = await this.#ledger.settle(s.keyId, s.requestId, s.cost, s.bytes);
        await unlink(file).catch(() => undefined);
        this.#log({
          level: "info",
          event: "settled",
          from_journal: true,
          request_id: s.requestId,
          key_id: s.keyId,
          credits: s.cost,
          bytes_sent: s.bytes,
          returned,
        });
      } catch {
        failed = true;
      }
    }
    this.#waitMs = failed ? Math.min(RETRY_MAX_MS, this.#waitMs * 2) : RETRY_FIRST_MS;
    if (failed) this.#schedule(this.#waitMs);
  }
}
