// `gridcast keys` end to end: the real binary in a child process against a temp sqlite ledger.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { UnauthorizedError } from "../../src/errors.ts";
import { openLedger } from "../../src/ledger/open.ts";

const BIN = fileURLToPath(new URL("../../bin/gridcast", import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function gridcast(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    // cwd is the temp dir so no gridcast.config.json of the checkout leaks in.
    execFile(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err.code as number) ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("gridcast keys", () => {
  let dir: string;
  let db: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "gridcast-cli-"));
    db = join(dir, "ledger.db");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("create prints the key once; list never shows it; revoke and credit work", async () => {
    const made = await gridcast(dir, "keys", "create", "--db", db, "--json", "--scopes", "weather", "--credits", "4");
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stderr, /cannot be shown again/);
    const { key, record } = JSON.parse(made.stdout);
    assert.match(key, /^gck_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual([record.scopes, record.credits], [["weather"], 4]);

    const listed = await gridcast(dir, "keys", "list", "--db", db, "--json");
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout);
    assert.deepEqual(
      keys.map((k: { id: string }) => k.id),
      [record.id],
    );
    assert.ok(!listed.stdout.includes(key.split("_").pop()), "list shows the secret");

    // The printed key opens the ledger the CLI wrote to.
    const ledger = await openLedger(db);
    try {
      assert.equal((await ledger.authenticate(key, "weather")).id, record.id);
      const credited = await gridcast(dir, "keys", "credit", record.id, "--add", "6", "--db", db, "--json");
      assert.deepEqual(JSON.parse(credited.stdout), { id: record.id, balance: 10 });
      const revoked = await gridcast(dir, "keys", "revoke", record.id, "--db", db);
      assert.equal(revoked.code, 0, revoked.stderr);
      await assert.rejects(ledger.authenticate(key, "weather"), UnauthorizedError);
    } finally {
      await ledger.close();
    }
  });

  test("bad arguments: one line on stderr, non-zero exit, nothing created", async () => {
    const cases = [
      [["--scopes", "weather,maps"], /unknown scope "maps"/],
      [["--credits", "-5"], /--credits/],
      [["--expires", "someday"], /--expires/],
    ] as const;
    const runs = await Promise.all(
      cases.map(([args]) => gridcast(dir, "keys", "create", "--db", join(dir, "bad.db"), ...args)),
    );
    runs.forEach((r, i) => {
      assert.notEqual(r.code, 0, `exit code for ${cases[i][0].join(" ")}`);
      assert.equal(r.stdout, "");
      const lines = r.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], cases[i][1]);
    });
    const show = await gridcast(dir, "keys", "show", "000000000000", "--db", db);
    assert.notEqual(show.code, 0);
    assert.equal(show.stderr.trimEnd().split("\n").length, 1, show.stderr);
  });
});
