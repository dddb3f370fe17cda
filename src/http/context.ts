// What a route handler can reach: settings, the store, the ledger, the published build, metrics.
import type { Settings } from "../config.ts";
import type { SettlementJournal } from "../ledger/settlement-journal.ts";
import type { Ledger } from "../ledger/types.ts";
import type { Published } from "../published/snapshot.ts";
import type { Registry } from "../registry/registry.ts";
import type { Store } from "../store/store.ts";
import type { Metrics } from "./metrics.ts";

export interface KeyInfo {
  id: string;
  name: string;
  scopes: string[];
}

export interface AppContext {
  settings: Settings;
  store: Store;
  ledger: Ledger;
  /** Settlements the ledger could not take yet, kept and retried (none in unit tests of routes). */
  settlements?: SettlementJournal;
  registry: Registry;
  published: Published;
  metrics: Metrics;
  /** Access log sink; one JSON object per request. */
  log: (entry: Record<string, unknown>) => void;
  /** Directory of the static map viewer. */
  webDir: string;
}
