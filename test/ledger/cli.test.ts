// `gridcast keys` end to end: the real binary in a child process against a temp sqlite ledger.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
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
    // The secret is everything after "gck_<id>_" (base64url: it may hold "_" itself).
    const secret = key.slice(key.indexOf("_", 4) + 1);
    assert.equal(secret.length, 43);
    assert.ok(!listed.stdout.includes(secret), "list shows the secret");

    // The printed key opens the ledger the CLI wrote to.
    const ledger = await openLedger(db);
    try {
      assert.equal((await ledger.authenticate(key, "weather")).id, record.id);
      const credited = await gridcast(dir, "keys", "credit", record.id, "--add", "6", "--db", db, "--json");
      assert.equal(credited.code, 0, credited.stderr);
      assert.deepEqual(JSON.parse(credited.stdout), { id: record.id, balance: 10 });
      const revoked = await gridcast(dir, "keys", "revoke", record.id, "--db", db);
      assert.equal(revoked.code, 0, revoked.stderr);
      await assert.rejects(ledger.authenticate(key, "weather"), (e) => {
        assert.ok(e instanceof UnauthorizedError, String(e));
        return true;
      });
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

describe("gridcast keys: hostile names", () => {
  let dir: string;
  let db: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "gridcast-cli-"));
    db = join(dir, "ledger.db");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // Any control or text-direction character, once the line breaks are taken out.
  const RAW = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

  test("create refuses control and text-direction characters in a name", async () => {
    for (const name of ["a\u001b[2Jb", "bell\u0007", "evil\u202etxt.exe", "c1\u009b31m"]) {
      const r = await gridcast(dir, "keys", "create", "--db", db, "--name", name);
      assert.notEqual(r.code, 0, JSON.stringify(name));
      assert.match(r.stderr, /control or text-direction/);
      assert.equal(r.stdout, "");
    }
    const listed = await gridcast(dir, "keys", "list", "--db", db, "--json");
    assert.deepEqual(JSON.parse(listed.stdout), []);
  });

  test("list and show escape control characters already in the ledger", async () => {
    const made = await gridcast(dir, "keys", "create", "--db", db, "--json", "--name", "plain");
    const { record } = JSON.parse(made.stdout);
    // A ledger written by an older version (or by hand) may hold anything.
    const raw = new DatabaseSync(db);
    raw
      .prepare("UPDATE keys SET name = ? WHERE id = ?")
      .run("x\u001b]0;pwned\u0007\u001b[31m\u202eyz\u009b", record.id);
    raw.close();
    for (const args of [["list"], ["show", record.id]]) {
      const r = await gridcast(dir, "keys", ...args, "--db", db);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout.replaceAll("\n", ""), RAW, `${args[0]} printed a raw control character`);
      assert.ok(r.stdout.includes("x\\x1b]0;pwned\\x07\\x1b[31m\\u202eyz\\x9b"), r.stdout);
    }
  });
});
