// Liveness, readiness and Prometheus metrics.

import Type from "typebox";
import { route } from "../route.ts";
import { warmUpOf } from "../warm-up.ts";

const Health = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
  limits: Type.Optional(
    Type.Object(
      {
        send_stall_ms: Type.Number(),
        send_floor_bytes_per_s: Type.Number(),
        response_timeout_ms: Type.Number(),
        max_connections: Type.Number(),
        max_connections_per_client: Type.Number(),
        max_heavy_requests: Type.Number(),
        open_file_limit: Type.Union([Type.Number(), Type.Null()]),
      },
      {
        description:
          "The limits in force: every response is dropped after response_timeout_ms, or once its client has " +
          "taken fewer than send_floor_bytes_per_s on average over send_stall_ms while bytes waited for it; max_connections (from the open-file limit unless set) " +
          "and max_connections_per_client (from max_connections unless set) cap open connections, beyond them 503 + Retry-After; " +
          "a key may hold a quarter of max_connections, more only while a quarter stays free (beyond: 503 + Retry-After, connection closed)",
      },
    ),
  ),
  groups: Type.Optional(
    Type.Array(Type.Object({ id: Type.String(), ok: Type.Boolean(), reason: Type.Optional(Type.String()) }), {
      description: "Every forecast group found, with the reason for each one that cannot be read (the others serve)",
    }),
  ),
});

export const healthRoutes = [
  route({
    method: "GET",
    path: "/healthz",
    operationId: "healthz",
    summary: "Process is up",
    tags: ["operations"],
    auth: "public",
    responses: { 200: { description: "Alive", content: { "application/json": { schema: Health } } } },
    handler: async () => ({ json: { status: "ok" } }),
  }),
  route({
    method: "GET",
    path: "/readyz",
    operationId: "readyz",
    summary: "Store and ledger are reachable",
    description:
      "503 with the failing checks named when the store root or the ledger cannot be reached, or when every " +
      "store-reading slot (max_heavy_requests) is taken, or every place for /data requests waiting for " +
      "rate-limit tokens (data_rate_waiters_max), so a load balancer sends new work elsewhere. The capacity " +
      "check shows the slots in use as used/max, data_waiters the waiting /data requests as waiting/max, the " +
      "connections check the open client connections as open/max_connections; `limits` lists the response " +
      "and connection limits in force.",
    tags: ["operations"],
    auth: "public",
    responses: {
      200: { description: "Ready", content: { "application/json": { schema: Health } } },
      503: { description: "Not ready", content: { "application/json": { schema: Health } } },
    },
    handler: async ({ app }) => {
      const checks: Record<string, string> = {};
      let groups: { id: string; ok: boolean; reason?: string }[] | undefined;
      await Promise.all([
        app.store.groupStatus().then(
          (list) => {
            groups = list.map(({ id, ok, reason }) => (ok ? { id, ok } : { id, ok, reason }));
            const bad = list.filter((g) => !g.ok).length;
            checks.forecast_groups = bad === 0 ? `${list.length} readable` : `${bad} of ${list.length} unreadable`;
          },
          () => (checks.forecast_groups = "unavailable"),
        ),
        app.store.ping().then(
          () => (checks.store = "ok"),
          () => (checks.store = "unavailable"),
        ),
        app.ledger.ping().then(
          () => (checks.ledger = "ok"),
          () => (checks.ledger = "unavailable"),
        ),
        app.published.current().then((s) => (checks.build = s ? "published" : "none yet")),
        // Ready once the first requests will not pay for discovery or the copies' headers.
        warmUpOf(app),
      ]);
      const used = app.metrics.inFlight;
      const max = app.settings.max_heavy_requests;
      checks.capacity = `${used}/${max}`;
      const gate = app.metrics.connections;
      if (gate) checks.connections = `${gate.open}/${gate.max}`;
      const waiting = app.metrics.dataWaiting();
      const waitMax = app.metrics.dataWaitersMax;
      checks.data_waiters = `${waiting}/${waitMax}`;
      const limits = {
        send_stall_ms: app.settings.send_stall_ms,
        send_floor_bytes_per_s: app.settings.send_floor_bytes_per_s,
        response_timeout_ms: app.settings.response_timeout_ms,
        max_connections: gate?.max ?? app.settings.max_connections,
        max_connections_per_client: gate?.perClient ?? app.settings.max_connections_per_client,
        max_heavy_requests: max,
        data_rate_waiters_max: waitMax,
        open_file_limit: app.metrics.fdLimit ?? null,
      };
      const ok = checks.store === "ok" && checks.ledger === "ok" && used < max && waiting < waitMax;
      // One unreadable group does not make the server unready: the others serve (it is named in `groups`).
      return { status: ok ? 200 : 503, json: { status: ok ? "ready" : "not ready", checks, limits, groups } };
    },
  }),
  route({
    method: "GET",
    path: "/metrics",
    operationId: "metrics",
    summary: "Prometheus metrics",
    tags: ["operations"],
    auth: "public",
    responses: {
      200: { description: "Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } },
    },
    handler: async ({ app }) => {
      const c = app.store.cache.stats();
      return {
        body: app.metrics.render({ cacheHits: c.hits, cacheMisses: c.misses, cacheBytes: c.bytes }),
        type: "text/plain; version=0.0.4; charset=utf-8",
      };
    },
  }),
];
