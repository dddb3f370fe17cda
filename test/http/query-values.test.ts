// queryValues splits a plain ASCII query itself and hands anything with escapes, '+' or non-ASCII
// text to URLSearchParams: both ways must give exactly what URLSearchParams gives.
import assert from "node:assert/strict";
import { test } from "node:test";
import { queryValues } from "../../src/http/params.ts";

function reference(url: string): [string, string[]][] {
  const q = url.indexOf("?");
  const out = new Map<string, string[]>();
  if (q >= 0) {
    for (const [k, v] of new URLSearchParams(url.slice(q + 1))) out.set(k, [...(out.get(k) ?? []), v]);
  }
  return [...out];
}

test("plain and escaped queries split exactly as URLSearchParams splits them", () => {
  const fixed = [
    "/point",
    "/point?",
    "/point??",
    "/point???a=1",
    "/point?lat=48.1&lon=11.6&var=t2m",
    "/point?lat=1&lat=2&&=x&y&z=&=",
    "/point?a=b=c&&&d",
    "/point?a=%41&b=+c",
    "/point?n=%zz&m=%",
    "/point?é=ü&x=\ud800",
    "/point?var=t2m;x=1&k=a?b",
  ];
  for (const url of fixed) assert.deepEqual([...queryValues(url)], reference(url), url);
  // Random queries over the characters that matter to the split.
  const alphabet = ["a", "b", "=", "&", "?", "%", "%4", "%41", "+", " ", "é", "\ud800", ";", "1", "."];
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < 20_000; i++) {
    let url = "/p?";
    for (let j = rnd(12); j > 0; j--) url += alphabet[rnd(alphabet.length)];
    assert.deepEqual([...queryValues(url)], reference(url), JSON.stringify(url));
  }
});
