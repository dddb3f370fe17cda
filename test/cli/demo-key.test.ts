// The README on start's demo key: scopes weather and embeddings, 1000 credits to start, kept in
// `demo-key` beside the ledger readable by you only, the same key on every later start, never
// revoked by start; a key revoked by the operator (or a new ledger) gets a new one that is kept.
// Run on a real sqlite ledger through the function start calls.
import assert from "node:assert/strict";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { demoKey, demoKeyFile } from "../../src/cli/start.ts";
import { DEFAULTS } from "../../src/config.ts";
import { openLedger } from "../../src/ledger/open.ts";
import { docsText } from "../helpers/docs.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const _ROOT = join(import.meta.dirname, "../..");
const work = tempDir();
after(() => cleanup(work));

test("README: the demo key is kept beside the ledger, readable by you only, the same until revoked", async () => {
  const readme = docsText().replace(/\s+/g, " ");
  assert.match(readme, /prints a demo key \(scopes weather and embeddings, 1000 credits to start;/);
  assert.match(readme, /keeps it in `data\/demo-key` beside the ledger \(readable by you only\)/);
  assert.match(
    readme,
    /It never revokes a key: if you revoke the demo key \(`gridcast keys revoke`\) or start over with a new ledger, the next start issues a new one and keeps that/,
  );
  assert.equal(demoKeyFile(DEFAULTS), "data/demo-key", "beside the default ledger data/ledger.db");

  const db = join(work, "ledger.db");
  const file = demoKeyFile({ ...DEFAULTS, db });
  assert.equal(file, join(work, "demo-key"));
  const ledger = await openLedger(db);
  try {
    const first = await demoKey(ledger, file);
    assert.equal(first.kept, false);
    assert.equal(first.credits, 1000);
    assert.equal(readFileSync(file, "utf8").trim(), first.key);
    assert.equal(statSync(file).mode & 0o777, 0o600, "readable by you only");
    const record = await ledger.authenticate(first.key, "embeddings");
    assert.deepEqual([...record.scopes].sort(), ["embeddings", "weather"]);

    const again = await demoKey(ledger, file);
    assert.deepEqual([again.key, again.kept], [first.key, true], "every later start: the same key");
    assert.equal(record.revokedAt, null);
    assert.equal((await ledger.authenticate(first.key, "weather")).revokedAt, null, "start revoked nothing");

    // Revoked by the operator: the next start issues a new key and keeps that one.
    await ledger.revokeKey(record.id);
    const renewed = await demoKey(ledger, file);
    assert.equal(renewed.kept, false);
    assert.notEqual(renewed.key, first.key);
    assert.equal(readFileSync(file, "utf8").trim(), renewed.key);
    assert.equal((await demoKey(ledger, file)).key, renewed.key, "and keeps it");
  } finally {
    await ledger.close();
  }

  // A new ledger: the saved key is unknown there, so a new one; a key file left readable to others
  // (made by hand, or by an older version) is narrowed before the new secret goes in.
  writeFileSync(file, "gck_not_a_key_of_this_ledger\n");
  chmodSync(file, 0o644);
  const fresh = await openLedger(join(work, "other.db"));
  try {
    const k = await demoKey(fresh, file);
    assert.equal(k.kept, false);
    assert.equal(readFileSync(file, "utf8").trim(), k.key);
    assert.equal(statSync(file).mode & 0o777, 0o600, "readable by you only after a new key too");
  } finally {
    await fresh.close();
  }
});
