// The project's documentation as the tests read its statements: the README and every page under
// docs/ (the README is the front page; the detail lives in docs/), joined in a fixed order.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "../..");

/** README.md, then docs/*.md by name, as one text. */
export function docsText(): string {
  const pages = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => readFileSync(join(ROOT, "docs", f), "utf8"));
  return [readFileSync(join(ROOT, "README.md"), "utf8"), ...pages].join("\n\n");
}
