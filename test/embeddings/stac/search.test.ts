// The STAC search over synthetic indexes written by the build's writer: every matching item once
// (an item meeting several grid cells too), across the antimeridian, paging tokens that stay
// valid when a new cycle's items arrive, and only the partitions a search needs are opened.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { footprintGeometry } from "../../../src/embeddings/stac/documents.ts";
import { stacIndexOf } from "../../../src/embeddings/stac/index.ts";
import { checkSearch, type SearchInput, search } from "../../../src/embeddings/stac/search.ts";
import { monthlyPeriods, type Spec, syntheticBuild, tilesIn } from "../../helpers/stac-index.ts";

const europe = tilesIn(-5, 40, 25, 60, 0.7);
const periods = monthlyPeriods(3);

async function all(specs: Spec[], input: SearchInput) {
  const build = syntheticBuild(specs);
  const index = await stacIndexOf(build);
  const names: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await search(index, checkSearch(index, { ...input, ...(token ? { token } : {}) }));
    names.push(...page.hits.map((h) => h.name));
    token = page.next;
    pages++;
  } while (token && pages < 10_000);
  return { names, pages, build, index };
}

/** Independent truth: the footprint meets the box (closed intervals, no antimeridian crossing). */
const meets = (b: number[], [w, s, e, n]: number[]) => b[0] <= e && b[2] >= w && b[1] <= n && b[3] >= s;

describe("STAC search", () => {
  test("each matching item once, pages of the asked size, whatever the cells an item meets", async () => {
    const specs = [{ tiles: europe, periods }];
    const build = syntheticBuild(specs);
    assert.ok(build.items.length > 600);
    for (const box of [
      [-180, -90, 180, 90],
      [4.9, 44.9, 15.1, 50.1],
      [9.99, 49.99, 10.01, 50.01],
      [0, 45, 0, 45],
    ]) {
      const want = build.items.filter((n) => meets(build.bbox.get(n)!, box));
      if (box[0] === -180) assert.equal(want.length, build.items.length);
      else assert.ok(want.length > 0 && want.length < build.items.length, String(box));
      for (const limit of [1, 7, 1000]) {
        const got = await all(specs, { bbox: box, limit });
        assert.equal(new Set(got.names).size, got.names.length, `no duplicates ${box}`);
        assert.deepEqual([...got.names].sort(), want, `${box} limit ${limit}`);
        assert.equal(got.pages, Math.max(1, Math.ceil(want.length / limit)), `${box} limit ${limit}`);
      }
    }
  });

  test("a bbox across the antimeridian finds items on both sides; the geometry splits there", async () => {
    const east = tilesIn(178, -20, 179.9, -10, 0.5);
    const west = tilesIn(-179.9, -20, -178, -10, 0.5);
    const specs = [{ tiles: [...east, ...west, ...tilesIn(0, -20, 2, -10, 0.5)], periods: periods.slice(0, 1) }];
    const got = await all(specs, { bbox: [179, -20, -179, -10] });
    const tiles = got.names.map((n) => n.split("~").at(-1)!);
    assert.ok(tiles.some((t) => t.startsWith("60")) && tiles.some((t) => t.startsWith("1") && t.length === 4));
    assert.ok(!tiles.some((t) => t.startsWith("31")), "nothing from the other side of the world");
    assert.deepEqual(footprintGeometry([179, 0, -179, 1]).type, "MultiPolygon");
  });

  test("intersects: a polygon equal to a box finds what the box finds; a triangle fewer", async () => {
    const specs = [{ tiles: europe, periods: periods.slice(0, 1) }];
    const box = [5, 45, 15, 50];
    const byBox = await all(specs, { bbox: box });
    const square = {
      type: "Polygon",
      coordinates: [
        [
          [5, 45],
          [15, 45],
          [15, 50],
          [5, 50],
          [5, 45],
        ],
      ],
    };
    assert.deepEqual((await all(specs, { intersects: square })).names.sort(), byBox.names.sort());
    const triangle = {
      type: "Polygon",
      coordinates: [
        [
          [5, 45],
          [15, 45],
          [5, 50],
          [5, 45],
        ],
      ],
    };
    const tri = (await all(specs, { intersects: triangle })).names;
    assert.ok(tri.length > 0 && tri.length < byBox.names.length);
    for (const n of tri) assert.ok(byBox.names.includes(n));
  });

  test("a token stays valid when a new cycle's items arrive: no item of the old pages repeats or goes missing", async () => {
    const before: Spec[] = [{ tiles: europe, periods: periods.slice(0, 2) }];
    const newTiles = tilesIn(25.5, 40, 30, 60, 0.7);
    const afterSpecs: Spec[] = [
      { tiles: [...europe, ...newTiles], periods: periods.slice(0, 2) },
      { tiles: europe, periods: periods.slice(2) },
      { product: "vector", tiles: europe, periods: periods.slice(0, 1) },
    ];
    for (const input of [{ limit: 25 }, { limit: 9, bbox: [0, 44, 20, 56] }] as SearchInput[]) {
      const old = syntheticBuild(before);
      const oldIndex = await stacIndexOf(old);
      const wantOld = (await all(before, input)).names;
      const first = await search(oldIndex, checkSearch(oldIndex, input));
      const fresh = syntheticBuild(afterSpecs);
      const newIndex = await stacIndexOf(fresh);
      const names = first.hits.map((h) => h.name);
      let token = first.next;
      while (token) {
        const page = await search(newIndex, checkSearch(newIndex, { ...input, token }));
        names.push(...page.hits.map((h) => h.name));
        token = page.next;
      }
      assert.equal(new Set(names).size, names.length, "no item twice");
      for (const n of wantOld) assert.ok(names.includes(n), `${n} went missing`);
      assert.ok(names.length > wantOld.length, "new items after the position show up");
    }
  });

  test("datetime over periods of different lengths: every period meeting the time, and only those", async () => {
    const odd = ["2020_01_01_2020_12_31", "2020_03_01_2020_03_31", "2020_06_01_2020_06_30", "2021_01_01_2021_01_31"];
    const tiles = tilesIn(9, 47, 11, 49, 0.7);
    const specs = [{ tiles, periods: odd }];
    for (const [datetime, want] of [
      ["2020-06-15T00:00:00Z", [odd[0], odd[2]]],
      ["2020-03-31T23:59:59Z", [odd[0], odd[1]]],
      ["2020-04-01T00:00:00Z/2020-05-31T00:00:00Z", [odd[0]]],
      ["2020-12-31T23:59:59Z/..", [odd[0], odd[3]]],
      ["../2019-12-31T23:59:59Z", []],
    ] as [string, string[]][]) {
      for (const area of [{}, { bbox: [9, 47, 11, 49] }]) {
        const got = await all(specs, { datetime, ...area, limit: 4 });
        const periods = [...new Set(got.names.map((n) => n.split("~")[5]))].sort();
        assert.deepEqual(periods, want, `${datetime} ${JSON.stringify(area)}`);
        assert.equal(got.names.length, want.length * tiles.length, datetime);
      }
    }
  });

  test("only the partitions a search needs are opened", async () => {
    const build = syntheticBuild([
      { tiles: europe, periods: monthlyPeriods(24) },
      { product: "tokens", tiles: europe, periods: monthlyPeriods(24) },
    ]);
    const index = await stacIndexOf(build);
    build.reads.length = 0;
    const page = await search(
      index,
      checkSearch(index, { collections: ["geofm.tokens"], datetime: "2021-03-10T00:00:00Z", bbox: [9, 47, 11, 49] }),
    );
    assert.ok(page.hits.length > 0);
    assert.deepEqual(build.reads, ["embeddings/stac/geofm~v1.2~tokens~2021_03_01_2021_03_31.json"]);
    for (const h of page.hits) assert.ok(h.name.startsWith("geofm~rf~v1.2~base~tokens~2021_03_01_2021_03_31~"));
    // An area no item meets: every partition is passed over by its bounds, none is read.
    build.reads.length = 0;
    const empty = await search(index, checkSearch(index, { bbox: [-60, -40, -50, -30] }));
    assert.deepEqual([empty.hits, build.reads], [[], []]);
  });
});
