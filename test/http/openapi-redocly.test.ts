// The OpenAPI document passes Redocly's recommended rules (the devDependency @redocly/cli, run
// offline on the document the server serves), with the one exception redocly.yaml names: the
// Zarr store root's trailing slash, which must stay the only path ending in one.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { openapiDocument } from "../../src/http/openapi.ts";
import { allRoutes } from "../../src/http/routes/index.ts";
import { tempDir } from "../helpers/harness.ts";

const ROOT = resolve(import.meta.dirname, "../..");

test("Redocly's recommended rules pass on the OpenAPI document", { timeout: 120_000 }, async () => {
  const doc = openapiDocument(allRoutes(), { version: "0.0.0" }) as { paths: Record<string, unknown> };
  assert.deepEqual(
    Object.keys(doc.paths).filter((p) => p.endsWith("/")),
    ["/data/datasets/{id}/zarr/"],
  );
  const dir = tempDir("gridcast-redocly-");
  try {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(doc));
    const run = promisify(execFile);
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
    const out = await run(
      process.execPath,
      [join(ROOT, "node_modules/@redocly/cli/bin/cli.js"), "lint", "--config", join(ROOT, "redocly.yaml"), file],
      { env, encoding: "utf8", timeout: 110_000 },
    ).catch((e: { stdout?: string; stderr?: string }) => assert.fail(`redocly lint failed:\n${e.stderr}${e.stdout}`));
    assert.doesNotMatch(`${out.stdout}${out.stderr}`, /warning|error/i);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
