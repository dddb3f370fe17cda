// deploy/cdn-sync.sh on a real published build: the origin gets the public files with the cache
// headers gridcast itself sends, catalog.json last, and never the embedding indexes; symlinks
// planted in the build (to /etc/passwd, to a private index, under hostile names) are never copied.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { IMMUTABLE, SHORT } from "../../src/published/static.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build, listFiles } from "../pipeline/build-fixture.ts";
import { DEPLOY } from "./pods.ts";

const SCRIPT = join(DEPLOY, "cdn-sync.sh");
const dirs: string[] = [];
let out: string;
let published: string;

before(async () => {
  const store = await sampleStore();
  out = tempDir();
  dirs.push(store, out);
  const r = await build({ store, out, maxZoom: 1, groups: ["global"], vars: ["t2m"], leads: [0, 3] });
  published = join(out, "builds", r.build_id);
});
after(() => cleanup(...dirs));

const sync = (dest: string, env: Record<string, string> = {}) =>
  spawnSync("bash", [SCRIPT, out, dest], { encoding: "utf8", env: { PATH: process.env.PATH, ...env } });

test("a directory origin gets every public file and no embedding index", () => {
  assert.ok(existsSync(join(published, "embeddings")), "the build has private indexes");
  const dest = join(tempDir(), "origin");
  dirs.push(dest);
  const r = sync(dest);
  assert.equal(r.status, 0, r.stderr);
  const want = listFiles(published).filter((f) => !f.startsWith("embeddings/"));
  assert.deepEqual(listFiles(dest), want);
  assert.ok(readFileSync(join(dest, "catalog.json")).equals(readFileSync(join(published, "catalog.json"))));
  assert.equal(readdirSync(dest).includes("embeddings"), false);
});

test("an S3 origin: tiles immutable, the rest short-lived, catalog.json last, indexes excluded", () => {
  const r = sync("s3://bucket/maps", { DRY_RUN: "1" });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split("\n")
    .map((l) => l.trim());
  assert.equal(lines.length, 3);
  // printf %q escapes the spaces and commas of the header values.
  const unq = (s: string) => s.replace(/\\(.)/g, "$1");
  assert.match(lines[0], /^aws s3 sync \S+\/tiles s3:\/\/bucket\/maps\/tiles --no-follow-symlinks --cache-control /);
  assert.ok(unq(lines[0]).endsWith(IMMUTABLE));
  assert.ok(
    unq(lines[1]).includes(
      `--no-follow-symlinks --exclude tiles/* --exclude embeddings/* --exclude catalog.json --cache-control ${SHORT}`,
    ),
    lines[1],
  );
  assert.match(lines[2], /^aws s3 cp \S+\/catalog\.json s3:\/\/bucket\/maps\/catalog\.json --cache-control /);
  assert.ok(unq(lines[2]).endsWith(SHORT));
});

test("no published build: exit 2 with one line", () => {
  const empty = tempDir();
  dirs.push(empty);
  const r = spawnSync("bash", [SCRIPT, empty, "s3://b"], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /has no published build/);
});

test("symlinks in the build are skipped and named, whatever their names; regular files still go", () => {
  const hostile = "-n\nweird name;$(id).json";
  const links = [
    ["passwd.json", "/etc/passwd"],
    [join("tiles", "leak.png"), join(published, "embeddings", "items.json")],
    [hostile, "/etc/passwd"],
    ["etc", "/etc"],
  ];
  for (const [name, target] of links) symlinkSync(target, join(published, name));
  writeFileSync(join(published, `${hostile}.real`), "kept");
  const dest = join(tempDir(), "origin");
  dirs.push(dest);
  try {
    const r = sync(dest);
    assert.equal(r.status, 0, r.stderr);
    const copied = readdirSync(dest, { recursive: true, withFileTypes: true });
    assert.ok(!copied.some((d) => d.isSymbolicLink()), "no symlink at the destination");
    for (const [name] of links) assert.equal(existsSync(join(dest, name)), false, `${name} was copied`);
    assert.equal(readFileSync(join(dest, `${hostile}.real`), "utf8"), "kept");
    const passwd = readFileSync("/etc/passwd");
    for (const d of copied) {
      if (d.isFile()) assert.ok(!readFileSync(join(d.parentPath, d.name)).equals(passwd), `${d.name} is /etc/passwd`);
    }
    // Each skipped link is named on stderr, the hostile one quoted on one line.
    assert.equal((r.stderr.match(/^cdn-sync: skipped symlink /gm) ?? []).length, links.length, r.stderr);
    assert.match(r.stderr, /skipped symlink tiles\/leak\.png/);
  } finally {
    for (const [name] of links) rmSync(join(published, name));
    rmSync(join(published, `${hostile}.real`));
  }
  assert.ok(lstatSync(published).isDirectory());
});
