// STAC search cost against the number of items: the same searches (limit 10) over a catalogue of
// 20 items and one of 20,000 (the same 20 tiles in Europe plus 980 others around the world, over
// 20 monthly periods; and the same 20 tiles over 1,000 periods), in one run, through the search the /stac routes call (the HTTP layer around
// it costs the same for both). Each figure is microseconds per search over the 20,000 items, the
// baseline the same search over 20; ratio = baseline / figure, so 1.00 is "costs the same".
// A last row shows what a scan would cost: every record's footprint tested, 20,000 against 20.
//   node bench/stac-search.ts [repetitions per round] [rounds]
import { stacIndexOf } from "../src/embeddings/stac/index.ts";
import { checkSearch, type SearchInput, search } from "../src/embeddings/stac/search.ts";
import { monthlyPeriods, syntheticBuild, tilesIn } from "../test/helpers/stac-index.ts";
import { type BenchRow, printRows } from "./lib.ts";

const reps = Number(process.argv[2] ?? 300);
const ROUNDS = Number(process.argv[3] ?? 15);

const region = tilesIn(8, 46, 13, 49.5, 0.4, 20);
const inRegion = new Set(region);
const world = tilesIn(-170, -50, 170, 65, 3.1).filter((t) => !inRegion.has(t));
if (region.length !== 20 || world.length < 980) throw new Error(`tiles: ${region.length} + ${world.length}`);
const periods = monthlyPeriods(20);

const small = syntheticBuild([{ tiles: region, periods: periods.slice(0, 1) }]);
const large = syntheticBuild([{ tiles: [...region, ...world.slice(0, 980)], periods }]);
// The other shape of 20,000 items: the same 20 tiles over 1,000 periods (cycles pile up).
const deepPeriods = monthlyPeriods(1000);
const deep = syntheticBuild([{ tiles: region, periods: deepPeriods }]);
if (small.items.length !== 20 || large.items.length !== 20_000 || deep.items.length !== 20_000) {
  throw new Error("catalogue sizes");
}

const ids = region.slice(0, 10).map((t) => `geofm~rf~v1.2~base~map~${periods[0]}~${t}`);
const searches: [string, SearchInput][] = [
  ["bbox (Alps)", { bbox: [8, 46, 13, 49.5], limit: 10 }],
  ["bbox + datetime", { bbox: [8, 46, 13, 49.5], datetime: "2020-01-15T00:00:00Z", limit: 10 }],
  [
    "intersects polygon",
    {
      intersects: {
        type: "Polygon",
        coordinates: [
          [
            [8, 46],
            [13, 46],
            [13, 49.5],
            [8, 46],
          ],
        ],
      },
      limit: 10,
    },
  ],
  ["collection, first page", { collections: ["geofm.map"], limit: 10 }],
  ["ids (10)", { ids, limit: 10 }],
];

/** µs per search: the best of several rounds, so a round slowed by the JIT or the machine does not count. */
async function perSearch(
  build: typeof small,
  input: SearchInput,
  token?: string,
  hits = 10,
): Promise<() => Promise<number>> {
  const index = await stacIndexOf(build);
  const run = async () => search(index, checkSearch(index, token ? { ...input, token } : input));
  const first = await run();
  if (first.hits.length !== hits) throw new Error(`a bench search found ${first.hits.length}, not ${hits}`);
  return async () => {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) await run();
    return ((performance.now() - t0) * 1000) / reps;
  };
}

/** Rounds alternating the two catalogues; the best round of each. */
async function compare(a: () => Promise<number>, b: () => Promise<number>, rounds = ROUNDS): Promise<[number, number]> {
  let [ba, bb] = [Infinity, Infinity];
  for (let i = 0; i < rounds; i++) {
    ba = Math.min(ba, await a());
    bb = Math.min(bb, await b());
  }
  return [ba, bb];
}

const rows: BenchRow[] = [];
const row = (figure: string, big: number, base: number): BenchRow => ({
  bench: "stac-search",
  figure: `${figure}, 20,000 items (µs)`,
  value: big,
  baseline: "20 items (µs)",
  baselineValue: base,
  ratio: base / big,
  target: "≈ 1",
});
for (const [name, input] of searches) {
  const [base, big] = await compare(await perSearch(small, input), await perSearch(large, input));
  rows.push(row(name, big, base));
}
// A second page (token) of the bbox search.
{
  const input: SearchInput = { bbox: [8, 46, 13, 49.5], limit: 10 };
  const tokenOf = async (b: typeof small) => {
    const index = await stacIndexOf(b);
    return (await search(index, checkSearch(index, { ...input, limit: 5 }))).next!;
  };
  const [base, big] = await compare(
    await perSearch(small, input, await tokenOf(small)),
    await perSearch(large, input, await tokenOf(large)),
  );
  rows.push(row("bbox, a page from a token", big, base));
}
// 20,000 items as 20 tiles over 1,000 periods: the newest period's items, and an area with none.
{
  const latest = (p: string) => `${p.slice(0, 4)}-${p.slice(5, 7)}-15T00:00:00Z`;
  const alps: SearchInput = { bbox: [8, 46, 13, 49.5], limit: 10 };
  const [base, big] = await compare(
    await perSearch(small, { ...alps, datetime: latest(periods[0]) }),
    await perSearch(deep, { ...alps, datetime: latest(deepPeriods.at(-1)!) }),
  );
  rows.push({ ...row("bbox + the newest period", big, base), figure: "bbox + the newest period, 1,000 periods (µs)" });
  const nowhere: SearchInput = { bbox: [-60, -40, -50, -30], limit: 10 };
  const [b0, b1] = await compare(
    await perSearch(small, nowhere, undefined, 0),
    await perSearch(deep, nowhere, undefined, 0),
  );
  rows.push({ ...row("an area with no items", b1, b0), figure: "an area with no items, 1,000 periods (µs)" });
}
// What a scan would cost: every footprint tested against the bbox.
{
  const scan = (b: typeof small) => {
    const boxes = [...b.bbox.values()];
    const t0 = performance.now();
    let n = 0;
    for (let i = 0; i < reps; i++)
      for (const x of boxes) if (x[0] <= 13 && x[2] >= 8 && x[1] <= 49.5 && x[3] >= 46) n++;
    if (n === 0) throw new Error("scan found nothing");
    return ((performance.now() - t0) * 1000) / reps;
  };
  const [base, big] = await compare(
    async () => scan(small),
    async () => scan(large),
    3,
  );
  rows.push({ ...row("a scan of every footprint", big, base), target: undefined, note: "what the index avoids" });
}
printRows(rows);
