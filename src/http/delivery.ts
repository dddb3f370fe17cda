// What a metered response handed to the connection, so a response cut short is charged for the
// part that went out, by the same rule as a whole one.
//
// "Handed to the connection" means taken by the kernel: a write counts once its callback reports
// success, which Node does when the socket's send buffer has accepted every byte of it (bytes
// Node still holds in its own buffers, or that libuv has queued, do not count). Writes that are
// queued together complete together, so the body goes out one piece at a time, the next written
// only once the previous one completed. Each offset where the charge steps up (the first body byte,
// and for a .npy the first byte of every MiB of data) is written as a one-byte piece of its own:
// the step is counted the moment the kernel takes that byte, however the connection ends after it.
// A client therefore never reads a byte of a MiB it is not charged for; the bytes recorded may fall
// short of what it read by the piece in flight when the connection broke (the kernel may have
// taken part of it).
import type { ServerResponse } from "node:http";
import { MIB } from "../config.ts";

/** How a route's charge grows with the body bytes sent. */
export interface MeterRule {
  /** Credits owed once `sent` body bytes went out: 0 for none, the full charge for the whole body. */
  cost(sent: number): number;
  /** The first body offset after `offset` at which cost() steps up; Infinity when there is none. */
  nextStep(offset: number): number;
}

/** A flat charge: owed in full once the first body byte went out (item metadata). */
export function flatRule(full: number): MeterRule {
  return {
    cost: (sent) => (sent > 0 ? full : 0),
    nextStep: (offset) => (offset < 0 ? 0 : Number.POSITIVE_INFINITY),
  };
}

/**
 * base + one credit per started `unit` bytes of data after a header of `header` bytes (a .npy
 * body): the header's first byte costs the base, the first byte of each unit of data one more, up
 * to `full`. The unit is a MiB of the physical answer: MiB × (bytes a value is sent in) / 4, so a
 * values=raw int8 body pays a credit per 256 KiB, as its physical float32 twin does per MiB.
 */
export function perMiBRule(base: number, header: number, full: number, unit = MIB): MeterRule {
  return {
    cost: (sent) => (sent <= 0 ? 0 : Math.min(full, base + Math.ceil(Math.max(0, sent - header) / unit))),
    nextStep: (offset) => {
      if (offset < 0) return 0;
      if (offset < header) return header;
      return header + (Math.floor((offset - header) / unit) + 1) * unit;
    },
  };
}

/** Told what the body sent so far costs each time a step of the charge went out (awaited before the next piece). */
export type StepRecord = (sent: number, cost: number) => Promise<void>;

export class Delivery {
  readonly #res: ServerResponse;
  readonly #signal: AbortSignal;
  readonly rule: MeterRule;
  readonly #record: StepRecord | undefined;
  /** Body bytes whose writes completed: the kernel took every one of them. */
  sent = 0;
  /** Body bytes passed to write so far (the offset of the next piece). */
  #offset = 0;
  /** The next offset written as a one-byte piece. */
  #step: number;

  /**
   * `record`, when given, is awaited after each piece that stepped the charge up (the first body
   * byte, the first of each MiB of a .npy) and before the next piece is written: what went out is
   * on record, durably, within one step of the charge (the in-flight record a crash is settled by).
   */
  constructor(res: ServerResponse, signal: AbortSignal, rule: MeterRule, record?: StepRecord) {
    this.#res = res;
    this.#signal = signal;
    this.rule = rule;
    this.#record = record;
    this.#step = rule.nextStep(-1);
  }

  /** What the body sent so far costs under the rule. */
  get cost(): number {
    return this.rule.cost(this.sent);
  }

  /**
   * Writes `bytes` as the next part of the body, piece by piece, each once the one before it
   * completed. True when all of it completed; false as soon as the connection went away (or the
   * request was aborted), with the rest unwritten.
   */
  async write(bytes: Uint8Array): Promise<boolean> {
    let at = 0;
    while (at < bytes.length) {
      let end: number;
      const stepping = this.#offset === this.#step;
      if (stepping) {
        end = at + 1;
        this.#step = this.rule.nextStep(this.#offset);
      } else {
        end = Math.min(bytes.length, at + (this.#step - this.#offset));
      }
      const piece = bytes.subarray(at, end);
      this.#offset += piece.length;
      at = end;
      if (!(await this.#one(piece))) return false;
      if (stepping && this.#record) await this.#record(this.sent, this.cost);
    }
    return true;
  }

  #one(piece: Uint8Array): Promise<boolean> {
    const res = this.#res;
    const signal = this.#signal;
    if (res.destroyed || signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let settled = false;
      const done = (ok: boolean) => {
        if (settled) return;
        settled = true;
        res.off("close", onGone);
        signal.removeEventListener("abort", onGone);
        resolve(ok);
      };
      const onGone = () => done(false);
      res.on("close", onGone);
      signal.addEventListener("abort", onGone, { once: true });
      res.write(piece, (err) => {
        // Counted whenever the kernel took it, even if the connection closed meanwhile.
        if (!err) this.sent += piece.length;
        done(!err);
      });
    });
  }
}
