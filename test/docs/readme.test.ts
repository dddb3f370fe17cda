// The README's usage examples, run as written against a real server: every sh block with bash,
// every python block with Debian's python3 (xarray + zarr 2) and with today's xarray + zarr 3, every
// js block with node. The key is what `keys create` hands out by default (10 requests/s, a burst of
// 10), and the Python example starts with that key's burst used up, as after the shell examples: its
// Zarr reads, export and latent slice (over a dozen requests in a second or two) must be paced by
// the server, not refused, for it to run. With the waiting turned off (`rate_wait_ms` and
// `data_rate_wait_ms` 0) it fails on a 429.
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

/**
 * Run before a Python example, in the same interpreter: import what the example imports (so the
 * time to load xarray does not refill the bucket), then take the key's tokens until its
 * `RateLimit` header says none remain, and run the example at once. Fails if the bucket never
 * empties (the example would then not show pacing at all).
 */
const DRAINED = `
import os, re, sys, urllib.request
import numpy, xarray, zarr, fsspec, aiohttp
def _remaining():
    req = urllib.request.Request(os.environ["GRIDCAST"] + "/data/datasets", headers={"X-API-Key": os.environ["KEY"]})
    with urllib.request.urlopen(req) as r:
        r.read()
        return int(re.search(r"remaining=(\\d+)", r.headers["RateLimit"]).group(1))
for _ in range(40):
    if _remaining() == 0:
        break
else:
    sys.exit("the key's bucket never emptied")
`;

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
        const code = DRAINED + b.code;
        out = (await run(PYTHON, ["-c", code], opts)).stdout;
        // zarr-python 2 reads a refused chunk as fill values: a paced read prints numbers.
        assert.doesNotMatch(out, /\bnan\b/i, "no value of the example is missing");
        // The same example with the client generation most Python users run today.
        const py3 = zarr3Python("the README's Python example");
        if (py3) {
          const now = (await run(py3, ["-c", code], opts)).stdout;
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
