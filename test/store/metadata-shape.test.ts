// Degenerate array metadata is recognised when it is read: zero or negative sizes, a chunk shape
// with a 0, mismatched ranks and absurd sizes each get a reason instead of a decode attempt.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_CHUNK_ELEMENTS, shapeProblem } from "../../src/store/metadata.ts";

test("sound shapes pass; degenerate ones are named", () => {
  assert.equal(shapeProblem([2, 7, 91, 180], [1, 7, 91, 180]), undefined);
  assert.equal(shapeProblem([], []), undefined); // a scalar, as cfgrib writes time
  assert.match(shapeProblem([2, 0, 10], [1, 1, 10])!, /zero or negative size/);
  assert.match(shapeProblem([2, -3, 10], [1, 1, 10])!, /zero or negative size/);
  assert.match(shapeProblem([2, 3, 10], [1, 0, 10])!, /chunk shape .* zero or negative/);
  assert.match(shapeProblem([2, 3, 10], [1, 3])!, /dimensions/);
  assert.match(shapeProblem([2, 3.5, 10], [1, 3, 10])!, /not a list of integers/);
  assert.match(shapeProblem("big", [1])!, /not a list of integers/);
  assert.match(shapeProblem([2 ** 41, 10], [1, 10])!, /absurdly large/);
  assert.match(shapeProblem([4096, 4096, 16], [4096, 4096, 16])!, /above the limit/);
  assert.ok(4096 * 4096 * 16 > MAX_CHUNK_ELEMENTS);
});
