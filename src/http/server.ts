// The HTTP server around the app: header/request timeouts, problem+json for malformed requests,
// graceful shutdown (stop accepting, finish in-flight requests, close the ledger).

import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import type { Settings } from "../config.ts";
import { KeyCachingLedger } from "../ledger/key-cache.ts";
import { openLedger } from "../ledger/open.ts";
import { ReopeningLedger } from "../ledger/reopening.ts";
import { journalDir, SettlementJournal } from "../ledger/settlement-journal.ts";
import { checkRawHead, rawHeadExpected } from "../published/raw-head.ts";
import { Published } from "../published/snapshot.ts";
import { registry } from "../registry/registry.ts";
import { setDecodeThreads } from "../store/codecs/decode-pool.ts";
import { Store } from "../store/store.ts";
import { type App, createApp } from "./app.ts";
import { ConnectionGate } from "./connection-gate.ts";
import type { AppContext } from "./context.ts";
import { connectionCap, openFileLimit, perClientCap } from "./fd-limit.ts";
import { type LineLog, lineLog } from "./log-lines.ts";
import { Metrics } from "./metrics.ts";
import { TITLES } from "./problem.ts";
import { allRoutes } from "./routes/index.ts";
import { startWarmUp } from "./warm-up.ts";

export interface Running {
  server: Server;
  app: App;
  ctx: AppContext;
  url: string;
  close: () => Promise<void>;
}

const WEB_DIR = resolve(import.meta.dirname, "../../web");

export async function startServer(
  settings: Settings,
  opts: {
    log?: (e: Record<string, unknown>) => void;
    /** Operator messages that must show even with the access log off (default: stderr). */
    warn?: (line: string) => void;
    webDir?: string;
  } = {},
): Promise<Running> {
  // Chunk decoding in parallel, never more threads than store-reading requests allowed at once.
  setDecodeThreads(Math.min(availableParallelism(), settings.max_heavy_requests));
  const log = opts.log ?? lineLog(process.stdout, false);
  const store = new Store(settings.store, {
    cacheMb: settings.chunk_cache_mb,
    cellGridMb: settings.cell_grid_mb,
    timeoutMs: settings.store_timeout_ms,
    rootGroupName: settings.root_group_name || undefined,
    log,
  });
  // The server comes up even when the ledger does not: maps and health stay public, keyed routes
  // answer 503 until an open succeeds (retried on demand), and /readyz says which.
  const warn = opts.warn ?? ((line: string) => process.stderr.write(`gridcast: ${line}\n`));
  const reopening = new ReopeningLedger(
    () => openLedger(settings.db),
    (first) => {
      if (first) return;
      log({ level: "info", event: "ledger-available", message: "the key ledger is open again" });
      warn("the key ledger is open again; keyed routes are back");
    },
  );
  const failure = await reopening.start();
  if (failure) {
    const message = "the key ledger could not be opened; keyed routes answer 503 until it can";
    const cause = String((failure as Error)?.message ?? failure);
    log({ level: "error", event: "ledger-unavailable", message, cause });
    warn(`${message} (${cause})`);
  }
  const ledger = new KeyCachingLedger(reopening);
  // Settlements an outage kept from the ledger, by this run or an earlier one, are retried.
  const settlements = new SettlementJournal(journalDir(settings.settlement_journal, settings.db), ledger, log);
  await settlements.start();
  const ctx: AppContext = {
    settings,
    store,
    ledger,
    settlements,
    registry,
    // A new build announces new runs: the store's metadata is checked before the next read of it,
    // so /point, value and /data never lag behind the catalog the server hands out.
    // A new build's groups and point copies are looked up at once (warm-up.ts), not by the first
    // request that needs them.
    published: new Published(settings.out, () => {
      store.refresh();
      setImmediate(() => startWarmUp(ctx));
    }),
    metrics: new Metrics(),
    log,
    webDir: opts.webDir ?? WEB_DIR,
  };
  // Warm public files get their head handed to Node ready-made only once this Node has been seen
  // to write it byte for byte as writeHead does (src/published/raw-head.ts); else writeHead it is.
  const rawHead = await checkRawHead();
  if (!rawHead.ok && rawHeadExpected())
    warn(`the raw head check failed (${rawHead.why}); warm public files use writeHead`);
  const app = createApp(ctx, allRoutes());
  const server = createServer({
    headersTimeout: settings.header_timeout_ms,
    requestTimeout: settings.request_timeout_ms,
    maxHeaderSize: 16 * 1024,
    // How often Node looks for connections past their header/request timeout.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(settings.header_timeout_ms / 4))),
  });
  server.on("request", app.handler);
  // A client may half-close (shut down its sending side) once its request is sent, and still
  // expects the answer. Node's default takes that end as an abort of every request in flight on
  // the connection; with this set, the answer goes out and the connection ends after it. The
  // watchdog and the request timeouts bound such connections like any other.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Open connections are capped in all (from the open-file limit) and per client address.
  const fdLimit = openFileLimit();
  const maxConnections = connectionCap(settings.max_connections, fdLimit);
  const gate = new ConnectionGate(maxConnections, perClientCap(settings.max_connections_per_client, maxConnections));
  gate.install(server);
  ctx.metrics.connections = gate;
  ctx.metrics.fdLimit = fdLimit;
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    if (socket.writable && !(socket as Socket & { _httpMessage?: unknown })._httpMessage) {
      const body = JSON.stringify({
        type: `/problems/${status === 431 ? "headers-too-large" : status === 408 ? "request-timeout" : "bad-request"}`,
        title: TITLES[status],
        status,
        detail:
          status === 431
            ? "request headers are too large"
            : status === 408
              ? "the request was not received in time"
              : "the request could not be parsed",
      });
      socket.end(
        `HTTP/1.1 ${status} ${TITLES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    } else {
      socket.destroy();
    }
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(settings.port, settings.host, () => ok());
  });
  // The groups discovered and the build's point copies looked up before /readyz says ready.
  startWarmUp(ctx);
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : settings.port;
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeIdleConnections();
      });
      await settlements.close();
      await ledger.close();
      // Every response is logged by now; a line log hands over (and a file of its own, writes) the rest.
      if (typeof (log as Partial<LineLog>).close === "function") await (log as LineLog).close();
    })();
    return closing;
  };
  return { server, app, ctx, url: `http://${host}:${port}`, close };
}

/** Close gracefully on SIGTERM/SIGINT; exit 0 once in-flight requests are done. */
export function closeOnSignals(running: Running, log: (s: string) => void): void {
  const stop = (sig: string) => {
    log(`received ${sig}, finishing in-flight requests`);
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}
