// A route is declared once: path, auth, schemas for query/path/response, and a handler that
// returns a Reply. The same declaration registers the polka handler, validates requests and
// generates the OpenAPI description.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppContext, KeyInfo } from "./context.ts";
import type { MeterRule } from "./delivery.ts";
import type { NpyBody } from "./npy-stream.ts";

export type Auth = "public" | "weather" | "embeddings";

export type Reply =
  | {
      status?: number;
      json: unknown;
      /** The JSON text of `json` when the handler has it already: exactly JSON.stringify(json). */
      text?: string;
      headers?: Record<string, string>;
      cache?: string;
    }
  | { status?: number; body: Uint8Array | string; type: string; headers?: Record<string, string>; cache?: string }
  /**
   * A body of known size (a .npy, a GeoTIFF) streamed slab by slab (see npy-stream.ts). A metered route is
   * charged once the first slab is in hand, before the headers go out, and settled down to what
   * went out should the response be cut short.
   */
  | { npy: NpyBody }
  /** The handler wrote the response itself (Range requests, streaming). */
  | { handled: true };

export interface RequestContext<Q = Record<string, unknown>, P = Record<string, string>> {
  req: IncomingMessage;
  /** The parsed JSON body of a POST route (undefined for GET). */
  body?: unknown;
  res: ServerResponse;
  query: Q;
  params: P;
  key: KeyInfo | undefined;
  requestId: string;
  app: AppContext;
  /** Aborted when the client goes away or the request times out. */
  signal: AbortSignal;
}

export interface ResponseDoc {
  description: string;
  /** media type → JSON Schema (or {} for binary) */
  content?: Record<string, { schema: unknown; example?: unknown }>;
  headers?: Record<string, { description: string; schema: unknown }>;
}

// biome-ignore lint/suspicious/noExplicitAny: one list holds routes of different parameter types
export interface RouteDef<Q = any, P = any> {
  /** A POST route takes a JSON body (at most MAX_JSON_BODY bytes) described by `body`. */
  method: "GET" | "POST";
  /** JSON Schema of a POST route's body (documented; the handler checks it field by field). */
  body?: object;
  /** OpenAPI-style path: /api/export/{id}/npy; a trailing {key+} matches the rest of the path. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: Auth;
  /** Reads the store: counts against the concurrency cap. */
  heavy?: boolean;
  /**
   * How long a request that finds its key's rate-limit bucket empty waits for a token before a
   * 429: "refuse" (the default) up to rate_wait_ms, "wait" up to data_rate_wait_ms (/data, whose
   * clients turn refusals into silent fill values).
   */
  rateLimit?: "refuse" | "wait";
  /** Credits to charge once the reply is ready; undefined means the route is not metered. */
  cost?: (ctx: RequestContext<Q, P>, reply: Reply) => number;
  /**
   * How the charge of a response cut short follows the body bytes that went out (delivery.ts);
   * `full` is what cost() charged. Default: all of it once the first body byte went out.
   */
  meterRule?: (ctx: RequestContext<Q, P>, reply: Reply, full: number) => MeterRule;
  /** Item name recorded in the usage log for metered routes. */
  item?: (ctx: RequestContext<Q, P>) => string;
  query?: object;
  /** Query parameters that take comma-separated lists (OpenAPI style form, explode false). */
  formLists?: string[];
  pathParams?: object;
  responses: Record<number, ResponseDoc>;
  /** Extra OpenAPI bits (e.g. HEAD support) */
  alsoHead?: boolean;
  /** A reply, or a promise of one (a warm request may be answered without waiting). */
  handler: (ctx: RequestContext<Q, P>) => Reply | Promise<Reply>;
}

/** Identity helper that keeps the generic types of a route declaration. */
export function route<Q, P = Record<string, string>>(def: RouteDef<Q, P>): RouteDef<Q, P> {
  return def;
}

/** polka pattern for an OpenAPI path: {id} → :id, trailing {key+} → * */
export function polkaPattern(path: string): string {
  return path.replace(/\{(\w+)\+\}$/, "*").replace(/\{(\w+)\}/g, ":$1");
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;
