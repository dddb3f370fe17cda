// The README's usage examples, run as written against a real server: every sh block with bash,
// every python block with Debian's python3 (xarray + zarr 2) and with today's xarray + zarr 3, every
// js block with node.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, PYTHON, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { zarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "../pipeline/build-fixture.ts";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const section = readme.slice(readme.indexOf("<!-- examples:start -->"), readme.indexOf("<!-- examples:end -->"));
const blocks = [...section.matchAll(/```(sh|python|js)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));

let storeDir: string;
let srv: TestServer;
let env: NodeJS.ProcessEnv;
const work = tempDir();

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  await build({
    store: storeDir,
    out: join(srv.dir, "output"),
    maxZoom: 3,
    groups: ["forecast/global"],
    vars: ["t2m"],
  });
  // The key an operator hands out: `gridcast keys create` with its defaults (10 requests/s, every
  // scope), credits aside (latents are metered). The examples run as written at that rate.
  const created = await run(
    process.execPath,
    [join(ROOT, "bin/gridcast"), "keys", "create", "--db", join(srv.dir, "ledger.db"), "--credits", "1000", "--json"],
    { cwd: work, encoding: "utf8", timeout: 60_000 },
  );
  const { key, record } = JSON.parse(created.stdout) as { key: string; record: { rate: number; scopes: string[] } };
  assert.equal(record.rate, 10, "keys create's default rate");
  assert.deepEqual([...record.scopes].sort(), ["embeddings", "weather"]);
  env = { ...process.env, GRIDCAST: srv.url, KEY: key };
});
after(async () => {
  await srv.close();
  cleanup(storeDir, work);
});

describe("README examples", () => {
  test("there are examples in every language", () => {
    assert.deepEqual([...new Set(blocks.map((b) => b.lang))].sort(), ["js", "python", "sh"]);
  });
  blocks.forEach((b, i) => {
    // Asynchronous on purpose: the server answering these examples runs in this process.
    test(`example ${i + 1} (${b.lang}) runs`, async () => {
      const opts = { cwd: work, env, encoding: "utf8" as const, timeout: 60_000 };
      let out: string;
      if (b.lang === "sh") out = (await run("bash", ["-euo", "pipefail", "-c", b.code], opts)).stdout;
      else if (b.lang === "python") {
        out = (await run(PYTHON, ["-c", b.code], opts)).stdout;
        // The same example with the client generation most Python users run today.
        const py3 = zarr3Python("the README's Python example");
        if (py3) {
          const now = (await run(py3, ["-c", b.code], opts)).stdout;
          assert.equal(now, out, "xarray + zarr 3 prints what xarray + zarr 2 prints");
        }
      } else {
        // Inside the project so that "zarrita" resolves from node_modules.
        const dir = join(ROOT, "test-artifacts");
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `readme-example-${i}.mjs`);
        writeFileSync(file, b.code);
        out = (await run(process.execPath, [file], opts)).stdout;
      }
      assert.ok(out.trim().length > 0, "the example printed something");
      if (b.code.includes("/point?")) assert.match(out, /"var":"t2m"/);
      if (b.code.includes("x-svc-field")) assert.match(out, /x-svc-field: \{/i);
      // The locate example finds an item, as the README says (in the tiny store as in the demo).
      if (b.code.includes("/locate?")) assert.match(out, /"available":\s*true/);
    });
  });
});
