// Build progress: one line redrawn in place on a terminal, plain lines now and then in a log.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createProgress } from "../../src/pipeline/progress.ts";

function sink(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
  const parts: string[] = [];
  const w = new Writable({
    write(chunk, _enc, done) {
      parts.push(String(chunk));
      done();
    },
  });
  return Object.assign(w, { isTTY, text: () => parts.join("") });
}

test("on a terminal: a bar with tiles/s and ETA, redrawn on one line", async () => {
  const out = sink(true);
  const p = createProgress({ total: 1000, label: "build x", stream: out });
  p.add(100);
  await sleep(120);
  p.add(150);
  p.finish();
  const text = out.text();
  assert.ok(text.startsWith("\r\u001b[K"), "carriage return and clear line");
  assert.match(text.slice(4), /^build x \[#{6}-{18}\] {2}25% 250\/1000 tiles \d+ tiles\/s ETA \d+s/);
  assert.equal(text.split("\n").length, 2, "one line, ended once");
  assert.ok(text.endsWith("\n"));
});

test("in a log: plain lines at an interval, no control characters", async () => {
  const out = sink(false);
  const p = createProgress({ total: 10, label: "build y", stream: out, logEveryMs: 300 });
  p.add(1);
  assert.equal(out.text(), "", "nothing before the first interval");
  await sleep(350);
  p.add(4);
  p.finish();
  assert.match(out.text(), /^build y: 50% 5\/10 tiles \d+ tiles\/s ETA \d+s\n$/);
});

test("work beyond the planned count is shown as 100 %, never more, with no negative ETA", () => {
  const out = sink(true);
  const p = createProgress({ total: 15, label: "build z", stream: out });
  p.add(18);
  p.finish();
  const last = out.text().split("\r\u001b[K").at(-1)!;
  assert.match(last, /^build z \[#{24}\] 100% 18\/18 tiles \d+ tiles\/s ETA 0s\n$/);
});
