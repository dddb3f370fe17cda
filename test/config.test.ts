// Settings precedence: defaults < gridcast.config.json < GRIDCAST_* environment < flags.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { DEFAULTS, loadSettings } from "../src/config.ts";
import { ConfigError } from "../src/errors.ts";
import { cleanup, tempDir } from "./helpers/harness.ts";

const dir = tempDir();
after(() => cleanup(dir));

test("each source overrides the one before it", () => {
  assert.equal(loadSettings({ cwd: dir, env: {} }).embeddings_api_max_mb, 32);
  assert.equal(loadSettings({ cwd: dir, env: {} }).default_forecast_group, "forecast/global");
  writeFileSync(join(dir, "gridcast.config.json"), JSON.stringify({ field_export_max_mb: 10, port: 9000 }));
  const fromFile = loadSettings({ cwd: dir, env: {} });
  assert.equal(fromFile.field_export_max_mb, 10);
  assert.equal(fromFile.port, 9000);
  const fromEnv = loadSettings({ cwd: dir, env: { GRIDCAST_FIELD_EXPORT_MAX_MB: "20" } });
  assert.equal(fromEnv.field_export_max_mb, 20);
  assert.equal(fromEnv.port, 9000);
  const fromFlag = loadSettings({
    cwd: dir,
    env: { GRIDCAST_FIELD_EXPORT_MAX_MB: "20" },
    flags: { field_export_max_mb: "30" },
  });
  assert.equal(fromFlag.field_export_max_mb, 30);
  assert.equal(fromFlag.host, DEFAULTS.host);
});

test("bad values and unknown settings are refused with a clear message", () => {
  assert.throws(() => loadSettings({ cwd: dir, env: { GRIDCAST_PORT: "eighty" } }), ConfigError);
  assert.throws(() => loadSettings({ cwd: dir, env: {}, flags: { port: "70000" } }), /port/);
  writeFileSync(join(dir, "bad.json"), JSON.stringify({ fieldExportMaxMb: 1 }));
  assert.throws(
    () => loadSettings({ cwd: dir, env: {}, configFile: "bad.json" }),
    /unknown setting "fieldExportMaxMb"/,
  );
  writeFileSync(join(dir, "broken.json"), "{");
  assert.throws(() => loadSettings({ cwd: dir, env: {}, configFile: "broken.json" }), /not valid JSON/);
  assert.throws(() => loadSettings({ cwd: dir, env: {}, configFile: "missing.json" }), /not found/);
});
