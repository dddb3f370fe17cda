// A Python helper script as a reader of stores: JSON in on stdin, JSON out on stdout. Tests use it
// to ask xarray (Debian's, or the zarr 3 virtualenv's) what a store holds, in one batch per call.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";

/** Runs `python script ...args` with `input` as JSON on stdin; its stdout parsed, or a failed assertion with its stderr. */
export async function pythonJson<T>(python: string, script: string, args: string[], input: unknown): Promise<T> {
  const child = execFile(python, [script, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
  child.stdin!.end(JSON.stringify(input));
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const code = await new Promise((ok) => child.on("close", ok));
  assert.equal(code, 0, err);
  return JSON.parse(out) as T;
}
