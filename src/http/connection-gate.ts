// Admission of client connections, before any HTTP is read: a cap on open connections (sized
// from the open-file limit, see fd-limit.ts) and a cap per client address. Without them, stalled
// readers from one address could hold every descriptor the process has, and then accept() fails
// for everyone, health probes included.
//
// Once a request on a connection names its API key, the connection also counts against that key,
// with the fair share of fair-share.ts: a key may hold a quarter of max_connections freely and
// more only while a quarter stays free, so one key spread over many addresses cannot take the
// connections others need. A request over its key's share is answered 503 + Retry-After naming
// the share, with Connection: close (app.ts), which frees the descriptor. A connection counts for
// the key of its latest keyed request until it closes (idle keep-alive connections hold a
// descriptor too).
//
// A refused connection gets one 503 problem+json with Retry-After and Connection: close, written
// as soon as it is accepted, and is closed. At most REFUSING_MAX refusals are in progress at once,
// each for at most REFUSAL_LINGER_MS (so the client can read the answer before the close); past
// that a connection is closed without a word, so refusing never costs more descriptors than that.
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { FAIR_SHARE_FRACTION, type ShareRefusal } from "./fair-share.ts";

/** Refusals being written at once; further connections over a cap are closed unanswered. */
export const REFUSING_MAX = 64;
/** Longest a refused connection stays open for its client to read the 503. */
export const REFUSAL_LINGER_MS = 2000;
/** Retry-After (seconds) of a refused connection. */
export const RETRY_AFTER_S = 1;

export type Refusal = "server" | "client" | "key";

export class ConnectionGate {
  /** Open connections allowed in all. */
  readonly max: number;
  /** Open connections allowed per client address (an IPv6 client by its /64). */
  readonly perClient: number;
  /** Admitted connections open now, and the most there have been. */
  open = 0;
  peak = 0;
  /** Connections refused since start, by which cap (key: a request over its key's share, then closed). */
  readonly refused: Record<Refusal, number> = { server: 0, client: 0, key: 0 };
  #refusing = 0;
  readonly #byClient = new Map<string, number>();
  /** The connections a key may hold freely (more only while as many stay free). */
  readonly keyShare: number;
  readonly #byKey = new Map<string, number>();
  /** The key each connection counts for, once a request on it named one. */
  readonly #keyOf = new WeakMap<Socket, string>();

  constructor(max: number, perClient: number) {
    this.max = max;
    this.perClient = perClient;
    this.keyShare = Math.max(1, Math.ceil(max * FAIR_SHARE_FRACTION));
  }

  /** Connections counting for `keyId` now. */
  heldByKey(keyId: string): number {
    return this.#byKey.get(keyId) ?? 0;
  }

  /**
   * Counts `socket` (an admitted connection) for `keyId`, whose request it carries: undefined
   * when it may, or the share refusal when the key already holds its share and fewer than a
   * share of the connections are free. A few map operations; nothing scales with connections.
   */
  claimForKey(socket: Socket, keyId: string): ShareRefusal | undefined {
    const had = this.#keyOf.get(socket);
    if (had === keyId) return undefined;
    const held = this.heldByKey(keyId);
    if (held >= this.keyShare && this.max - this.open < this.keyShare) {
      this.refused.key++;
      return { limit: "share", holder: `key:${keyId}`, held, share: this.keyShare, max: this.max };
    }
    if (had === undefined) socket.once("close", () => this.#drop(socket));
    else this.#uncount(had);
    this.#keyOf.set(socket, keyId);
    this.#byKey.set(keyId, held + 1);
    return undefined;
  }

  #drop(socket: Socket): void {
    const k = this.#keyOf.get(socket);
    if (k === undefined) return;
    this.#keyOf.delete(socket);
    this.#uncount(k);
  }

  #uncount(keyId: string): void {
    const n = this.heldByKey(keyId) - 1;
    if (n > 0) this.#byKey.set(keyId, n);
    else this.#byKey.delete(keyId);
  }

  /** Put the gate in front of the HTTP server's own connection handling. */
  install(server: Server): void {
    const http = server.listeners("connection") as ((socket: Socket) => void)[];
    server.removeAllListeners("connection");
    server.on("connection", (socket: Socket) => {
      const why = this.#admit(socket);
      if (why) this.#refuse(socket, why);
      else for (const listener of http) listener.call(server, socket);
    });
  }

  /** Connections open now from the client behind `address`. */
  openFrom(address: string): number {
    return this.#byClient.get(clientOf(address)) ?? 0;
  }

  #admit(socket: Socket): Refusal | undefined {
    if (this.open >= this.max) return "server";
    const client = clientOf(socket.remoteAddress ?? "");
    const held = this.#byClient.get(client) ?? 0;
    if (this.perClient > 0 && held >= this.perClient) return "client";
    this.open++;
    this.peak = Math.max(this.peak, this.open);
    this.#byClient.set(client, held + 1);
    socket.once("close", () => {
      this.open--;
      const n = (this.#byClient.get(client) ?? 1) - 1;
      if (n > 0) this.#byClient.set(client, n);
      else this.#byClient.delete(client);
    });
    return undefined;
  }

  #refuse(socket: Socket, why: Refusal): void {
    this.refused[why]++;
    socket.on("error", () => undefined);
    if (this.#refusing >= REFUSING_MAX) {
      socket.destroy();
      return;
    }
    this.#refusing++;
    const linger = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
    linger.unref();
    socket.once("close", () => {
      clearTimeout(linger);
      this.#refusing--;
    });
    const detail =
      why === "server"
        ? "the server has too many open connections; retry shortly"
        : "too many open connections from this address; close some or retry shortly";
    const body = JSON.stringify({ type: "/problems/busy", title: "Service Unavailable", status: 503, detail });
    socket.end(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n" +
        `Retry-After: ${RETRY_AFTER_S}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // Whatever the client sends meanwhile is read and dropped: closing with unread bytes would
    // reset the connection and could lose the answer.
    socket.resume();
  }
}

/** The client an address stands for: itself, or for IPv6 (not IPv4-mapped) its /64 network. */
export function clientOf(address: string): string {
  if (!address.includes(":") || address.startsWith("::ffff:")) return address;
  const bare = address.split("%")[0];
  const [head, tail] = bare.split("::");
  const h = head ? head.split(":") : [];
  const t = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(":")}::/64`;
}
