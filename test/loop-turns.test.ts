// Bulk work in bounded turns (src/loop-turns.ts): a request over loopback is answered while many
// jobs of megabytes run, after a few turns' bytes rather than after all of them; no turn is
// granted more than TURN_BYTES (one larger piece alone excepted); pieces go in the order they
// asked, so concurrent jobs take turns. Counted in bytes granted, never in time.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { beforeEach, test } from "node:test";
import { inSlices, pace, resetTurnStats, TURN_BYTES, turnStats } from "../src/loop-turns.ts";
import { docsText } from "./helpers/docs.ts";

const MIB = 1024 * 1024;

beforeEach(() => resetTurnStats());

test("a loopback request is answered after a few turns' bytes while 8 jobs fill 64 MiB", async () => {
  const server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  try {
    // Each job fills 8 MiB of float32 in paced slices, as an export fills its slabs.
    let finished = 0;
    const jobs = Array.from({ length: 8 }, async () => {
      const a = new Float32Array((8 * MIB) / 4);
      await inSlices(a.length, 4, (from, to) => a.fill(Number.NaN, from, to));
      assert.ok(Number.isNaN(a[a.length - 1]));
      finished++;
    });
    const answer = fetch(`http://127.0.0.1:${port}/`).then(async (r) => {
      await r.text();
      return { granted: turnStats().paced, finished };
    });
    const got = await answer;
    await Promise.all(jobs);
    assert.equal(turnStats().paced, 64 * MIB, "every byte of the jobs went through a turn");
    assert.equal(got.finished, 0, "the request waited for a whole job to finish");
    // A fetch over loopback takes a handful of turns of the loop; unpaced, all 64 MiB ran first.
    assert.ok(got.granted <= 16 * TURN_BYTES, `${got.granted / MIB} MiB of the jobs ran before the answer`);
    assert.ok(turnStats().largest <= TURN_BYTES, `a turn was granted ${turnStats().largest} bytes`);
    assert.ok(turnStats().waits > 0);
  } finally {
    server.close();
  }
});

test("concurrent jobs take turns in the order their pieces asked", async () => {
  const order: string[] = [];
  const job = (name: string) =>
    inSlices(4, TURN_BYTES, (from) => {
      order.push(`${name}${from}`);
    });
  await Promise.all([job("a"), job("b"), job("c")]);
  // One piece a turn, each job's next piece behind the others' pending ones.
  assert.deepEqual(order, ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]);
  assert.equal(turnStats().largest, TURN_BYTES);
});

test("small pieces share a turn up to TURN_BYTES; a piece larger than that goes in a turn of its own", async () => {
  const turns: number[][] = [[]];
  let ticking = true;
  // A new entry each time the loop turns (setImmediate chain), to see which pieces shared one.
  const tick = () => {
    if (!ticking) return;
    turns.push([]);
    setImmediate(tick);
  };
  setImmediate(tick);
  const sizes = [TURN_BYTES / 2, TURN_BYTES / 2, TURN_BYTES / 2, 3 * TURN_BYTES, TURN_BYTES / 4];
  await Promise.all(
    sizes.map(async (bytes) => {
      const wait = pace(bytes);
      if (wait) await wait;
      turns[turns.length - 1].push(bytes);
    }),
  );
  ticking = false;
  const used = turns.filter((t) => t.length > 0);
  for (const t of used) {
    const sum = t.reduce((a, b) => a + b, 0);
    assert.ok(sum <= TURN_BYTES || t.length === 1, `a turn held ${t.map((b) => b / MIB)} MiB`);
  }
  assert.equal(turnStats().largest, 3 * TURN_BYTES, "the large piece went alone");
  assert.equal(
    turnStats().paced,
    sizes.reduce((a, b) => a + b, 0),
  );
});

test("the docs state the turn's bound the code uses", () => {
  assert.equal(TURN_BYTES, MIB);
  const docs = docsText().replace(/\s+/g, " ");
  assert.match(docs, /`TURN_BYTES` \(1 MiB\)/);
  assert.match(docs, /at most 1 MiB of such work between two turns/);
});
