import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";

const BIN = resolve(import.meta.dirname, "../../bin/gridcast");
const work = mkdtempSync(join(tmpdir(), "gridcast-cli-sample-"));
after(() => rmSync(work, { recursive: true, force: true }));

function gridcast(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // A scratch cwd and no GRIDCAST_* variables: no project settings leak into the run.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GRIDCAST_")));
    execFile(process.execPath, [BIN, ...args], { cwd: work, env }, (err, stdout, stderr) => {
      done({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

test("sample --json writes the store and prints its summary", async () => {
  const out = join(work, "store");
  const r = await gridcast(["sample", "--out", out, "--preset", "tiny", "--seed", "5", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.preset, "tiny");
  assert.equal(summary.seed, 5);
  assert.deepEqual(
    summary.forecast.map((g: { id: string }) => g.id),
    ["forecast/global", "forecast/europe", "forecast/alps"],
  );
  assert.ok(summary.embeddings.items.length > 0);
  assert.ok(existsSync(join(out, "forecast/global/zarr.json")));

  const again = await gridcast(["sample", "--out", out, "--preset", "tiny"]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already exists.*--force/);

  const forced = await gridcast(["sample", "--out", out, "--preset", "tiny", "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /forecast\/europe\s+zarr v2/);
});

test("invalid preset or seed exits 2 with one clear line", async () => {
  for (const args of [
    ["--preset", "huge"],
    ["--seed", "-3"],
    ["--seed", "abc"],
  ]) {
    const r = await gridcast(["sample", "--out", join(work, "never"), ...args]);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /^gridcast: --(preset|seed)/);
  }
  assert.equal(existsSync(join(work, "never")), false);
});
