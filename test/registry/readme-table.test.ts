// The README's registry table is the registry: every name, canonical variable, units, temporal
// kind and source, regenerated from src/registry/variables.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { registryTable } from "../../src/registry/table.ts";
import { docsText } from "../helpers/docs.ts";

test("README's registry table lists exactly the registry", () => {
  const readme = docsText();
  const m = /<!-- registry:start -->\n([\s\S]*?)\n<!-- registry:end -->/.exec(readme);
  assert.ok(m, "README has the registry markers");
  assert.equal(m[1], registryTable(), "regenerate with: node -e 'import(\"./src/registry/table.ts\")...'");
});
