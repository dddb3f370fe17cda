// pathParts: a request path's segments and key, kept per path for the requests that ask for the
// same tiles again and again, and answering exactly as segmentsOf and a join do.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pathParts, segmentsOf } from "../../src/published/static.ts";

test("the same answer as segmentsOf, kept and shared per path, frozen", () => {
  for (const path of ["/tiles/a/1/2/3.png", "/", "/legends/", "/catalog.json"]) {
    const first = pathParts(path);
    assert.ok(first, path);
    assert.deepEqual(first.parts, segmentsOf(path), path);
    assert.equal(first.key, segmentsOf(path)?.join("/"));
    // Kept: the second request of a path gets the very same object, which no one can change.
    assert.equal(pathParts(path), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.parts));
    assert.throws(() => first.parts.push("x"), TypeError);
  }
});

test("a refused path stays refused, kept or not", () => {
  for (const path of ["/.env", "//x//y.json", "/a/../b", "/a\\b.png", "/tiles/.hidden/1.png"]) {
    assert.equal(segmentsOf(path), undefined, path);
    assert.equal(pathParts(path), undefined, path);
    assert.equal(pathParts(path), undefined, `${path}, again`);
  }
});

test("bounded: a long path is answered but not kept, and many paths never grow the memo past its size", () => {
  const long = `/tiles/${"a".repeat(600)}.png`;
  const a = pathParts(long);
  assert.deepEqual(a?.parts, segmentsOf(long));
  assert.notEqual(pathParts(long), a, "a path over the length kept is split again each time");
  const early = pathParts("/tiles/early.png");
  for (let i = 0; i < 5000; i++) pathParts(`/tiles/${i}.png`);
  // The memo started again empty at its bound: the early entry was dropped (a new, equal object).
  const again = pathParts("/tiles/early.png");
  assert.notEqual(again, early);
  assert.deepEqual(again, early);
});
