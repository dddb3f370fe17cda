// What a request owes. Each request's record (route, key, credits charged) is kept for the access
// log; a metered reply is charged the cost of its whole body before it goes out, and settled once
// the response is over: kept in full when it finished, cut down to what the bytes the kernel took
// cost when it did not, nothing when the server failed it.
import type { IncomingMessage, ServerResponse } from "node:http";
import { INFLIGHT_SYNC_MS } from "../ledger/settlement-journal.ts";
import type { AppContext, KeyInfo } from "./context.ts";
import { Delivery, flatRule } from "./delivery.ts";
import { describe } from "./error-reply.ts";
import type { Reply, RequestContext, RouteDef } from "./route.ts";

/** One request's record: its route template, key and charge (the access log names them). */
export interface Meta {
  route: string;
  key?: string;
  charged?: number;
  /** A metered response that was charged: settled once it is over (see settle). */
  meter?: Meter;
}

export interface Meter {
  keyId: string;
  requestId: string;
  /** What the charge debited: the cost of the whole body. */
  charged: number;
  /** The whole body's length. */
  bytes: number;
  delivery: Delivery;
  /** The response failed on the server's side (a store read after the headers): nothing is owed. */
  fault: boolean;
  /** The in-flight record being written, if one is (settle waits for it before removing the record). */
  recording?: Promise<void>;
  /** Settling has begun: no in-flight record is written after it. */
  over?: boolean;
}

/** Each request's record, set when it comes in (request-intake.ts). */
export const metaOf = new WeakMap<IncomingMessage, Meta>();

/**
 * Charge a metered reply that is about to be sent: the cost of the whole body, debited at once
 * (a balance that does not cover it is a 402 and nothing goes out). False when the client went
 * away meanwhile: nothing should be sent, and the settlement gives everything back. The body
 * then goes out through a Delivery, which counts what the kernel took; a response that does not
 * finish is settled down to what that part costs by the same rule (see settle).
 */
export async function charge(
  ctx: AppContext,
  def: RouteDef,
  rc: RequestContext,
  reply: Reply,
  key: KeyInfo,
  meta: Meta,
  res: ServerResponse,
  bytes: number,
): Promise<boolean> {
  if (rc.signal.aborted || res.destroyed) return false;
  const charged = await ctx.ledger.charge({
    keyId: key.id,
    cost: def.cost!(rc, reply),
    route: def.path,
    item: def.item?.(rc) ?? "",
    bytes,
    requestId: rc.requestId,
  });
  ctx.metrics.creditsCharged += charged.charged;
  const rule = def.meterRule?.(rc, reply, charged.charged) ?? flatRule(charged.charged);
  // In flight on record before any byte goes out (nothing owed yet), then at each step of the
  // charge: a crash of this process is settled from it at the next start (settlement-journal.ts).
  const journal = ctx.settlements;
  const entry = { keyId: key.id, requestId: rc.requestId };
  let synced = 0;
  const write = async (sent: number, cost: number) => {
    try {
      // Synced to disk at most once per INFLIGHT_SYNC_MS (the first rewrite after the headers is).
      const now = Date.now();
      const sync = sent > 0 && now - synced >= INFLIGHT_SYNC_MS;
      if (sync) synced = now;
      await journal!.inFlight({ ...entry, cost: Math.min(charged.charged, cost), bytes: sent }, sync);
    } catch (e) {
      ctx.log({ level: "error", event: "inflight-record-failed", request_id: rc.requestId, error: describe(e) });
    }
  };
  const record = journal
    ? (sent: number, cost: number) => {
        const m = meta.meter!;
        if (m.over) return Promise.resolve();
        m.recording = write(sent, cost);
        return m.recording;
      }
    : undefined;
  meta.meter = {
    keyId: key.id,
    requestId: rc.requestId,
    charged: charged.charged,
    bytes,
    delivery: new Delivery(res, rc.signal, rule, record),
    fault: false,
  };
  await record?.(0, 0);
  if (res.destroyed) return false;
  meta.charged = charged.charged;
  res.setHeader("X-Credits-Charged", String(charged.charged));
  res.setHeader("X-Credits-Remaining", String(charged.remaining));
  return true;
}

/**
 * Once a charged response is over: one that finished keeps its charge; one cut short keeps what
 * the body bytes the kernel took cost (nothing when none did, or when the server failed it) and
 * gets the rest back, its usage row recording the bytes sent.
 */
export async function settle(ctx: AppContext, m: Meter, res: ServerResponse): Promise<void> {
  m.over = true;
  try {
    await settleOnce(ctx, m, res);
  } finally {
    // Settled (or journaled for a retry): nothing is left for a restart to settle.
    await m.recording;
    await ctx.settlements?.landed(m.requestId);
  }
}

async function settleOnce(ctx: AppContext, m: Meter, res: ServerResponse): Promise<void> {
  if (res.writableFinished && !m.fault) return;
  const sent = m.delivery.sent;
  const keep = m.fault ? 0 : Math.min(m.charged, m.delivery.cost);
  const entry = { request_id: m.requestId, key_id: m.keyId, bytes_sent: sent, of_bytes: m.bytes };
  try {
    // Kept in the journal and retried when the ledger cannot take it now (settlement-journal.ts).
    const returned = ctx.settlements
      ? await ctx.settlements.settle({ keyId: m.keyId, requestId: m.requestId, cost: keep, bytes: sent })
      : await ctx.ledger.settle(m.keyId, m.requestId, keep, sent);
    if (returned === undefined) return;
    ctx.metrics.creditsCharged -= returned;
    ctx.log({
      level: "info",
      event: "settled",
      ...entry,
      credits: keep,
      returned,
      ...(m.fault ? { fault: true } : {}),
    });
  } catch (e) {
    ctx.log({ level: "error", event: "settle-failed", ...entry, credits: keep, error: describe(e) });
  }
}
