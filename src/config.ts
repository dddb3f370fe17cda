// Settings resolve in one order: defaults < gridcast.config.json < GRIDCAST_* environment < CLI flags.
// Names from the interface spec keep their spelling (field_export_max_mb, embeddings_api_max_mb,
// default_forecast_group).
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "./errors.ts";

export interface Settings {
  /** Store root: a directory or an http(s) URL. */
  store: string;
  /** Build output directory; `current/` inside it is the published build. */
  out: string;
  /** Ledger location: a sqlite file path or a postgres:// URL. */
  db: string;
  host: string;
  port: number;
  default_forecast_group: string;
  /** Id (forecast/<name>) of a dataset found at the store root; "" means the store directory's name. */
  root_group_name: string;
  /** Size cap of one .npy export (MiB of float32 output). */
  field_export_max_mb: number;
  /** Size cap of one embedding .npy slice (MiB, uncompressed). */
  embeddings_api_max_mb: number;
  /**
   * MiB one unstructured grid's per-cell tables (centres, the nearest-cell index, the neighbour
   * lists tiles walk) may take; a grid declaring more cells is refused by name before anything is
   * read. A whole HEALPix grid needs no tables and is served at any nside without them.
   */
  cell_grid_mb: number;
  /** Byte budget of the decoded-chunk cache shared by all readers (MiB). */
  chunk_cache_mb: number;
  /**
   * MiB of output a .npy response assembles at a time (export leads, latent rows); the chunks
   * within it decode in parallel, and the next slab is read while one is sent.
   */
  read_slab_mb: number;
  /**
   * MiB of decoded chunks the exports and latent slices reading as scans (each chunk decoded once
   * into a reused buffer, outside the chunk cache) may hold together; a read that would pass it,
   * and every read with 0, goes through the chunk cache.
   */
  scan_hold_mb: number;
  /** Milliseconds an http(s) store may take to answer one read before it counts as unavailable. */
  store_timeout_ms: number;
  /** Milliseconds a /data request may wait for its key's next rate-limit token before a 429. */
  data_rate_wait_ms: number;
  /**
   * Milliseconds a request to any other keyed route (/point, exports, embeddings) may wait for its
   * key's next rate-limit token before a 429; 0 refuses at once.
   */
  rate_wait_ms: number;
  /**
   * /data requests of all keys that may wait for tokens at once; beyond it 503 + Retry-After.
   * 0: a quarter of the process's open-file limit, between 16 and 8192 (see http/fd-limit.ts).
   */
  data_rate_waiters_max: number;
  /** Requests doing store reads that may run at once; beyond it 503 + Retry-After. */
  max_heavy_requests: number;
  /** Milliseconds a client may take to send its request headers. */
  header_timeout_ms: number;
  /** Milliseconds a whole request may take. */
  request_timeout_ms: number;
  /** Milliseconds any response may take in all, slow clients included; then it is dropped. */
  response_timeout_ms: number;
  /** Milliseconds a client may leave sent bytes unread before its response is dropped. */
  send_stall_ms: number;
  /**
   * The slowest reading that is never a stall (bytes per second): a response whose client took
   * fewer than this × send_stall_ms / 1000 bytes in the last send_stall_ms is dropped.
   */
  send_floor_bytes_per_s: number;
  /**
   * Open client connections the server keeps at once; beyond it a new connection gets 503 +
   * Retry-After and is closed. 0: sized from the process's open-file limit (see http/fd-limit.ts).
   */
  max_connections: number;
  /**
   * Open connections one client address may hold at once; beyond it 503 + Retry-After. 0: a tenth
   * of max_connections, so ten addresses at their cap fit (see http/fd-limit.ts).
   */
  max_connections_per_client: number;
  /**
   * Directory where settlements the ledger could not take are kept until they land ("": next to a
   * sqlite ledger file as <db>.settlements, or ./gridcast-settlements for PostgreSQL).
   */
  settlement_journal: string;
  /** Credits charged for one embedding item metadata request. */
  credit_cost_item: number;
  /** Credits for one embedding .npy request: this base plus one per started MiB. */
  credit_cost_npy_base: number;
  /** Builds kept in output/builds after a publish (the published one included). */
  keep_builds: number;
  /**
   * Seconds the out-dir lock of a build task on another machine (shared storage) stays valid
   * without its heartbeat; then a retried task takes it over. Holders on this machine are
   * checked by pid.
   */
  build_lock_lease_s: number;
  /** Highest zoom level `build` renders (0..7); its --max-zoom flag overrides it. */
  max_zoom: number;
  /**
   * 1: `build` writes the point-optimized copy of every served variable and /point reads it;
   * 0: neither (build --no-point-copy switches the build's off).
   */
  point_copy: number;
  /** Memory budget of the point copy while it is written (MiB): larger variables take several passes. */
  point_copy_mb: number;
  /**
   * Base URL the published files and routes are reached at by clients (https://maps.example.org),
   * written into TileJSON `tiles`, the catalog and the WMTS capabilities. "": not set.
   */
  public_url: string;
  /**
   * 1: the proxy in front sets X-Forwarded-Proto/-Host honestly, so live documents may take their
   * base URL from the request when public_url is not set. 0: they never do.
   */
  trust_proxy: number;
}

export const DEFAULTS: Settings = {
  store: "data/demo",
  out: "output",
  db: "data/ledger.db",
  host: "127.0.0.1",
  port: 8080,
  default_forecast_group: "forecast/global",
  root_group_name: "",
  field_export_max_mb: 64,
  embeddings_api_max_mb: 32,
  chunk_cache_mb: 256,
  cell_grid_mb: 1024,
  read_slab_mb: 4,
  scan_hold_mb: 128,
  store_timeout_ms: 15_000,
  data_rate_wait_ms: 60_000,
  rate_wait_ms: 10_000,
  data_rate_waiters_max: 0,
  max_heavy_requests: 32,
  header_timeout_ms: 10_000,
  request_timeout_ms: 60_000,
  response_timeout_ms: 300_000,
  send_stall_ms: 30_000,
  send_floor_bytes_per_s: 1024,
  max_connections: 0,
  max_connections_per_client: 0,
  settlement_journal: "",
  credit_cost_item: 1,
  credit_cost_npy_base: 1,
  keep_builds: 3,
  build_lock_lease_s: 60,
  max_zoom: 7,
  point_copy: 1,
  point_copy_mb: 512,
  public_url: "",
  trust_proxy: 0,
};

const NUMERIC = new Set<keyof Settings>(
  (Object.keys(DEFAULTS) as (keyof Settings)[]).filter((k) => typeof DEFAULTS[k] === "number"),
);

function coerce(key: keyof Settings, raw: unknown, origin: string): string | number {
  if (NUMERIC.has(key)) {
    const n = typeof raw === "number" ? raw : Number(String(raw).trim());
    if (String(raw).trim() === "" || !Number.isFinite(n) || n < 0) {
      throw new ConfigError(`${origin}: ${key} must be a non-negative number, got ${JSON.stringify(raw)}`);
    }
    return n;
  }
  if (typeof raw !== "string" || raw === "") throw new ConfigError(`${origin}: ${key} must be a non-empty string`);
  return raw;
}

function apply(target: Settings, source: Record<string, unknown>, origin: string): void {
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (!(key in DEFAULTS)) throw new ConfigError(`${origin}: unknown setting "${key}"`);
    (target as unknown as Record<string, unknown>)[key] = coerce(key as keyof Settings, value, origin);
  }
}

/** Environment variables: GRIDCAST_<SETTING> in upper case, e.g. GRIDCAST_FIELD_EXPORT_MAX_MB. */
export function fromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(DEFAULTS)) {
    const v = env[`GRIDCAST_${key.toUpperCase()}`];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

export interface LoadOptions {
  /** Explicit config file; otherwise ./gridcast.config.json when present. */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  flags?: Partial<Record<keyof Settings, unknown>>;
  cwd?: string;
}

export function loadSettings(opts: LoadOptions = {}): Settings {
  const cwd = opts.cwd ?? process.cwd();
  const settings: Settings = { ...DEFAULTS };
  const file = opts.configFile ? resolve(cwd, opts.configFile) : resolve(cwd, "gridcast.config.json");
  if (opts.configFile && !existsSync(file)) throw new ConfigError(`config file not found: ${opts.configFile}`);
  if (existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (e) {
      throw new ConfigError(`config file is not valid JSON: ${(e as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError("config file must hold a JSON object");
    }
    apply(settings, parsed as Record<string, unknown>, "gridcast.config.json");
  }
  apply(settings, fromEnv(opts.env ?? process.env), "environment");
  apply(settings, opts.flags ?? {}, "flag");
  if (settings.port > 65535 || !Number.isInteger(settings.port)) throw new ConfigError("port must be 0..65535");
  if (settings.trust_proxy !== 0 && settings.trust_proxy !== 1) throw new ConfigError("trust_proxy must be 0 or 1");
  settings.public_url = checkedPublicUrl(settings.public_url);
  return settings;
}

/** An absolute http(s) base URL without a trailing slash, or "" (not set); anything else refused. */
export function checkedPublicUrl(raw: string): string {
  if (raw === "") return "";
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`public_url must be an absolute http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash || u.username) {
    throw new ConfigError(
      `public_url must be an http(s) URL without query, fragment or credentials, got ${JSON.stringify(raw)}`,
    );
  }
  return u.href.replace(/\/+$/, "");
}

export const MIB = 1024 * 1024;
