// The README's layout section against the tree: every path it names exists, and every folder of
// src/, every module at the top of src/ and every top-level folder of the repository is named, so
// the section cannot drift from the code it describes.
import assert from "node:assert/strict";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { docsText } from "../helpers/docs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
/** Folders that are not the project's own (git-ignored): packages, the addon's build, local stores and test leftovers. */
const NOT_OURS = new Set(["node_modules", "build", "data", "test-artifacts"]);

function layoutPaths(readme: string): string[] {
  const section = /\n## Layout\n[\s\S]*?\n```\n([\s\S]*?)\n```/.exec(readme);
  assert.ok(section, "README has a Layout section with a code block");
  return section[1]
    .split("\n")
    .filter((line) => /^\S/.test(line))
    .map((line) => line.split(/\s+/)[0]);
}

const named = layoutPaths(docsText());

test("the layout section names paths that exist", () => {
  assert.ok(named.length > 20, `${named.length} entries`);
  assert.deepEqual(
    named.filter((p) => !existsSync(join(ROOT, p))),
    [],
  );
});

test("every folder and top-level module of src/ and every top-level folder is named", () => {
  const isDir = (p: string) => statSync(join(ROOT, p)).isDirectory();
  const want = [
    ...readdirSync(join(ROOT, "src")).map((n) => (isDir(`src/${n}`) ? `src/${n}/` : `src/${n}`)),
    ...readdirSync(join(ROOT, "src/store"))
      .filter((n) => isDir(`src/store/${n}`))
      .map((n) => `src/store/${n}/`),
    ...readdirSync(ROOT)
      .filter((n) => !n.startsWith(".") && !NOT_OURS.has(n) && isDir(n) && n !== "src")
      .map((n) => (n === "bin" ? undefined : `${n}/`))
      .filter((n): n is string => n !== undefined),
    ...readdirSync(join(ROOT, "bin")).map((n) => `bin/${n}`),
  ];
  assert.deepEqual(
    want.filter((p) => !named.includes(p)),
    [],
    "missing from the README's layout section",
  );
});
