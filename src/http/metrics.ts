// Prometheus text exposition, hand-rolled: a few counters and one latency histogram.
import type { ConnectionGate } from "./connection-gate.ts";

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  /** Requests by route, then by status: two lookups on kept keys, no key string built per request. */
  #requests = new Map<string, Map<number, number>>();
  #latency = new Map<string, { buckets: number[]; sum: number; count: number }>();
  creditsCharged = 0;
  /** Heavy (store-reading) requests running now. */
  inFlight = 0;
  /** The server's connection caps and counts (set by the server once it listens). */
  connections: ConnectionGate | undefined;
  /** The process's open-file limit, when it could be read. */
  fdLimit: number | undefined;
  /** /data requests waiting for a rate-limit token now, and how many may (data_rate_waiters_max). */
  dataWaiting = () => 0;
  dataWaitersMax = Number.POSITIVE_INFINITY;

  observe(route: string, status: number, seconds: number): void {
    let byStatus = this.#requests.get(route);
    if (!byStatus) {
      byStatus = new Map();
      this.#requests.set(route, byStatus);
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    let h = this.#latency.get(route);
    if (!h) {
      h = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.#latency.set(route, h);
    }
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) h.buckets[i]++;
    h.sum += seconds;
    h.count++;
  }

  render(extra: { cacheHits: number; cacheMisses: number; cacheBytes: number }): string {
    const esc = (s: string) => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
    const out: string[] = [
      "# HELP gridcast_requests_total Requests by route and status.",
      "# TYPE gridcast_requests_total counter",
    ];
    for (const [route, byStatus] of this.#requests) {
      for (const [status, n] of byStatus)
        out.push(`gridcast_requests_total{route="${esc(route)}",status="${status}"} ${n}`);
    }
    out.push(
      "# HELP gridcast_request_duration_seconds Request latency by route.",
      "# TYPE gridcast_request_duration_seconds histogram",
    );
    for (const [route, h] of this.#latency) {
      const r = esc(route);
      BUCKETS.forEach((b, i) => {
        out.push(`gridcast_request_duration_seconds_bucket{route="${r}",le="${b}"} ${h.buckets[i]}`);
      });
      out.push(`gridcast_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${h.count}`);
      out.push(`gridcast_request_duration_seconds_sum{route="${r}"} ${h.sum}`);
      out.push(`gridcast_request_duration_seconds_count{route="${r}"} ${h.count}`);
    }
    const total = extra.cacheHits + extra.cacheMisses;
    out.push(
      "# HELP gridcast_chunk_cache_hit_ratio Share of decoded-chunk lookups served from the cache.",
      "# TYPE gridcast_chunk_cache_hit_ratio gauge",
      `gridcast_chunk_cache_hit_ratio ${total ? extra.cacheHits / total : 0}`,
      "# TYPE gridcast_chunk_cache_bytes gauge",
      `gridcast_chunk_cache_bytes ${extra.cacheBytes}`,
      "# HELP gridcast_credits_charged_total Credits debited from keys by this process.",
      "# TYPE gridcast_credits_charged_total counter",
      `gridcast_credits_charged_total ${this.creditsCharged}`,
      "# TYPE gridcast_heavy_requests_in_flight gauge",
      `gridcast_heavy_requests_in_flight ${this.inFlight}`,
      "# HELP gridcast_data_rate_waiters /data requests waiting for a rate-limit token.",
      "# TYPE gridcast_data_rate_waiters gauge",
      `gridcast_data_rate_waiters ${this.dataWaiting()}`,
    );
    const gate = this.connections;
    if (gate) {
      out.push(
        "# HELP gridcast_connections_open Client connections open now (max_connections caps them).",
        "# TYPE gridcast_connections_open gauge",
        `gridcast_connections_open ${gate.open}`,
        "# HELP gridcast_connections_refused_total Connections refused with 503, by the cap they met.",
        "# TYPE gridcast_connections_refused_total counter",
        `gridcast_connections_refused_total{cap="server"} ${gate.refused.server}`,
        `gridcast_connections_refused_total{cap="client"} ${gate.refused.client}`,
        `gridcast_connections_refused_total{cap="key"} ${gate.refused.key}`,
      );
    }
    return `${out.join("\n")}\n`;
  }
}
