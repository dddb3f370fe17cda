// Exports never hold the event loop for long (issue 53): every byte of bulk work an export does on
// the main thread (its slabs' NaN fill, the copies out of decoded chunks, the GeoTIFF's row flips)
// goes through loop-turns.ts in pieces of at most TURN_BYTES, so /healthz asked meanwhile is
// answered after a few turns' bytes, not behind whole slabs of six exports. Over a real server and
// loopback, counted in bytes granted to turns, never in time; the bodies are byte for byte those
// of the same export alone (a chunk held across the waits is never reused under the copy).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resetTurnStats, TURN_BYTES, turnStats } from "../../src/loop-turns.ts";
import { BIG_EXPORT, bigStore } from "../helpers/big-store.ts";
import { cleanup, testServer } from "../helpers/harness.ts";

const CONCURRENT = 6;
const MIB = 1024 * 1024;
/** Values of the export: the whole globe at 0.2°, two leads, float32. */
const DATA_BYTES = 2 * 901 * 1800 * 4;

let storeDir: string;
before(async () => {
  storeDir = await bigStore();
});
after(() => cleanup(storeDir));

// read_slab_mb 4: a lead (6.5 MB) goes in bands of rows through the chunk cache; 8: whole leads
// through a scan's own decoded chunks. Both fill and copy on the main thread; a GeoTIFF flips too.
for (const slabMb of [4, 8]) {
  for (const [format, passes] of [
    ["npy", 2],
    // The flip swaps row pairs: of 901 rows, the middle one stays.
    ["tiff", 2 + 900 / 901],
  ] as const) {
    test(`${CONCURRENT} concurrent ${format} exports (${slabMb} MiB slabs) do their main-thread work in bounded turns`, async () => {
      const srv = await testServer(storeDir, { read_slab_mb: slabMb });
      try {
        const key = await srv.key(["weather"]);
        const url = srv.url + BIG_EXPORT.replace("/npy?", `/${format}?`);
        const headers = { "X-API-Key": key };
        const alone = Buffer.from(await (await fetch(url, { headers })).arrayBuffer());
        resetTurnStats();
        let done = false;
        const exports = Promise.all(
          Array.from({ length: CONCURRENT }, async () => {
            const r = await fetch(url, { headers });
            assert.equal(r.status, 200);
            return Buffer.from(await r.arrayBuffer());
          }),
        ).finally(() => (done = true));
        // /healthz back to back: the bytes of bulk work granted between two answers.
        const between: number[] = [];
        let last = 0;
        while (!done) {
          const r = await fetch(`${srv.url}/healthz`);
          await r.arrayBuffer();
          assert.equal(r.status, 200);
          const now = turnStats().paced;
          between.push(now - last);
          last = now;
        }
        const bodies = await exports;
        for (const b of bodies) assert.ok(b.equals(alone), "a concurrent export differs from the same export alone");
        const stats = turnStats();
        assert.ok(
          stats.paced >= passes * CONCURRENT * DATA_BYTES,
          `${(stats.paced / MIB).toFixed(1)} MiB went through turns, ${passes.toFixed(3)} passes over ` +
            `${((CONCURRENT * DATA_BYTES) / MIB).toFixed(1)} MiB expected: some bulk work ran unpaced`,
        );
        assert.ok(stats.largest <= TURN_BYTES, `a turn was granted ${stats.largest} bytes`);
        assert.ok(between.length >= 3, `/healthz answered ${between.length} times during the exports`);
        // A /healthz round trip over loopback takes a handful of turns; unpaced, six exports' first
        // slabs (tens of MiB) ran before the first answer.
        const worst = Math.max(...between);
        assert.ok(
          worst <= 16 * TURN_BYTES,
          `${(worst / MIB).toFixed(1)} MiB of exports ran between two /healthz answers`,
        );
      } finally {
        await srv.close();
      }
    });
  }
}
