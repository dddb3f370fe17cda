// Item names, prefixes, periods and the listing cursor, without a server.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { embeddingFamilies, encodeCursor, listItems } from "../../src/embeddings/catalogue.ts";
import { type ItemRef, parseItemName, parseItemPath, parsePrefix } from "../../src/embeddings/names.ts";
import { InvalidParameterError } from "../../src/errors.ts";
import { expectedItems } from "./fixtures.ts";

const GOOD = "geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32TNS";

const rejects = (fn: () => unknown, param: string) =>
  assert.throws(fn, (e: unknown) => e instanceof InvalidParameterError && e.extensions.param === param);

describe("item names", () => {
  test("path and name round-trip for every generated item", () => {
    for (const name of expectedItems()) {
      const ref = parseItemName(name);
      assert.equal(ref.path.replaceAll("/", "~"), name);
      assert.deepEqual(parseItemPath(ref.path), ref);
    }
    const ref = parseItemName(GOOD);
    assert.deepEqual(
      [ref.family, ref.version, ref.product, ref.period, ref.tile],
      ["geofm", "v1.2", "map", "2026_06_01_2026_08_31", "32TNS"],
    );
  });

  test("malformed names are rejected, naming the parameter", () => {
    for (const bad of [
      "",
      "geofm",
      GOOD.replaceAll("~", "/"),
      GOOD.replace("~rf~", "~xx~"),
      GOOD.replace("~base~", "~large~"),
      GOOD.replace("v1.2", "1.2"),
      GOOD.replace("32TNS", "32TIS"), // I is not an MGRS letter
      GOOD.replace("32TNS", "61TNS"),
      GOOD.replace("32TNS", "../etc"),
      GOOD.replace("2026_06_01_2026_08_31", "2026_02_30_2026_08_31"), // no such date
      GOOD.replace("2026_06_01_2026_08_31", "2026_09_01_2026_08_31"), // ends before it starts
      `${GOOD}~extra`,
      `..~${GOOD}`,
      `${GOOD}${"x".repeat(200)}`,
    ]) {
      rejects(() => parseItemName(bad), "name");
    }
    assert.equal(parseItemPath("geofm/rf/v1.2/base/map/zzz/32TNS"), undefined);
  });

  test("prefixes select whole segments", () => {
    assert.equal(parsePrefix("geofm/rf/v1.2/base/map"), "geofm~rf~v1.2~base~map~");
    assert.equal(parsePrefix("geofm/rf/v1.2/base/map/"), "geofm~rf~v1.2~base~map~");
    assert.equal(parsePrefix("geofm"), "geofm~");
    assert.equal(
      parsePrefix("geofm/rf/v1.2/base/map/2026_06_01_2026_08_31"),
      "geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~",
    );
    for (const bad of [
      "",
      "/",
      "geofm/rf",
      "geofm/rf/v1.2/base",
      "geofm/xx/v1.2/base/map",
      "../x",
      "geofm~rf~v1.2~base~map",
    ]) {
      rejects(() => parsePrefix(bad), "prefix");
    }
  });
});

describe("listing and family summary", () => {
  const names = expectedItems();
  const refs = new Map<string, ItemRef>(names.map((n) => [n, parseItemName(n)]));

  test("family prefix does not match a longer family name", () => {
    const more = [...names, "geofmx~rf~v1.2~base~map~2026_06_01_2026_08_31~32TNS"].sort();
    const moreRefs = new Map(more.map((n) => [n, parseItemName(n)]));
    const page = listItems(more, moreRefs, { prefix: "geofm", limit: 1000 });
    assert.equal(page.total, names.filter((n) => n.startsWith("geofm~")).length);
    assert.ok(page.items.every((r) => r.family === "geofm"));
  });

  test("a cursor that is not ours is a 400 on cursor; limits outside 1..1000 on limit", () => {
    rejects(() => listItems(names, refs, { cursor: "not base64!" }), "cursor");
    rejects(() => listItems(names, refs, { cursor: encodeCursor("../../etc/passwd") }), "cursor");
    rejects(() => listItems(names, refs, { limit: 0 }), "limit");
    rejects(() => listItems(names, refs, { limit: 1001 }), "limit");
  });

  test("a cursor whose item vanished in a newer build still continues after it", () => {
    const first = listItems(names, refs, { limit: 5 });
    const gone = first.items[4].name;
    const newer = names.filter((n) => n !== gone);
    const next = listItems(newer, refs, { limit: 5, cursor: first.next_cursor! });
    assert.equal(next.items[0].name, names[5]);
  });

  test("embeddingFamilies counts versions, products, periods and tiles", () => {
    const fams = embeddingFamilies(names);
    assert.deepEqual(
      fams.map((f) => f.family),
      ["geofm", "terramind"],
    );
    for (const f of fams) {
      const mine = names.map((n) => parseItemName(n)).filter((r) => r.family === f.family);
      assert.equal(f.items, mine.length);
      assert.equal(f.tiles, new Set(mine.map((r) => r.tile)).size);
      assert.deepEqual(f.versions, ["v1.2"]);
      for (const p of f.products) {
        const of = mine.filter((r) => r.product === p.product);
        assert.equal(p.items, of.length);
        assert.equal(p.tiles, new Set(of.map((r) => r.tile)).size);
        assert.deepEqual(p.periods, [...new Set(of.map((r) => r.period))].sort());
      }
    }
  });
});
