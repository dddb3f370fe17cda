// What some tests need from the machine: Chromium and a PostgreSQL server. `npm test` installs or
// starts them first (bin/test-prereqs.sh); a test run without them fails with one line naming the
// missing piece and the fix — never a skip that would hide a whole area.
import { existsSync } from "node:fs";
import pg from "pg";

export const PG_ADMIN = process.env.GRIDCAST_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const CHROMIUM = "/usr/bin/chromium";
/**
 * Chromium's flags for the browser tests: headless as root, no GPU, and nothing that reaches
 * outside (without the background-networking flags Chromium tries to and logs errors).
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const FIX = "run `bash bin/test-prereqs.sh` (npm test does; as root it installs or starts what is missing)";

function shown(url: string): string {
  const u = new URL(url);
  u.password = "";
  return u.toString();
}

/** A connected client on the admin database, or an error saying how to get one. */
export async function pgAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (e) {
    throw new Error(`PostgreSQL is not reachable at ${shown(PG_ADMIN)} (${(e as Error).message}); ${FIX}`);
  }
  return client;
}

export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is not installed; ${FIX}`);
}
