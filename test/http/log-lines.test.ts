// The access log's line writer (src/http/log-lines.ts): lines batched into few writes, in order,
// handed over by a timer when the server is quiet and at once past 64 KiB, and written by a
// process that exits without the graceful stop, to a file of its own or to stdout.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, test } from "node:test";
import { FLUSH_MS, lineLog } from "../../src/http/log-lines.ts";
import { cleanup, tempDir, until } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const dir = tempDir();
after(() => cleanup(dir));

/** A Writable that keeps each write it is given, with when it came. */
function recorder() {
  const writes: { text: string }[] = [];
  const out = new Writable({
    write(chunk, _enc, done) {
      writes.push({ text: String(chunk) });
      done();
    },
  });
  return { out, writes };
}

test("a burst of lines goes out as one write, in order, by the timer alone; the record may change after", async () => {
  const { out, writes } = recorder();
  const log = lineLog(out, false);
  for (let i = 0; i < 200; i++) {
    const record: Record<string, unknown> = { i };
    log(record);
    record.i = -1;
  }
  assert.equal(writes.length, 0, "nothing is written per line");
  // FLUSH_MS on a quiet machine; a loaded one may run the timer late.
  await until("the timer's write", () => writes.length > 0 || undefined, 10_000);
  await new Promise((r) => setTimeout(r, FLUSH_MS * 2));
  assert.equal(writes.length, 1);
  const lines = writes[0].text.trimEnd().split("\n");
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).i),
    Array.from({ length: 200 }, (_, i) => i),
  );
  await log.close();
});

test("past 64 KiB pending, the lines go out at once, not after the timer", async () => {
  const { out, writes } = recorder();
  const log = lineLog(out, false);
  const pad = "x".repeat(1000);
  let n = 0;
  while (writes.length === 0 && n < 200) log({ n: n++, pad });
  assert.equal(writes.length, 1, "written synchronously within the burst");
  assert.ok(n > 60 && n < 70, `${n} lines of ~1 KB before the write`);
  log({ n: n++, pad });
  await log.close();
  const all = writes
    .map((w) => w.text)
    .join("")
    .trimEnd()
    .split("\n");
  assert.deepEqual(
    all.map((l) => JSON.parse(l).n),
    Array.from({ length: n }, (_, i) => i),
  );
});

test("a process that exits without the graceful stop still writes its pending lines (a file of its own, stdout)", () => {
  const file = join(dir, "exit.log");
  const script = `
    import { createWriteStream } from "node:fs";
    import { lineLog } from "./src/http/log-lines.ts";
    const stream = createWriteStream(${JSON.stringify(file)}, { flags: "a" });
    await new Promise((ok) => stream.once("open", ok));
    const toFile = lineLog(stream, true);
    const toStdout = lineLog(process.stdout, false);
    for (let i = 0; i < 5; i++) { toFile({ i }); toStdout({ i }); }
    process.exit(0);
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const parse = (t: string) =>
    t
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).i);
  assert.deepEqual(parse(readFileSync(file, "utf8")), [0, 1, 2, 3, 4]);
  assert.deepEqual(parse(r.stdout), [0, 1, 2, 3, 4]);
});
